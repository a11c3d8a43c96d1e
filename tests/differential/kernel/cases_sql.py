"""Cases from experimental/kernel_tests/sql_dataset_test.py: SqlDataset on a SQLite database built per case."""

from __future__ import annotations

import os
import sqlite3

from tests.differential.kernel.harness import kcase

SOURCE = "experimental/kernel_tests/sql_dataset_test.py"


def _database(tmp: str) -> str:
    path = os.path.join(tmp, "data.sqlite")
    with sqlite3.connect(path) as db:
        db.executescript(_SCHEMA)
        db.execute("UPDATE students SET favorite_nonsense_word = ? WHERE id = 1", ("n\0nsense",))
        db.execute("UPDATE students SET favorite_nonsense_word = ? WHERE id = 2", ("nonsense\0",))
    return path


_SCHEMA = """
            CREATE TABLE IF NOT EXISTS students (id INTEGER NOT NULL PRIMARY KEY, first_name VARCHAR(100),
                last_name VARCHAR(100), motto VARCHAR(100), school_id VARCHAR(100), favorite_nonsense_word
                VARCHAR(100), desk_number INTEGER, income INTEGER, favorite_number INTEGER,
                favorite_big_number INTEGER, favorite_negative_number INTEGER, favorite_medium_sized_number
                INTEGER, brownie_points INTEGER, account_balance INTEGER, registration_complete INTEGER);
            DELETE FROM students;
            INSERT INTO students VALUES (1, 'John', 'Doe', 'Hi!', '123', '', 9, 0, 2147483647,
                9223372036854775807, -2, 32767, 0, 0, 1);
            INSERT INTO students VALUES (2, 'Jane', 'Moe', 'Hi again!', '1000', '', 127, -20000,
                -2147483648, -9223372036854775808, -128, -32768, 0, 65535, 0);
            CREATE TABLE IF NOT EXISTS people (id INTEGER NOT NULL PRIMARY KEY, first_name VARCHAR(100),
                last_name VARCHAR(100), state VARCHAR(100));
            DELETE FROM people;
            INSERT INTO people VALUES (1, 'Benjamin', 'Franklin', 'Pennsylvania');
            INSERT INTO people VALUES (2, 'John', 'Doe', 'California');
            CREATE TABLE IF NOT EXISTS townspeople (id INTEGER NOT NULL PRIMARY KEY, first_name VARCHAR(100),
                last_name VARCHAR(100), victories FLOAT, accolades FLOAT, triumphs FLOAT);
            DELETE FROM townspeople;
            INSERT INTO townspeople VALUES (1, 'George', 'Washington', 20.00, 1331241.321342132321324589798264627463827647382647382643874, 9007199254740991.0);
            INSERT INTO townspeople VALUES (2, 'John', 'Adams', -19.95, 1331241321342132321324589798264627463827647382647382643874.0, 9007199254740992.0);
            """


def _sql(L, tmp, query, types):
    dtypes = tuple(getattr(L, t) if t != "string" else L.string for t in types)
    return L.experimental.SqlDataset("sqlite", _database(tmp), query, dtypes)


QUERIES = {
    "read_result_set": ("SELECT first_name, last_name, motto FROM students ORDER BY first_name DESC", ("string",) * 3),
    "join": (
        "SELECT students.first_name, state, motto FROM students INNER JOIN people ON students.first_name = "
        "people.first_name AND students.last_name = people.last_name",
        ("string",) * 3,
    ),
    "null_terminator": (
        "SELECT first_name, last_name, favorite_nonsense_word FROM students ORDER BY first_name DESC",
        ("string",) * 3,
    ),
    "empty_result": (
        "SELECT first_name, last_name, motto FROM students WHERE first_name = 'Nonexistent'",
        ("string",) * 3,
    ),
    "int8": ("SELECT first_name, desk_number FROM students ORDER BY first_name DESC", ("string", "int8")),
    "int8_negative_and_zero": (
        "SELECT first_name, income, favorite_negative_number FROM students WHERE first_name = 'John' "
        "ORDER BY first_name DESC",
        ("string", "int8", "int8"),
    ),
    "int8_max_values": (
        "SELECT desk_number, favorite_negative_number FROM students ORDER BY first_name DESC",
        ("int8", "int8"),
    ),
    "int16_max_values": (
        "SELECT first_name, favorite_medium_sized_number FROM students ORDER BY first_name DESC",
        ("string", "int16"),
    ),
    "int32": ("SELECT first_name, desk_number FROM students ORDER BY first_name DESC", ("string", "int32")),
    "int32_negative_and_zero": (
        "SELECT first_name, income FROM students ORDER BY first_name DESC",
        ("string", "int32"),
    ),
    "int32_max_values": (
        "SELECT first_name, favorite_number FROM students ORDER BY first_name DESC",
        ("string", "int32"),
    ),
    "int32_varchar_as_int": (
        "SELECT first_name, school_id FROM students ORDER BY first_name DESC",
        ("string", "int32"),
    ),
    "int64_max_values": (
        "SELECT first_name, favorite_big_number FROM students ORDER BY first_name DESC",
        ("string", "int64"),
    ),
    "uint8": ("SELECT first_name, desk_number FROM students ORDER BY first_name DESC", ("string", "uint8")),
    "uint16_max_values": (
        "SELECT first_name, account_balance FROM students ORDER BY first_name DESC",
        ("string", "uint16"),
    ),
    "bool": ("SELECT first_name, registration_complete FROM students ORDER BY first_name DESC", ("string", "bool")),
    "float64": (
        "SELECT first_name, last_name, victories FROM townspeople ORDER BY first_name",
        ("string",) * 2 + ("float64",),
    ),
    "float64_large_number": (
        "SELECT first_name, last_name, accolades FROM townspeople ORDER BY first_name",
        ("string",) * 2 + ("float64",),
    ),
    "float64_very_precise": (
        "SELECT first_name, last_name, triumphs FROM townspeople ORDER BY first_name",
        ("string",) * 2 + ("float64",),
    ),
    "columns_and_output_types_mismatch": (
        "SELECT first_name, last_name FROM students ORDER BY first_name DESC",
        ("string",) * 3,
    ),
    "insert_query": (
        "INSERT INTO students (first_name, last_name, motto) VALUES ('Foo', 'Bar', 'Baz')",
        ("string",) * 3,
    ),
    "invalid_column_name": (
        "SELECT first_name, last_name, fake_column FROM students ORDER BY first_name DESC",
        ("string",) * 3,
    ),
    "syntax_error": (
        "SELEmispellECT first_name, last_name, motto FROM students ORDER BY first_name DESC",
        ("string",) * 3,
    ),
}


@kcase(SOURCE, params=QUERIES)
def sql_dataset(L, tmp, query_and_types):
    query, types = query_and_types
    return _sql(L, tmp, query, types)


@kcase(SOURCE + "::testReadResultSetWithInvalidDriverName")
def sql_invalid_driver(L, tmp):
    return L.experimental.SqlDataset("sqlfake", _database(tmp), "SELECT first_name FROM students", (L.string,))


@kcase(SOURCE + "::testReadResultSet (repeated)")
def sql_repeated(L, tmp):
    return _sql(L, tmp, QUERIES["read_result_set"][0], ("string",) * 3).repeat(2)

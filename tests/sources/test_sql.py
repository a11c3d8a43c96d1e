"""SqlDataset (pf.experimental.SqlDataset): rows, dtypes, resume and errors; tf.data's cases are in
tests/differential/kernel/cases_sql.py."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

import parafeed as pf


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "rows.sqlite")
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (id INTEGER, name TEXT, score REAL)")
        connection.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, f"n{i}", i / 4) for i in range(50)])
    return path


def test_rows_come_as_tuples_of_the_output_types(db):
    ds = pf.experimental.SqlDataset(
        "sqlite", db, "SELECT id, name, score FROM t ORDER BY id", (pf.int32, pf.string, pf.float32)
    )
    rows = list(ds.as_numpy_iterator())
    assert len(rows) == 50 and rows[3] == (3, b"n3", 0.75)
    assert [type(v) for v in rows[0]] == [np.int32, bytes, np.float32]
    assert ds.element_spec == (pf.TensorSpec((), pf.int32), pf.TensorSpec((), pf.string), pf.TensorSpec((), pf.float32))
    assert [int(x) for x in pf.experimental.SqlDataset("sqlite", db, "SELECT id FROM t WHERE id < 3", pf.int64)] == [
        0,
        1,
        2,
    ]


def test_it_resumes_and_reads_nothing_it_does_not_need(db):
    ds = pf.experimental.SqlDataset("sqlite", db, "SELECT id, name FROM t ORDER BY id", (pf.int64, pf.string)).batch(7)
    assert pf.checkpoint.check_restores(ds, stops=[0, 1, 4, 7, 8]) > 0


def test_errors_name_the_query_and_the_fix(db, tmp_path):
    with pytest.raises(pf.errors.InvalidArgumentError, match="only driver is 'sqlite'"):
        pf.experimental.SqlDataset("mysql", db, "SELECT id FROM t", (pf.int64,))
    with pytest.raises(pf.errors.InvalidArgumentError, match="returns 2 column\\(s\\) but output_types has 1"):
        next(iter(pf.experimental.SqlDataset("sqlite", db, "SELECT id, name FROM t", (pf.int64,))))
    with pytest.raises(pf.errors.UnknownError, match="no such column"):
        next(iter(pf.experimental.SqlDataset("sqlite", db, "SELECT nope FROM t", (pf.int64,))))
    with pytest.raises(pf.errors.UnknownError, match="unable to open"):
        next(iter(pf.experimental.SqlDataset("sqlite", str(tmp_path / "missing.db"), "SELECT 1", (pf.int64,))))
    with pytest.raises(pf.errors.InvalidArgumentError, match="SELECT queries only"):
        next(iter(pf.experimental.SqlDataset("sqlite", db, "INSERT INTO t VALUES (1, 'x', 0)", (pf.int64,) * 3)))
    assert len(list(pf.experimental.SqlDataset("sqlite", db, "SELECT id FROM t", (pf.int64,)))) == 50  # unchanged

"""``SqlDataset``: the rows of a SQLite query, as ``tf.data.experimental.SqlDataset`` reads them."""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

from parafeed.core.dataset import UNKNOWN, Dataset
from parafeed.core.graph import SOURCE
from parafeed.core.iterator import DatasetIterator
from parafeed.errors import InvalidArgumentError, UnknownError
from parafeed.values.structure import STRING, TensorSpec, as_dtype, dtype_name


class SqlDataset(Dataset):
    """One element per row of ``query`` on the SQLite database ``data_source_name``: a tuple with one scalar per
    column, of ``output_types`` (strings as ``bytes``).

    The query runs when iteration starts, on a read-only connection. A state saved mid-way restores by running the
    query again and skipping the rows already given: give the query an ``ORDER BY`` for a stable order.

    Example:
        >>> ds = pf.experimental.SqlDataset("sqlite", "people.db", "SELECT name, age FROM people ORDER BY name",
        ...                                 (pf.string, pf.int32))
    """

    kind = SOURCE

    def __init__(self, driver_name: str, data_source_name: str, query: str, output_types: Any, name: str | None = None):
        super().__init__(name=name)
        if driver_name != "sqlite":
            raise InvalidArgumentError(
                f"SqlDataset: driver_name {driver_name!r} is not supported; the only driver is 'sqlite'"
            )
        self._path = str(data_source_name)
        self._query = query
        self._single = not isinstance(output_types, (tuple, list))
        self._dtypes = tuple(as_dtype(t) for t in ((output_types,) if self._single else output_types))

    def _make_iterator(self) -> DatasetIterator:
        return _SqlIterator(self)

    def _element_spec(self) -> Any:
        specs = tuple(TensorSpec((), d) for d in self._dtypes)
        return specs[0] if self._single else specs

    def _cardinality(self) -> int:
        return UNKNOWN

    def _rows(self) -> Any:
        try:
            connection = sqlite3.connect(f"file:{self._path}?mode=ro", uri=True, check_same_thread=False)
            connection.text_factory = bytes
            cursor = connection.execute(self._query)
        except sqlite3.Error as error:
            if "readonly" in str(error):
                raise InvalidArgumentError(
                    f"SqlDataset: the query {self._query!r} returns no columns where output_types has "
                    f"{len(self._dtypes)}; SqlDataset runs SELECT queries only"
                ) from None
            raise UnknownError(f"SqlDataset: query {self._query!r} on {self._path!r} failed: {error}") from error
        columns = 0 if cursor.description is None else len(cursor.description)
        if columns != len(self._dtypes):
            connection.close()
            raise InvalidArgumentError(
                f"SqlDataset: the query {self._query!r} returns {columns} column(s) but output_types has "
                f"{len(self._dtypes)}; give one dtype per selected column"
            )
        return connection, cursor

    def _convert(self, row: tuple) -> Any:
        values = tuple(_value(v, d, i, self._query) for i, (v, d) in enumerate(zip(row, self._dtypes)))
        return values[0] if self._single else values


def _value(value: Any, dtype: np.dtype, column: int, query: str) -> Any:
    if dtype == STRING:
        return value if isinstance(value, bytes) else (b"" if value is None else str(value).encode())
    if isinstance(value, bytes):  # a number stored as text, as SQLite allows
        try:
            value = float(value) if dtype.kind == "f" else int(value)
        except ValueError:
            raise InvalidArgumentError(
                f"SqlDataset: column {column} of {query!r} holds {value!r}, which is not a {dtype_name(dtype)}"
            ) from None
    return np.asarray(0 if value is None else value).astype(dtype)[()]  # integers wrap, as TensorFlow's cast


class _SqlIterator(DatasetIterator):
    def __init__(self, dataset: SqlDataset):
        super().__init__()
        self._dataset = dataset
        self._connection: sqlite3.Connection | None = None
        self._cursor: Any = None
        self._given = 0
        self._done = False

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        if self._cursor is None:
            self._connection, self._cursor = self._dataset._rows()
        row = self._cursor.fetchone()
        if row is None:
            self.close()
            self._done = True
            raise StopIteration
        self._given += 1
        return self._dataset._convert(row)

    def _get_state(self) -> dict:
        return {"rows": self._given, "done": self._done}

    def _set_state(self, state: dict) -> None:
        self.close()
        self._given, self._done = 0, bool(state["done"])
        for _ in range(int(state["rows"]) if not self._done else 0):
            next(self)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._connection = self._cursor = None

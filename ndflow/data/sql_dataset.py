"""`tf.data.experimental.SqlDataset`: the rows of an SQLite query (Python's sqlite3) as tuples of
scalars of `output_types`, with SQLite's conversions as TensorFlow reads columns
(sqlite3_column_int64/double/text: NULL is 0, 0.0 or b"", text to a number takes its leading
number) and TensorFlow's errors."""

from __future__ import annotations

import re
import sqlite3

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data.dataset import DatasetV2

_ALLOWED = tuple(getattr(dtypes, n) for n in ("string", "int8", "int16", "int32", "int64",
                                               "uint8", "uint16", "bool", "float64")
                 if hasattr(dtypes, n))  # uint16 where ndflow has it
_LEADING_INT = re.compile(rb"^\s*[+-]?\d+")
_LEADING_FLOAT = re.compile(rb"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _text(value) -> str:
    value = value.numpy() if hasattr(value, "numpy") else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _as_int(v) -> int:
    if v is None:
        return 0
    if isinstance(v, (int, float)):
        return int(v)
    m = _LEADING_INT.match(v if isinstance(v, bytes) else str(v).encode())
    return int(m.group()) if m else 0


def _as_float(v) -> float:
    if v is None:
        return 0.0
    if isinstance(v, (int, float)):
        return float(v)
    m = _LEADING_FLOAT.match(v if isinstance(v, bytes) else str(v).encode())
    return float(m.group()) if m else 0.0


def _as_bytes(v) -> bytes:
    if v is None:
        return b""
    if isinstance(v, bytes):
        return v
    return (repr(v) if isinstance(v, float) else str(v)).encode()


def _column(value, dtype) -> EagerTensor:
    if dtype is dtypes.string:
        return EagerTensor(np.array(_as_bytes(value), dtype=object), dtype)
    if dtype is dtypes.float64:
        return EagerTensor(torch.tensor(_as_float(value), dtype=torch.float64), dtype)
    if dtype is dtypes.bool:
        return EagerTensor(torch.tensor(_as_int(value) != 0), dtype)
    n = np.array(_as_int(value)).astype(dtype.as_numpy_dtype)  # wraps, as C's casts
    return EagerTensor(torch.from_numpy(np.array(n)), dtype)


@tf_export("data.experimental.SqlDataset", v1=["data.experimental.SqlDataset"])
class SqlDataset(DatasetV2):
    """The rows of `query` run on an SQLite database (`driver_name` "sqlite")."""

    def __init__(self, driver_name, data_source_name, query, output_types):
        driver = _text(driver_name)
        if driver != "sqlite":
            raise tf_errors.InvalidArgumentError(
                None, None, f"The database type, {driver}, is not supported by SqlDataset. The"
                " set of supported databases is: {'sqlite'}. [Op:SqlDataset]")
        self._types = [dtypes.as_dtype(t) for t in flatten(output_types)]
        if any(t not in _ALLOWED for t in self._types):
            raise tf_errors.InvalidArgumentError(
                None, None, "Each element of `output_types_` must be one of: DT_STRING, "
                "DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_BOOL, DT_DOUBLE "
                " [Op:SqlDataset]")
        self._source, self._query = _text(data_source_name), _text(query)
        super().__init__(pack_sequence_as(output_types,
                                          [TensorSpec([], t) for t in self._types]))

    def _iter_flat(self):
        try:
            conn = sqlite3.connect(f"file:{self._source}?mode=rw", uri=True)
        except sqlite3.Error as e:
            raise tf_errors.InvalidArgumentError(
                None, None, f"Sqlite::Open({self._source}) failed: {e}") from None
        try:
            try:
                cursor = conn.execute(self._query)
            except sqlite3.Error as e:
                raise tf_errors.UnknownError(None, None, f"Prepare() failed: {e}: "
                                             f"{self._query}") from None
            n = len(cursor.description or ())
            if n != len(self._types):
                raise tf_errors.InvalidArgumentError(
                    None, None, f"The number of columns in query ({n}) must match the number "
                    f"of elements in output_types ({len(self._types)}).")
            for row in cursor:
                yield tuple(_column(v, t) for v, t in zip(row, self._types))
        finally:
            conn.close()

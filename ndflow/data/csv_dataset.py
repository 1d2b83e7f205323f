"""`tf.data.experimental.CsvDataset`: records of CSV files (RFC 4180 as TensorFlow's CSVDataset
parses it) as tuples of scalars typed by `record_defaults`.

As TensorFlow: fields are split on a one-character `field_delim`; with `use_quote_delim` a
field starting with a double quote is quoted (the delimiter and newlines inside it are data,
`""` is a quote) and a quote inside an unquoted field is an error; an empty field or one equal
to `na_value` takes the column's default, or is an error when the column is required (a
dtype or an empty tensor as its default); records end at `\\n` or `\\r\\n`. Errors are
TensorFlow's InvalidArgumentError messages ("Expect 3 fields but have 2 in record", "Field 0
is required but missing in record!", "Field 1 in record is not a valid int32: x", ...).
"""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data.dataset import DatasetV2

CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)
_INT_RANGE = {dtypes.int32: (-2**31, 2**31 - 1), dtypes.int64: (-2**63, 2**63 - 1)}


def _invalid(message: str) -> tf_errors.InvalidArgumentError:
    return tf_errors.InvalidArgumentError(None, None, message)


def _scalar(value):
    return value.numpy() if hasattr(value, "numpy") else value


def _text(value) -> str:
    value = _scalar(value)
    return value.decode() if isinstance(value, bytes) else str(value)


def filename_list(filenames) -> list:
    """File names from a string, a list of them or a string tensor."""
    value = _scalar(filenames)
    if isinstance(value, np.ndarray):
        value = value.reshape(-1).tolist()
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    return [os.fsdecode(v) if isinstance(v, bytes) else os.fspath(v) for v in value]


def column_default(value, index: int):
    """(dtype, default or None when required) of one `record_defaults` entry."""
    if isinstance(value, dtypes.DType):
        dtype, default = value, None
    else:
        arr = np.asarray(_scalar(value))
        dtype = getattr(value, "dtype", None)
        if arr.dtype.kind in "USO":
            dtype = dtypes.string
        elif not isinstance(dtype, dtypes.DType):  # NumPy values keep their type, Python
            dtype = (dtypes.as_dtype(arr.dtype) if isinstance(value, (np.ndarray, np.generic))
                     else dtypes.int32 if arr.dtype.kind in "iu"  # numbers are int32/float32
                     else dtypes.float32 if arr.dtype.kind == "f" else None)
        if arr.size > 1:
            raise ValueError(f"`record_defaults[{index}]` must be a scalar or an empty "
                             f"tensor, got shape {arr.shape}.")
        default = None if arr.size == 0 else arr.reshape(-1)[0]
        if isinstance(default, str):
            default = default.encode()
    if dtype not in CSV_TYPES:
        raise TypeError(f"`record_defaults[{index}]` has type {dtype!r}: CSV columns are "
                        "float32, float64, int32, int64 or string.")
    return dtype, default


def read_bytes(path: str, compression: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise tf_errors.NotFoundError(None, None, f"{path}; No such file or directory") \
            from None
    except OSError as e:
        raise tf_errors.UnknownError(None, None, f"{path}; {e.strerror}") from None
    try:
        if compression == "GZIP":
            return gzip.decompress(data)
        if compression == "ZLIB":
            return zlib.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise tf_errors.DataLossError(None, None, f"{path}: not a valid {compression} "
                                      f"stream ({e}).") from None
    return data


def split_records(data: bytes, delim: int, quoted: bool):
    """Each record of `data` as its list of raw field bytes (None marks a quoted empty
    field as empty too, so plain bytes)."""
    n, pos = len(data), 0
    quote = 0x22
    while pos < n:
        end = data.find(b"\n", pos)
        end = n if end < 0 else end
        line = data[pos:end]
        if not quoted or b'"' not in line:
            if line.endswith(b"\r"):
                line = line[:-1]
            pos = end + 1
            yield line.split(bytes([delim]))
            continue
        fields, field, i = [], bytearray(), pos  # the quoted path: byte by byte
        while True:
            if i < n and data[i] == quote:
                i += 1
                while True:
                    if i >= n:
                        raise _invalid("Reached end of file without closing quoted field in "
                                       "record")
                    c = data[i]
                    if c == quote:
                        if i + 1 < n and data[i + 1] == quote:
                            field.append(quote)
                            i += 2
                            continue
                        i += 1
                        break
                    field.append(c)
                    i += 1
                if i < n and data[i] not in (delim, 0x0A) and data[i:i + 2] != b"\r\n":
                    raise _invalid("Quote inside a string has to be escaped by another quote")
            else:
                while i < n and data[i] != delim and data[i] != 0x0A:
                    if data[i] == quote:
                        raise _invalid("Unquoted fields cannot have quotes inside")
                    field.append(data[i])
                    i += 1
                if field.endswith(b"\r") and (i >= n or data[i] == 0x0A):
                    del field[-1]
            fields.append(bytes(field))
            field = bytearray()
            if data[i:i + 2] == b"\r\n":
                i += 1
            if i < n and data[i] == delim:
                i += 1
                continue
            pos = i + 1
            break
        yield fields


def convert_field(raw: bytes, dtype, index: int):
    """One field as a Python value of `dtype` (TF's messages when it is not one)."""
    if dtype is dtypes.string:
        return raw
    text = raw.decode("utf-8", "replace")
    try:
        if "_" in text:
            raise ValueError(text)
        if dtype in _INT_RANGE:
            value = int(text.strip())
            lo, hi = _INT_RANGE[dtype]
            if not lo <= value <= hi:
                raise ValueError(text)
            return value
        try:
            return float(text)
        except ValueError:  # strtod also reads C99 hex floats ("0x1p3")
            return float.fromhex(text.strip())
    except ValueError:
        raise _invalid(f"Field {index} in record is not a valid {dtype.name}: {text}") \
            from None


@tf_export("data.experimental.CsvDataset")
class CsvDataset(DatasetV2):
    """The records of CSV files as tuples of scalar tensors (see the module docstring)."""

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None, exclude_cols=None):
        self._files_list = filename_list(filenames)
        self._columns = [column_default(v, i) for i, v in enumerate(record_defaults)]
        kind = "" if compression_type is None else _text(compression_type)
        if kind not in ("", "GZIP", "ZLIB"):
            raise _invalid(f"Unsupported compression_type: {kind}. [Op:CSVDatasetV2]")
        delim = _text(field_delim).encode()
        if len(delim) != 1:
            raise _invalid("field_delim should be only 1 char [Op:CSVDatasetV2]")
        select = [] if select_cols is None else [int(_scalar(c)) for c in select_cols]
        exclude = [] if exclude_cols is None else [int(_scalar(c)) for c in exclude_cols]
        if select and len(select) != len(self._columns):
            raise _invalid("select_cols should match output size [Op:CSVDatasetV2]")
        if select and exclude:
            raise _invalid("Either select_cols or exclude_cols should be empty "
                           "[Op:CSVDatasetV2]")
        for name, cols in (("select_cols", select), ("exclude_cols", exclude)):
            if any(c < 0 for c in cols):
                raise _invalid(f"{name} should be >= 0 [Op:CSVDatasetV2]")
            if any(b <= a for a, b in zip(cols, cols[1:])):
                raise _invalid(f"{name} should be strictly increasing indices "
                               "[Op:CSVDatasetV2]")
        self._kind, self._delim = kind, delim[0]
        self._header, self._quoted = bool(_scalar(header)), bool(_scalar(use_quote_delim))
        self._na = _text(na_value).encode()
        self._select, self._exclude = select, exclude
        super().__init__(tuple(TensorSpec([], d) for d, _ in self._columns))

    def _wanted(self, fields: list) -> list:
        n = len(self._columns)
        if self._select:
            last = self._select[-1]
            if len(fields) <= last:
                raise _invalid(f"Expect {n} fields but have {len(fields)} in record")
            return [fields[c] for c in self._select]
        if self._exclude:
            drop = set(self._exclude)
            fields = [f for c, f in enumerate(fields) if c not in drop]
        if len(fields) < n:
            raise _invalid(f"Expect {n} fields but have {len(fields)} in record")
        if len(fields) > n:
            raise _invalid(f"Expect {n} fields but have more in record")
        return fields

    def _row_values(self, fields: list) -> list:
        """One record's values (TF's errors for a missing required field or a bad number)."""
        out = []
        for i, (raw, (dtype, default)) in enumerate(zip(self._wanted(fields), self._columns)):
            if raw == b"" or (self._na and raw == self._na):
                if default is None:
                    raise _invalid(f"Field {i} is required but missing in record!")
                out.append(default)
            else:
                out.append(convert_field(raw, dtype, i))
        return out

    def _file_columns(self, path: str, records):
        """The file's records as one array per column, converted in bulk; a file with a bad
        record gives the columns of the records before it and the error (raised after
        them, as TF's reader yields them first)."""
        rows, error = [], None
        try:
            for fields in records:
                rows.append(self._wanted(fields))
        except tf_errors.OpError as e:
            error = e
        try:
            return self._bulk(rows), error
        except (ValueError, OverflowError, tf_errors.OpError):
            pass
        values = []  # a bad field: convert row by row up to it, for TF's error and order
        for fields in rows:
            try:
                values.append(self._row_values(fields))
            except tf_errors.OpError as e:
                error = e
                break
        return [_column_array([v[j] for v in values], dtype)
                for j, (dtype, _) in enumerate(self._columns)], error

    def _bulk(self, rows: list) -> list:
        out = []
        for j, (dtype, default) in enumerate(self._columns):
            raw = [r[j] for r in rows]
            missing = [v == b"" or (self._na != b"" and v == self._na) for v in raw]
            if any(missing):
                if default is None:
                    raise ValueError("required field missing")
                fill = default if dtype is dtypes.string else str(default).encode()
                raw = [fill if m else v for v, m in zip(raw, missing)]
            if dtype is dtypes.string:
                out.append(_column_array(raw, dtype))
                continue
            if any(b"_" in v for v in raw):  # Python's number syntax, not strtod's
                raise ValueError("underscore")
            arr = np.array(raw, dtype=bytes)
            if dtype in _INT_RANGE:
                values = arr.astype(np.int64) if len(raw) else np.zeros(0, np.int64)
                lo, hi = _INT_RANGE[dtype]
                if len(raw) and (values.min() < lo or values.max() > hi):
                    raise ValueError("out of range")
                out.append(values.astype(dtype.as_numpy_dtype))
            else:
                out.append(arr.astype(np.float64).astype(dtype.as_numpy_dtype)
                           if len(raw) else np.zeros(0, dtype.as_numpy_dtype))
        return out

    def _files(self):
        """(columns, error) of each file in turn."""
        for path in self._files_list:
            records = split_records(read_bytes(path, self._kind), self._delim, self._quoted)
            if self._header:
                next(records, None)
            yield self._file_columns(path, records)

    def _iter_flat(self):
        dts = [d for d, _ in self._columns]
        for columns, error in self._files():
            # one C call per column makes every row's 0-d tensor (indexing costs ~10x more)
            tensors = [c if d is dtypes.string else torch.from_numpy(c).unbind(0)
                       for c, d in zip(columns, dts)]
            n = len(columns[0]) if columns else 0
            for i in range(n):
                yield tuple(EagerTensor(np.array(t[i], dtype=object) if d is dtypes.string
                                        else t[i], d) for t, d in zip(tensors, dts))
            if error is not None:
                raise error

    def _batches(self, size: int, drop_remainder: bool):
        """Whole batches sliced from the files' column arrays (the `batch` fast path)."""
        dts = [d for d, _ in self._columns]
        pending = None
        for columns, error in self._files():
            pending = columns if pending is None else [
                np.concatenate([a, b]) for a, b in zip(pending, columns)]
            n = len(pending[0])
            full = n - n % size
            for start in range(0, full, size):
                yield tuple(_batch_tensor(c[start:start + size], d)
                            for c, d in zip(pending, dts))
            pending = [c[full:] for c in pending]
            if error is not None:
                raise error
        if pending is not None and len(pending[0]) and not drop_remainder:
            yield tuple(_batch_tensor(c, d) for c, d in zip(pending, dts))


    def _iter_flat_ignoring_errors(self, on_error):
        """`ignore_errors()` of this dataset, as TensorFlow's: a bad record is skipped and
        reading goes on; an unterminated quote ends its file. A file that cannot be read
        is skipped (TensorFlow 2.21 retries it forever)."""
        dts = [d for d, _ in self._columns]
        for path in self._files_list:
            try:
                records = split_records(read_bytes(path, self._kind), self._delim,
                                        self._quoted)
                if self._header:
                    next(records, None)
            except tf_errors.OpError as e:
                on_error(e)
                continue
            while True:
                try:
                    fields = next(records)
                except StopIteration:
                    break
                except tf_errors.OpError as e:
                    on_error(e)
                    break
                try:
                    values = self._row_values(fields)
                except tf_errors.OpError as e:
                    on_error(e)
                    continue
                yield tuple(_row_tensor(v, d) for v, d in zip(values, dts))


def _row_tensor(value, dtype) -> EagerTensor:
    if dtype is dtypes.string:
        return EagerTensor(np.array(value, dtype=object), dtype)
    return EagerTensor(torch.from_numpy(np.array(value, dtype=dtype.as_numpy_dtype)), dtype)


def _column_array(values: list, dtype) -> np.ndarray:
    if dtype is dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.array(values, dtype=dtype.as_numpy_dtype).reshape(-1)


def _batch_tensor(column: np.ndarray, dtype) -> EagerTensor:
    if dtype is dtypes.string:
        return EagerTensor(column.copy(), dtype)
    return EagerTensor(torch.from_numpy(np.ascontiguousarray(column)), dtype)

"""`tf.data.experimental.make_csv_dataset`: CSV files as batches of `(features, label)` with
column names from the header and column types inferred from the first rows, as TensorFlow's.

The pipeline is TensorFlow's: file names (glob matches, sorted) optionally shuffled; one
`CsvDataset` per file interleaved; shuffle; repeat(num_epochs); batch (dropping the last
partial batch when repeating forever, so the batch dimension is static); a map to an
OrderedDict of columns (the label popped out); prefetch.
"""

from __future__ import annotations

import collections
import csv
import glob
import gzip

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.data.csv_dataset import CsvDataset, _scalar, _text
from ndflow.data.dataset import AUTOTUNE, DatasetV2
from ndflow.data.experimental_transforms import IgnoreErrorsDataset


def file_names(file_pattern) -> list:
    """Files matching a glob pattern or a list of them, sorted (TF's _get_file_names)."""
    value = _scalar(file_pattern)
    if isinstance(value, np.ndarray):
        value = value.reshape(-1).tolist()
    patterns = value if isinstance(value, (list, tuple)) else [value]
    if not patterns:
        raise ValueError("Argument `file_pattern` should not be empty.")
    names = []
    for p in patterns:
        p = p.decode() if isinstance(p, bytes) else str(p)
        names.extend(glob.glob(p))
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    return sorted(names)


def _opener(compression_type, encoding):
    kind = "" if compression_type is None else _text(compression_type)
    if kind == "GZIP":
        return lambda name: gzip.open(name, "rt", encoding=encoding, newline="")
    if kind == "ZLIB":
        raise ValueError(f"`compression_type` {compression_type} is not supported for "
                         "probing columns.")
    if kind != "":
        raise ValueError(f"Received unknown `compression_type` {compression_type}. Expected: "
                         "GZIP, ZLIB or  (empty string).")
    return lambda name: open(name, encoding=encoding, newline="")


def _reader(f, field_delim, use_quote_delim):
    return csv.reader(f, delimiter=field_delim,
                      quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)


def infer_column_names(names, field_delim, use_quote_delim, open_fn) -> list:
    """The header row of the first file; every file must have the same."""
    column_names = None
    for name in names:
        with open_fn(name) as f:
            try:
                row = next(_reader(f, field_delim, use_quote_delim))
            except StopIteration:
                raise ValueError("Failed when reading the header line of "
                                 f"{name}. Is it an empty file?") from None
        if column_names is None:
            column_names = row
        elif row != column_names:
            raise ValueError("All input CSV files should have the same column names in the "
                             f"header row. File {name} has different column names.")
    return column_names


def _fits_int(text: str, bits: int) -> bool:
    try:
        v = int(text)
    except ValueError:
        return False
    return -2**(bits - 1) <= v < 2**(bits - 1)


def _fits_float(text: str, dtype) -> bool:
    try:
        return dtype(text) < np.inf
    except (ValueError, OverflowError):
        return False


_CANDIDATES = [(dtypes.int32, lambda s: _fits_int(s, 32)),
               (dtypes.int64, lambda s: _fits_int(s, 64)),
               (dtypes.float32, lambda s: _fits_float(s, np.float32)),
               (dtypes.float64, lambda s: _fits_float(s, np.float64)),
               (dtypes.string, lambda s: True)]


def infer_type(text: str, na_value: str, previous):
    """The least permissive type that holds `text` and every earlier value of the column."""
    if text in ("", na_value):
        return previous
    order = [t for t, _ in _CANDIDATES]
    for i, (dtype, fits) in enumerate(_CANDIDATES):
        if fits(text) and (previous is None or previous in order[:i + 1]):
            return dtype
    return dtypes.string


def infer_column_defaults(names, num_cols, field_delim, use_quote_delim, na_value, header,
                          rows, select, open_fn) -> list:
    columns = list(range(num_cols)) if select is None else select
    inferred = [None] * len(columns)
    seen = 0
    for name in names:
        with open_fn(name) as f:
            reader = _reader(f, field_delim, use_quote_delim)
            row_num = 1
            if header:
                next(reader, None)
                row_num += 1
            for row in reader:
                if rows is not None and seen >= rows:
                    break
                if len(row) != num_cols:
                    raise ValueError(f"Problem inferring types: CSV row {row_num} has "
                                     f"{len(row)} number of fields. Expected: {num_cols}.")
                for j, c in enumerate(columns):
                    inferred[j] = infer_type(row[c], na_value, inferred[j])
                row_num += 1
                seen += 1
    return [np.array([""], dtype=object) if (t or dtypes.string) is dtypes.string
            else np.zeros([1], t.as_numpy_dtype) for t in inferred]


def sorted_column_indices(select_columns, column_names) -> list:
    index = {n: i for i, n in enumerate(column_names)}
    out = []
    for v in select_columns:
        if isinstance(v, (int, np.integer)):
            if v < 0 or v >= len(column_names):
                raise ValueError(f"Column index {v} specified in `select_columns` should be > "
                                 f"0  and <= {len(column_names)}, which is the number of "
                                 "columns.")
            out.append(int(v))
        elif v not in index:
            raise ValueError(f"Column {v} specified in `select_columns` must be of one of the "
                             f"columns: {index.keys()}.")
        else:
            out.append(index[v])
    result = sorted(set(out))
    if len(result) != len(select_columns):
        dupes = {a for a, b in zip(sorted(out), sorted(out)[1:]) if a == b}
        raise ValueError(f"The `select_columns` argument contains duplicate columns: {dupes}.")
    return result


class FilesInterleaveDataset(DatasetV2):
    """The records of per-file datasets, the files in the order a dataset of names gives
    (reshuffled each epoch when it is shuffled), `cycle_length` files read round-robin one
    record at a time (TF's interleave of a dataset per file name, block_length 1)."""

    def __init__(self, names: DatasetV2, files: dict, cycle_length: int):
        self._names, self._files = names, files
        self._cycle = max(1, len(files) if cycle_length == AUTOTUNE else cycle_length)
        super().__init__(next(iter(files.values())).element_spec)

    def _inputs(self):
        return [self._names]

    def _iter_flat(self):
        pending = (self._files[_text(name)] for (name,) in self._names._iter_flat())
        active = []
        while True:
            while len(active) < self._cycle:
                ds = next(pending, None)
                if ds is None:
                    break
                active.append(ds._iter_flat())
            if not active:
                return
            for it in list(active):
                flat = next(it, None)
                if flat is None:
                    active.remove(it)
                else:
                    yield flat


@tf_export("data.experimental.make_csv_dataset")
def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",",
                     use_quote_delim=True, na_value="", header=True, num_epochs=None,
                     shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None, ignore_errors=False,
                     encoding="utf-8"):
    """Batches of CSV rows: an OrderedDict of column tensors, or `(features, label)` with
    `label_name` (see the module docstring for the pipeline)."""
    if num_parallel_reads is None:
        num_parallel_reads = 1
    if prefetch_buffer_size is None:
        prefetch_buffer_size = AUTOTUNE
    names = file_names(file_pattern)
    dataset = DatasetV2.from_tensor_slices(names)
    if shuffle:
        dataset = dataset.shuffle(len(names), shuffle_seed)
    if column_names is None or column_defaults is None:
        open_fn = _opener(compression_type, encoding)
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is "
                             "provided.")
        column_names = infer_column_names(names, field_delim, use_quote_delim, open_fn)
    column_names = list(column_names)
    if len(column_names) != len(set(column_names)):
        s = sorted(column_names)
        dupes = {a for a, b in zip(s, s[1:]) if a == b}
        raise ValueError("Either `column_names` argument or CSV header row contains duplicate "
                         f"column names: {dupes}.")
    if select_columns is not None:
        select_columns = sorted_column_indices(select_columns, column_names)
    if column_defaults is not None:
        column_defaults = list(column_defaults)
    else:
        column_defaults = infer_column_defaults(
            names, len(column_names), field_delim, use_quote_delim, na_value, header,
            num_rows_for_inference, select_columns, open_fn)
    if select_columns is not None and len(column_defaults) != len(select_columns):
        raise ValueError("If specified, `column_defaults` and `select_columns` must have the "
                         f"same length: `column_defaults` has length {len(column_defaults)}, "
                         f"`select_columns` has length {len(select_columns)}.")
    if select_columns is not None and len(column_names) > len(select_columns):
        column_names = [column_names[i] for i in select_columns]
    if label_name is not None and label_name not in column_names:
        raise ValueError("`label_name` provided must be one of the columns: "
                         f"{column_names}. Received: {label_name}.")

    def filename_to_dataset(filename):
        ds = CsvDataset(filename, record_defaults=column_defaults, field_delim=field_delim,
                        use_quote_delim=use_quote_delim, na_value=na_value,
                        select_cols=select_columns, header=header,
                        compression_type=compression_type)
        return IgnoreErrorsDataset(ds) if ignore_errors else ds

    dataset = FilesInterleaveDataset(dataset, {n: filename_to_dataset(n) for n in names},
                                     int(num_parallel_reads))
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)

    def map_fn(*columns):
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            label = features.pop(label_name)
            return features, label
        return features

    return dataset.map(map_fn).prefetch(prefetch_buffer_size)

"""`tf.data.TFRecordDataset`: the records of one or more TFRecord files as scalar strings
(CRC-checked; framing and compression in tfrecord_format.py).

Files are read in order; with `num_parallel_reads=N` (> 1) records come round-robin from N
files at a time, one record from each in turn, as TensorFlow's `interleave(cycle_length=N,
block_length=1)` orders them (deterministic order; the files are read on the calling thread —
put `prefetch` after the dataset to overlap reading with the consumer).
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import graph_datasets, tfrecord_format
from ndflow.data.dataset import UNKNOWN, DatasetV2
from ndflow.data.tfrecord_io import TFRecordOptions


def _paths(filenames) -> list:
    """The file names as str, from a str/bytes, a list of them, or a string tensor/array."""
    if isinstance(filenames, DatasetV2):
        return [_paths(f)[0] for f in filenames.as_numpy_iterator()]
    value = filenames.numpy() if hasattr(filenames, "numpy") else filenames
    if isinstance(value, (str, bytes)) or hasattr(value, "__fspath__"):
        items = [value]
    else:
        items = np.asarray(value, dtype=object).reshape(-1)
    out = []
    for f in items:
        if isinstance(f, bytes):
            f = f.decode("utf-8")
        elif hasattr(f, "__fspath__"):
            f = str(f.__fspath__())
        if not isinstance(f, str):
            raise TypeError("`filenames` must be a `tf.Tensor` of dtype `tf.string` dtype. "
                            f"Received {filenames!r}.")
        out.append(f)
    return out


_INTERLEAVED_CHUNK = 256


def _chunked(values, n: int):
    """Lists of up to n of `values`; those read before an error come out before it."""
    while True:
        chunk = []
        try:
            for v in values:
                chunk.append(v)
                if len(chunk) == n:
                    break
        except BaseException:
            if chunk:
                yield chunk
            raise
        if not chunk:
            return
        yield chunk


def _records_as_tensors(records):
    string = dtypes.string
    for r in records:
        yield (EagerTensor(np.array(r, dtype=object), string),)


@tf_export("data.TFRecordDataset", v1=["data.TFRecordDataset"])
class TFRecordDatasetV2(DatasetV2):
    """A dataset of the records of TFRecord files (each a scalar `tf.string`).

        ds = tf.data.TFRecordDataset(["a.tfrecord", "b.tfrecord"], compression_type="GZIP")
    """

    def __new__(cls, *args, **kwargs):
        # file names that are graph tensors: the files are known when the graph runs
        return graph_datasets.graph_file_source(cls, "TFRecordDataset", args, kwargs) or \
            super().__new__(cls)

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        super().__init__(TensorSpec([], dtypes.string))
        self._filenames = filenames if isinstance(filenames, DatasetV2) else _paths(filenames)
        self._compression = TFRecordOptions.get_compression_type_string(
            compression_type.numpy().decode() if hasattr(compression_type, "numpy")
            else compression_type)
        self._buffer_size = None if buffer_size is None else int(buffer_size)
        if self._buffer_size is not None and self._buffer_size < 0:
            raise ValueError(f"`buffer_size` must be >= 0, got {buffer_size}.")
        n = 1 if num_parallel_reads is None else int(num_parallel_reads)
        self._cycle = n if n > 0 else 8  # AUTOTUNE (-1): a cycle of 8 files
        self._name = name

    def _file_records(self, path):
        return tfrecord_format.iter_records(path, self._compression, self._buffer_size)

    def _file_record_chunks(self, path):
        return tfrecord_format.iter_record_chunks(path, self._compression, self._buffer_size)

    def _cardinality(self) -> int:
        return UNKNOWN

    def _iter_flat(self):
        return _records_as_tensors(self._records())

    def _scalar_chunks(self):
        return self._record_chunks()

    def _records(self):
        """The records (bytes) of the files, in the dataset's order."""
        for chunk in self._record_chunks():
            yield from chunk

    def _record_chunks(self):
        """The records in lists (as the reader cuts them from its buffer)."""
        paths = _paths(self._filenames) if isinstance(self._filenames, DatasetV2) \
            else self._filenames
        if self._cycle <= 1 or len(paths) <= 1:
            for path in paths:
                yield from self._file_record_chunks(path)
            return
        yield from _chunked(self._interleaved(paths), _INTERLEAVED_CHUNK)

    def _interleaved(self, paths: list):
        pending = iter(paths)
        slots = []
        for path in pending:
            slots.append(self._file_records(path))
            if len(slots) == self._cycle:
                break
        i = 0
        while slots:
            i %= len(slots)
            try:
                yield next(slots[i])
                i += 1
            except StopIteration:
                nxt = next(pending, None)
                if nxt is None:
                    del slots[i]
                else:
                    slots[i] = self._file_records(nxt)

    def __repr__(self):
        return f"<TFRecordDatasetV2 element_spec={self._element_spec}>"

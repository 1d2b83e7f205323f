"""`tf.data.FixedLengthRecordDataset`: the fixed-size records between a header and a footer
of binary files (GZIP/ZLIB-compressed or not), as scalar strings."""

from __future__ import annotations

import os

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.api_export import tf_export
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import graph_datasets
from ndflow.data.dataset import DatasetV2
from ndflow.data.text_line import _chunks, _scalar, file_names


def _int(value, default: int = 0) -> int:
    if value is None:
        return default
    return int(value.numpy() if hasattr(value, "numpy") else value)


@tf_export("data.FixedLengthRecordDataset", v1=["data.FixedLengthRecordDataset"])
class FixedLengthRecordDataset(DatasetV2):
    """Records of `record_bytes` bytes from each file, after `header_bytes` and before
    `footer_bytes`; a body that is not a whole number of records is InvalidArgumentError."""

    def __new__(cls, *args, **kwargs):
        # file names that are graph tensors: the files are known when the graph runs
        return graph_datasets.graph_file_source(cls, "FixedLengthRecordDataset", args, kwargs) or \
            super().__new__(cls)

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None, name=None):
        self._files = file_names(filenames)
        self._record = _int(record_bytes)
        self._header, self._footer = _int(header_bytes), _int(footer_bytes)
        if self._record <= 0:
            raise tf_errors.InvalidArgumentError(None, None, "record_bytes must be greater "
                                                 f"than zero, got {self._record}.")
        if hasattr(compression_type, "numpy"):
            compression_type = compression_type.numpy()
        if isinstance(compression_type, bytes):
            compression_type = compression_type.decode()
        self._compression = compression_type or ""
        if self._compression not in ("", "GZIP", "ZLIB"):
            raise tf_errors.InvalidArgumentError(
                None, None, f"Unsupported compression_type: {self._compression}.")
        super().__init__(TensorSpec([], dtypes.string))

    def _iter_flat(self):
        for path in self._files:
            data = b"".join(_chunks(path, self._compression))
            body = len(data) - self._header - self._footer
            if body < 0 or body % self._record:
                raise tf_errors.InvalidArgumentError(
                    None, None, f"Excluding the header ({self._header} bytes) and footer "
                    f"({self._footer} bytes), input file \"{os.fspath(path)}\" has body length "
                    f"{body} bytes, which is not an exact multiple of the record length "
                    f"({self._record} bytes).")
            for start in range(self._header, self._header + body, self._record):
                yield (_scalar(data[start:start + self._record]),)

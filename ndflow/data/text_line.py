"""`tf.data.TextLineDataset`: the lines of text files (GZIP/ZLIB-compressed or not) as scalar
string tensors, without their line endings ("\\n", "\\r\\n"), file after file."""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import graph_datasets
from ndflow.data.dataset import DatasetV2

_CHUNK = 1 << 16


def file_names(filenames) -> list:
    """`filenames` (a string, a list of strings, a string tensor or a dataset of strings) as
    a list of str."""
    if isinstance(filenames, DatasetV2):
        return [_text(v) for v in filenames.as_numpy_iterator()]
    if hasattr(filenames, "numpy"):
        filenames = filenames.numpy()
    values = np.asarray(filenames, dtype=object).reshape(-1).tolist()
    if not values:
        raise tf_errors.InvalidArgumentError(None, None, "`filenames` must be a `tf.Tensor` "
                                             "of `tf.string` with at least one element.")
    return [_text(v) for v in values]


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes) else os.fspath(v)


def _open(path: str):
    try:
        return open(path, "rb")  # noqa: SIM115 - closed by the reader
    except OSError as e:
        cls = tf_errors.NotFoundError if isinstance(e, FileNotFoundError) else \
            tf_errors.PermissionDeniedError if isinstance(e, PermissionError) else \
            tf_errors.UnknownError
        raise cls(None, None, f"{path}; {e.strerror or e}") from None


def _chunks(path: str, compression: str):
    """The file's (decompressed) bytes in chunks; corrupt data is DataLossError."""
    with _open(path) as f:
        try:
            if compression == "GZIP":
                with gzip.GzipFile(fileobj=f) as g:
                    while chunk := g.read(_CHUNK):
                        yield chunk
            elif compression == "ZLIB":
                d = zlib.decompressobj()
                while chunk := f.read(_CHUNK):
                    yield d.decompress(chunk)
                yield d.flush()
            else:
                while chunk := f.read(_CHUNK):
                    yield chunk
        except (OSError, EOFError, zlib.error) as e:
            raise tf_errors.DataLossError(None, None, f"{path}: corrupted {compression} data "
                                          f"({e})") from None


def _scalar(b: bytes) -> EagerTensor:
    arr = np.empty((), dtype=object)
    arr[()] = b
    return EagerTensor(arr, dtypes.string)


@tf_export("data.TextLineDataset", v1=["data.TextLineDataset"])
class TextLineDataset(DatasetV2):
    """Lines of text files as scalar strings (line endings removed)."""

    def __new__(cls, *args, **kwargs):
        # file names that are graph tensors: the files are known when the graph runs
        return graph_datasets.graph_file_source(cls, "TextLineDataset", args, kwargs) or \
            super().__new__(cls)

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        self._files = file_names(filenames)
        if hasattr(compression_type, "numpy"):
            compression_type = compression_type.numpy()
        if isinstance(compression_type, bytes):
            compression_type = compression_type.decode()
        compression_type = compression_type or ""
        if compression_type not in ("", "GZIP", "ZLIB"):
            raise tf_errors.InvalidArgumentError(
                None, None, f"Unsupported compression_type: {compression_type}.")
        self._compression = compression_type
        super().__init__(TensorSpec([], dtypes.string))

    def _iter_flat(self):
        for path in self._files:
            rest = b""
            for chunk in _chunks(path, self._compression):
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    yield (_scalar(line[:-1] if line.endswith(b"\r") else line),)
            if rest:
                yield (_scalar(rest[:-1] if rest.endswith(b"\r") else rest),)

"""`cache`: elements kept after the first complete pass, in memory or in a file.

The memory cache is filled by the first iterator that reaches the end (a partial pass
caches nothing, as TensorFlow). The file cache writes `<filename>.ndcache` at the end of
the first complete pass (to a temporary file renamed into place, so an interrupted pass
leaves no cache) and later iterators — also in later runs — read it instead of the input.
Its format is ndflow's own (TensorFlow's cache files are not read or written).
"""

from __future__ import annotations

import os
import struct
import threading

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.tensor import EagerTensor
from ndflow.data.dataset import DatasetV2, register_op

_MAGIC = b"NDFLOWCACHE1"


class CacheDataset(DatasetV2):
    def __init__(self, input_dataset: DatasetV2, filename=""):
        self._input = input_dataset
        if hasattr(filename, "numpy"):
            filename = filename.numpy()
        if isinstance(filename, bytes):
            filename = filename.decode()
        self._path = f"{os.fspath(filename)}.ndcache" if filename else None
        self._memory = None
        self._lock = threading.Lock()
        super().__init__(input_dataset.element_spec)

    def _inputs(self):
        return [self._input]

    def _cardinality(self):
        return self._input._cardinality()

    def _iter_flat(self):
        if self._memory is not None:
            yield from self._memory
            return
        if self._path is not None and os.path.exists(self._path):
            yield from _read(self._path, self._flat_specs)
            return
        seen = []
        for flat in self._input._iter_flat():
            seen.append(flat)
            yield flat
        with self._lock:
            if self._path is None:
                self._memory = seen
            elif not os.path.exists(self._path):
                _write(self._path, seen)


def _write(path: str, elements: list) -> None:
    tmp = f"{path}.tmp{os.getpid()}_{threading.get_ident()}"
    try:
        with open(tmp, "wb") as f:
            f.write(_MAGIC + struct.pack("<q", len(elements)))
            for flat in elements:
                for t in flat:
                    _write_value(f, t._value)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise tf_errors.UnknownError(None, None, f"Failed to write cache file {path}: "
                                     f"{e}") from e


def _write_value(f, v) -> None:
    shape = tuple(v.shape)
    f.write(struct.pack("<i", len(shape)) + struct.pack(f"<{len(shape)}q", *shape))
    if isinstance(v, torch.Tensor):
        data = v.contiguous().view(torch.uint8).numpy().tobytes() if v.numel() else b""
        f.write(struct.pack("<q", len(data)) + data)
    else:  # strings: length-prefixed bytes
        items = np.asarray(v, dtype=object).reshape(-1)
        f.write(struct.pack("<q", len(items)))
        for b in items:
            f.write(struct.pack("<q", len(b)) + b)


def _read(path: str, specs: list):
    try:
        with open(path, "rb") as f:
            if f.read(len(_MAGIC)) != _MAGIC:
                raise ValueError("not an ndflow cache file")
            (count,) = struct.unpack("<q", f.read(8))
            for _ in range(count):
                yield tuple(EagerTensor(_read_value(f, s.dtype), s.dtype) for s in specs)
    except (ValueError, struct.error, RuntimeError, OSError) as e:
        raise tf_errors.DataLossError(None, None, f"Corrupted cache file {path}: "
                                      f"{e}") from None


def _read_value(f, dtype):
    (rank,) = struct.unpack("<i", f.read(4))
    shape = struct.unpack(f"<{rank}q", f.read(8 * rank))
    (n,) = struct.unpack("<q", f.read(8))
    if dtype is dtypes.string:
        out = np.empty(n, dtype=object)
        for i in range(n):
            (size,) = struct.unpack("<q", f.read(8))
            out[i] = f.read(size)
        return out.reshape(shape)
    data = bytearray(f.read(n))
    if len(data) != n:
        raise ValueError("truncated")
    flat = torch.frombuffer(data, dtype=torch.uint8) if n else torch.empty(0, dtype=torch.uint8)
    return flat.view(dtype.torch_dtype).reshape(shape)


register_op("cache")(CacheDataset)

"""Reader for the IDX format (MNIST's files), plain or gzip-compressed.

An IDX file is a big-endian header — two zero bytes, a type code, the number of dimensions,
then each dimension as a 32-bit integer — followed by the values in C order. The reader checks
every part of that against the file's actual length, so a corrupt, truncated or oversized file
raises `DataLossError` naming the file instead of crashing or returning garbage.
"""

from __future__ import annotations

import gzip
import math
import os
import struct
import zlib
from typing import BinaryIO

import numpy as np

from ndflow.core.errors import DataLossError

# IDX type code -> big-endian NumPy dtype.
IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
MAX_DIMS = 8
DEFAULT_MAX_BYTES = 1 << 31  # refuse headers that claim more than 2 GiB of values
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


def _corrupt(path: str, why: str) -> DataLossError:
    return DataLossError(None, None, f"Corrupt IDX file {path}: {why}")


def _read_exactly(stream: BinaryIO, size: int, path: str, what: str) -> bytearray:
    buf = bytearray(size)
    view = memoryview(buf)
    done = 0
    while done < size:
        n = stream.readinto(view[done:done + _CHUNK])
        if not n:
            raise _corrupt(path, f"truncated {what}: expected {size} bytes, found {done}")
        done += n
    return buf


def parse_idx(stream: BinaryIO, path: str = "<stream>",
              max_bytes: int = DEFAULT_MAX_BYTES) -> np.ndarray:
    """The array stored in IDX `stream` (uncompressed bytes), in native byte order."""
    header = _read_exactly(stream, 4, path, "header")
    zero0, zero1, type_code, ndim = header
    if zero0 or zero1:
        raise _corrupt(path, f"bad magic number 0x{bytes(header).hex()} (must start with "
                             "two zero bytes)")
    if type_code not in IDX_DTYPES:
        raise _corrupt(path, f"unknown element type code 0x{type_code:02x}")
    if not 1 <= ndim <= MAX_DIMS:
        raise _corrupt(path, f"{ndim} dimensions (expected 1..{MAX_DIMS})")
    dims = struct.unpack(f">{ndim}I", _read_exactly(stream, 4 * ndim, path, "dimensions"))
    dtype = IDX_DTYPES[type_code]
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes > max_bytes:
        raise _corrupt(path, f"header claims shape {list(dims)} ({nbytes} bytes), over the "
                             f"{max_bytes}-byte limit")
    data = _read_exactly(stream, nbytes, path, f"data for shape {list(dims)}")
    if stream.read(1):
        raise _corrupt(path, f"trailing bytes after the {nbytes} bytes of shape {list(dims)}")
    array = np.frombuffer(data, dtype=dtype).reshape(dims)
    return array.astype(dtype.newbyteorder("="), copy=False)


def read_idx(path: str | os.PathLike, max_bytes: int = DEFAULT_MAX_BYTES) -> np.ndarray:
    """The array in IDX file `path`, gzip-compressed (detected by content) or not.

    Raises FileNotFoundError for a missing file and DataLossError for a malformed one.
    """
    name = os.fspath(path)
    with open(name, "rb") as raw:
        compressed = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
        try:
            if compressed:
                with gzip.GzipFile(fileobj=raw, mode="rb") as stream:
                    return parse_idx(stream, name, max_bytes)
            return parse_idx(raw, name, max_bytes)
        except (EOFError, zlib.error, gzip.BadGzipFile) as e:
            raise _corrupt(name, f"damaged gzip data ({e})") from e

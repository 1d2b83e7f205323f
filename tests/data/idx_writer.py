"""A small IDX writer for tests (the inverse of ndflow.data.idx.read_idx)."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np

TYPE_CODES = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09, np.dtype(np.int16): 0x0B,
              np.dtype(np.int32): 0x0C, np.dtype(np.float32): 0x0D, np.dtype(np.float64): 0x0E}


def idx_bytes(array: np.ndarray) -> bytes:
    array = np.asarray(array)
    code = TYPE_CODES[array.dtype.newbyteorder("=")]
    header = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_idx(path: Path, array: np.ndarray, compress: bool | None = None) -> Path:
    """Writes `array` as IDX; gzip-compressed when `compress` (default: name ends in .gz)."""
    data = idx_bytes(array)
    if compress is None:
        compress = str(path).endswith(".gz")
    path.write_bytes(gzip.compress(data) if compress else data)
    return path

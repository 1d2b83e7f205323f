"""ndflow.data.idx: IDX round trips and clean errors for damaged files."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from ndflow.core.errors import DataLossError
from ndflow.data.idx import read_idx
from tests.data.idx_writer import idx_bytes, write_idx


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32,
                                   np.float64])
@pytest.mark.parametrize("compress", [True, False])
def test_round_trip(tmp_path, dtype, compress):
    rng = np.random.default_rng(0)
    array = (rng.standard_normal((3, 4, 5)) * 50).astype(dtype)
    path = write_idx(tmp_path / ("x.idx.gz" if compress else "x.idx"), array)
    back = read_idx(path)
    assert back.dtype == np.dtype(dtype).newbyteorder("=")
    np.testing.assert_array_equal(back, array)


def test_one_dimensional_and_empty(tmp_path):
    labels = np.arange(10, dtype=np.uint8)
    np.testing.assert_array_equal(read_idx(write_idx(tmp_path / "l.gz", labels)), labels)
    empty = np.zeros((0, 28, 28), np.uint8)
    assert read_idx(write_idx(tmp_path / "e.gz", empty)).shape == (0, 28, 28)


def test_result_is_writable_native_order(tmp_path):
    array = np.arange(6, dtype=np.int32).reshape(2, 3)
    back = read_idx(write_idx(tmp_path / "a.gz", array))
    back[0, 0] = 7  # a fresh array, not a read-only view of a bytes object
    assert back.dtype.isnative


def _damaged(tmp_path, payload: bytes, compress=True):
    path = tmp_path / "bad.gz"
    path.write_bytes(gzip.compress(payload) if compress else payload)
    return path


GOOD = idx_bytes(np.arange(24, dtype=np.uint8).reshape(2, 3, 4))


@pytest.mark.parametrize("payload,message", [
    (GOOD[:3], "truncated header"),
    (b"\x01" + GOOD[1:], "bad magic"),
    (GOOD[:2] + b"\x07" + GOOD[3:], "unknown element type"),
    (GOOD[:3] + b"\x00" + GOOD[4:], "0 dimensions"),
    (GOOD[:3] + b"\x09" + GOOD[4:], "9 dimensions"),
    (GOOD[:10], "truncated dimensions"),
    (GOOD[:-1], "truncated data"),
    (GOOD + b"\x00", "trailing bytes"),
    (GOOD[:4] + b"\xff\xff\xff\xff" * 3, "over the"),
    (b"", "truncated header"),
])
def test_malformed_content(tmp_path, payload, message):
    for compress in (True, False):
        with pytest.raises(DataLossError, match=message) as info:
            read_idx(_damaged(tmp_path, payload, compress))
        assert "bad.gz" in str(info.value)


def test_truncated_gzip_stream(tmp_path):
    data = gzip.compress(GOOD * 1)
    path = tmp_path / "cut.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataLossError, match="cut.gz"):
        read_idx(path)


def test_corrupted_gzip_payload(tmp_path):
    data = bytearray(gzip.compress(idx_bytes(np.arange(4000, dtype=np.int32))))
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "flip.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(DataLossError, match="flip.gz"):
        read_idx(path)


def test_bad_gzip_crc(tmp_path):
    data = bytearray(gzip.compress(GOOD))
    data[-8] ^= 0x01  # CRC32 of the payload
    path = tmp_path / "crc.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(DataLossError, match="crc.gz"):
        read_idx(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "nope.gz")

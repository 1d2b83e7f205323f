"""16-bit PNG files (ndflow/kernels/png16.py): what TF 2.21 decodes from files written by
libpng, by pypng (Adam7-interlaced) and with every scanline filter (tests/fixtures/png16), and
files written by ndflow read back by Pillow, an independent decoder."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import PIL.Image
import pytest

import ndflow as tf
from ndflow.core import errors
from tests import fixture_modules

HERE = fixture_modules.FIXTURES / "png16"
TF_VALUES = np.load(HERE / "values.npz")
DECODE = {
    "uint16": lambda d: tf.io.decode_png(d, dtype=tf.uint16),
    "uint8": lambda d: tf.io.decode_png(d),
    "rgba16": lambda d: tf.io.decode_png(d, channels=4, dtype=tf.uint16),
    "float": lambda d: tf.io.decode_image(d, dtype=tf.float32),
}


@pytest.mark.parametrize("key", sorted(TF_VALUES.files))
def test_decodes_as_tensorflow_does(key):
    name, kind = key.split("/")
    got = DECODE[kind]((HERE / f"{name}.png").read_bytes()).numpy()
    want = TF_VALUES[key]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_encoded_files_round_trip_and_read_in_pillow(channels):
    img = np.random.default_rng(channels).integers(0, 65536, (7, 9, channels), dtype=np.uint16)
    data = tf.io.encode_png(img).numpy()
    np.testing.assert_array_equal(tf.io.decode_png(data, dtype=tf.uint16).numpy(), img)
    pil = PIL.Image.open(io.BytesIO(data))
    pil.load()
    got = np.asarray(pil)
    if channels == 1:      # Pillow keeps 16-bit gray whole
        np.testing.assert_array_equal(got, img[..., 0])
    elif channels == 2:    # and reduces the rest to their high bytes (gray+alpha as RGBA)
        np.testing.assert_array_equal(got[..., [0, 3]], img >> 8)
    else:
        np.testing.assert_array_equal(got, img >> 8)


def test_eight_bit_files_decode_to_uint16_times_257():
    img = np.arange(48, dtype=np.uint8).reshape(4, 4, 3) * 5
    data = tf.io.encode_png(img)
    got = tf.io.decode_png(data, dtype=tf.uint16).numpy()
    np.testing.assert_array_equal(got, img.astype(np.uint16) * 257)


def _chunk(kind, body, crc=None):
    crc = zlib.crc32(kind + body) if crc is None else crc
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def _file(rows: bytes, crc=None, depth=16) -> bytes:
    header = struct.pack(">IIBBBBB", 2, 2, depth, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows), crc) + _chunk(b"IEND", b""))


GOOD_ROWS = b"\x00\x01\x02\x03\x04" * 2


@pytest.mark.parametrize("data, message", [
    (_file(GOOD_ROWS, crc=1), "CRC error"),
    (_file(GOOD_ROWS[:7]), "image data too short"),
    (_file(b"\x07\x01\x02\x03\x04" * 2), "bad filter type"),
    (_file(GOOD_ROWS)[:60], "truncated chunk|no IEND"),
])
def test_bad_files_are_invalid_argument_errors(data, message):
    assert tf.io.decode_png(_file(GOOD_ROWS), dtype=tf.uint16).numpy().tolist() == \
        [[[0x0102], [0x0304]], [[0x0102], [0x0304]]]
    with pytest.raises(errors.InvalidArgumentError, match=message):
        tf.io.decode_png(data, dtype=tf.uint16)


def test_rows_are_filtered_to_compress_as_libpng_does():
    """Re-encoding the smooth image TF wrote gives a file about as small as libpng's (its
    adaptive filters; unfiltered rows compress twice as badly here)."""
    tf_file = (HERE / "smooth_rgb.png").read_bytes()
    image = tf.io.decode_png(tf_file, dtype=tf.uint16)
    ours = tf.io.encode_png(image).numpy()
    assert len(ours) <= 1.1 * len(tf_file), (len(ours), len(tf_file))

"""The host-side transforms TensorBoard's summary_v2 functions apply before writing, in NumPy:
histogram buckets ([k, 3] float64: left edge, right edge, count), images as uint8 PNGs
(TensorFlow's convert_image_dtype with saturation, then encode_png) and audio as 16-bit PCM
WAV (encode_wav). PNG and WAV are written here with zlib/struct: Pillow is no dependency."""

from __future__ import annotations

import struct
import zlib

import numpy as np

DEFAULT_BUCKET_COUNT = 30


def histogram_buckets(data, bucket_count: int | None = None) -> np.ndarray:
    """TensorBoard's `_buckets`: `bucket_count` equal-width buckets from min to max (values
    at max go in the last); no data -> zeros; one distinct value -> all counts last."""
    count = DEFAULT_BUCKET_COUNT if bucket_count is None else int(bucket_count)
    count = max(0, count)
    values = np.asarray(data, dtype=np.float64).reshape(-1)
    if values.size == 0 or count == 0:
        return np.zeros((count, 3), np.float64)
    lo, hi = values.min(), values.max()
    span = hi - lo
    if span == 0:
        counts = np.zeros(count, np.float64)
        counts[-1] = values.size
        edges = np.full(count, hi)
        return np.stack([edges, edges, counts], axis=1)
    width = span / count
    indices = np.minimum(np.floor((values - lo) / width).astype(np.int64), count - 1)
    counts = np.bincount(indices, minlength=count).astype(np.float64)
    edges = np.linspace(lo, hi, count + 1)
    edges[-1] = hi
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def to_uint8_image(images: np.ndarray) -> np.ndarray:
    """TensorFlow's `convert_image_dtype(x, uint8, saturate=True)`: floats in [0, 1] scaled
    by 255.5 and truncated, integers rescaled by their bit width."""
    a = np.asarray(images)
    if a.dtype == np.uint8:
        return a
    if a.dtype == np.bool_:
        return a.astype(np.uint8) * 255
    if np.issubdtype(a.dtype, np.floating) or a.dtype.name == "bfloat16":
        scaled = a.astype(np.float64) * 255.5
        return np.clip(scaled, 0, 255).astype(np.uint8)
    if np.issubdtype(a.dtype, np.integer):
        info = np.iinfo(a.dtype)
        shift = (info.bits - (0 if info.min == 0 else 1)) - 8
        shifted = a.astype(np.int64) >> shift if shift > 0 else a.astype(np.int64)
        return np.clip(shifted, 0, 255).astype(np.uint8)
    raise ValueError(f"Cannot convert images of dtype {a.dtype} to uint8")


_PNG_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> gray, gray+alpha, RGB, RGBA


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def encode_png(image: np.ndarray, level: int = 6) -> bytes:
    """One [height, width, channels] uint8 image as PNG bytes (8-bit, no filtering)."""
    height, width, channels = image.shape
    if channels not in _PNG_COLOR_TYPES:
        raise ValueError(f"image must have 1, 2, 3 or 4 channels, got {channels}")
    rows = np.ascontiguousarray(image, dtype=np.uint8).reshape(height, width * channels)
    raw = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()
    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOR_TYPES[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(raw, level)) + _png_chunk(b"IEND", b""))


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """[frames, channels] float audio in [-1, 1] as 16-bit little-endian PCM WAV, samples
    as TensorFlow's EncodeWav makes them: float32 x * 32768 rounded half away from zero,
    clamped to int16."""
    frames, channels = samples.shape
    scaled = np.asarray(samples, np.float32) * np.float32(32768.0)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))
    pcm = np.clip(rounded, -32768, 32767).astype("<i2")
    data = pcm.tobytes()
    fmt = struct.pack("<HHIIHH", 1, channels, int(sample_rate),
                      int(sample_rate) * channels * 2, channels * 2, 16)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt "
            + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data)


def decode_png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR (for tests and readers)."""
    return struct.unpack(">II", png[16:24])

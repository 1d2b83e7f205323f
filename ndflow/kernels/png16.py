"""16-bit PNG files, which TensorFlow decodes exactly (`decode_png(dtype=tf.uint16)`) and
encodes from uint16 images, but Pillow reduces to 8 bits where they have color: read and
written here, on zlib (PNG's own compression) and a numba kernel that undoes the scanline
filters (Sub, Up, Average, Paeth each depend on the bytes decoded before them).

Gray, gray+alpha, RGB and RGBA at depth 16, plain or Adam7-interlaced, are read; every chunk's
CRC-32 is checked, as libpng checks them. Writing picks each row's filter as libpng does by
default, the one whose bytes, read as signed, have the least absolute sum (the bytes can
differ from TensorFlow's, the pixels do not).
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.build_once import built_once

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 4: 2, 2: 3, 6: 4}            # color type -> samples per pixel
_COLOR_TYPE = {c: t for t, c in _CHANNELS.items()}
# Adam7: (first column, first row, column step, row step) of each pass
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
          (0, 1, 1, 2))


def is_16bit(data: bytes) -> bool:
    """Whether `data` is a PNG file whose samples are 16 bits (IHDR's bit depth)."""
    return data.startswith(SIGNATURE) and len(data) > 24 and data[12:16] == b"IHDR" \
        and data[24] == 16


def _invalid(why: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"Invalid PNG. Failed to decode: {why}")


def _chunks(data: bytes):
    pos = len(SIGNATURE)
    while pos + 12 <= len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        crc = data[pos + 8 + length:pos + 12 + length]
        if len(body) != length or len(crc) != 4:
            raise _invalid("truncated chunk")
        if zlib.crc32(kind + body) != struct.unpack(">I", crc)[0]:
            raise _invalid(f"{kind.decode('latin-1')}: CRC error")
        yield kind, body
        if kind == b"IEND":
            return
        pos += 12 + length
    raise _invalid("no IEND chunk")


def decode(data: bytes) -> np.ndarray:
    """A 16-bit PNG file -> uint16 [height, width, samples per pixel]."""
    header, idat = None, []
    for kind, body in _chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body[:13])
        elif kind == b"IDAT":
            idat.append(body)
    if header is None:
        raise _invalid("no IHDR chunk")
    width, height, depth, color, _, _, interlace = header
    if depth != 16 or color not in _CHANNELS:
        raise _invalid(f"bit depth {depth} with color type {color}")
    channels = _CHANNELS[color]
    try:
        raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8)
    except zlib.error as e:
        raise _invalid(str(e)) from None
    bpp = 2 * channels
    passes = _ADAM7 if interlace else ((0, 0, 1, 1),)
    image = np.empty((height, width, channels), np.uint16)
    pos = 0
    for x0, y0, dx, dy in passes:
        w, h = -(-(width - x0) // dx), -(-(height - y0) // dy)
        if w <= 0 or h <= 0:
            continue
        stride = w * bpp
        size = h * (stride + 1)
        if pos + size > raw.size:
            raise _invalid("image data too short")
        rows = np.empty((h, stride), np.uint8)
        if not _kernels()[0](raw[pos:pos + size], h, stride, bpp, rows):
            raise _invalid("bad filter type")
        pos += size
        image[y0::dy, x0::dx] = rows.view(">u2").reshape(h, w, channels)
    return image


def encode(image: np.ndarray, level: int) -> bytes:
    """uint16 [height, width, 1-4] -> a 16-bit PNG file (zlib `level`, -1 its default)."""
    height, width, channels = image.shape
    rows = np.ascontiguousarray(image, ">u2").view(np.uint8).reshape(height, -1)
    lines = np.empty((height, rows.shape[1] + 1), np.uint8)
    if rows.size:
        _kernels()[1](rows, 2 * channels, lines)
    header = struct.pack(">IIBBBBB", width, height, 16, _COLOR_TYPE[channels], 0, 0, 0)
    return SIGNATURE + _chunk(b"IHDR", header) + \
        _chunk(b"IDAT", zlib.compress(lines.tobytes(), level)) + _chunk(b"IEND", b"")


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
predict = None


def _build_kernels():
    from numba import njit  # noqa: PLC0415 - loads with the first 16-bit PNG, not with ndflow
    global predict

    @njit(cache=True)
    def predict(kind, a, b, c):
        """PNG's prediction of a byte from its left (a), upper (b) and upper-left (c)."""
        if kind == 1:
            return a
        if kind == 2:
            return b
        if kind == 3:
            return (a + b) >> 1
        if kind == 4:   # the distances of p = a + b - c to a, b and c
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - c - c)
            return a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        return np.int32(0)

    @njit(cache=True)
    def filter_rows(rows, bpp, out):
        """Each row of `rows` [height, stride] into `out` [height, 1 + stride]: its filter
        type, then its bytes under the filter whose signed bytes sum least in magnitude."""
        height, stride = rows.shape
        for r in range(height):
            best, best_cost = 0, -1
            for kind in range(5):
                cost = 0
                for i in range(stride):
                    a = np.int32(rows[r, i - bpp]) if i >= bpp else np.int32(0)
                    b = np.int32(rows[r - 1, i]) if r > 0 else np.int32(0)
                    c = np.int32(rows[r - 1, i - bpp]) if r > 0 and i >= bpp else np.int32(0)
                    v = (np.int32(rows[r, i]) - predict(kind, a, b, c)) & 0xFF
                    cost += v if v < 128 else 256 - v
                if best_cost < 0 or cost < best_cost:
                    best, best_cost = kind, cost
            out[r, 0] = best
            for i in range(stride):
                a = np.int32(rows[r, i - bpp]) if i >= bpp else np.int32(0)
                b = np.int32(rows[r - 1, i]) if r > 0 else np.int32(0)
                c = np.int32(rows[r - 1, i - bpp]) if r > 0 and i >= bpp else np.int32(0)
                out[r, i + 1] = np.uint8((np.int32(rows[r, i]) - predict(best, a, b, c)) & 0xFF)

    @njit(cache=True)
    def unfilter(raw, height, stride, bpp, out):
        """Undoes each row's filter into `out` [height, stride]; False for an unknown one."""
        pos = 0
        for r in range(height):
            kind = raw[pos]
            pos += 1
            if kind > 4:
                return False
            line = raw[pos:pos + stride]
            cur = out[r]
            if r == 0 and kind >= 2:   # nothing above: Up is None, Paeth is Sub
                kind = 0 if kind == 2 else 5 if kind == 3 else 1
            if kind == 0:
                cur[:] = line
            elif kind == 1:
                cur[:bpp] = line[:bpp]
                for i in range(bpp, stride):
                    cur[i] = line[i] + cur[i - bpp]
            elif kind == 5:            # Average on the first row: half the left byte
                cur[:bpp] = line[:bpp]
                for i in range(bpp, stride):
                    cur[i] = line[i] + (cur[i - bpp] >> 1)
            else:
                up = out[r - 1]
                if kind == 2:
                    for i in range(stride):
                        cur[i] = line[i] + up[i]
                elif kind == 3:
                    for i in range(bpp):
                        cur[i] = line[i] + (up[i] >> 1)
                    for i in range(bpp, stride):
                        cur[i] = line[i] + ((np.int32(cur[i - bpp]) + up[i]) >> 1)
                else:
                    for i in range(bpp):
                        cur[i] = line[i] + up[i]      # Paeth with a = c = 0 predicts b
                    for i in range(bpp, stride):
                        cur[i] = line[i] + predict(4, np.int32(cur[i - bpp]), np.int32(up[i]),
                                                   np.int32(up[i - bpp]))
            pos += stride
        return True
    return unfilter, filter_rows


# (unfilter, filter_rows)
_kernels = built_once(_build_kernels)

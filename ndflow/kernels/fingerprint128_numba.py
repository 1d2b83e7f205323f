"""farmhash's Fingerprint128 (kernels/fingerprint128.py, the pure-Python reference) over many
strings at once, by a numba loop bit for bit the reference's: SdcaFprint hashes a mini-batch
of example ids, and a Python call per string costs ~50x TensorFlow's time. The strings are
packed into one buffer (their concatenation and offsets) and read there as little-endian
words. `kernels()` is None without numba: the caller then loops over the reference."""

from __future__ import annotations

import sys

import numpy as np

from ndflow.kernels.build_once import built_once

_K0 = np.uint64(0xC3A5C85C97CB3127)
_K1 = np.uint64(0xB492B66FBE98F273)
_K2 = np.uint64(0x9AE16A3B2F90404F)
_KMUL = np.uint64(0x9DDFEA08EB382D69)
_U0, _U8, _U47 = np.uint64(0), np.uint64(8), np.uint64(47)

# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
f64 = f32 = rot = shift_mix = len16 = len0to16 = weak32 = city_murmur = city128 = None
little_endian = None


def _build():
    if sys.byteorder != "little":
        return None
    try:
        from numba import njit  # noqa: PLC0415 - loads with the first SdcaFprint, not ndflow
    except ImportError:
        return None
    global f64, f32, rot, shift_mix, len16, len0to16, weak32, city_murmur, city128
    global little_endian

    @njit(cache=True, inline="always")
    def little_endian(b, i, width):
        """The `width` bytes from b[i] as a little-endian uint64."""
        v = _U0
        for k in range(width):
            v |= np.uint64(b[i + k]) << np.uint64(8 * k)
        return v

    @njit(cache=True, inline="always")
    def f64(b, i):
        return little_endian(b, i, 8)

    @njit(cache=True, inline="always")
    def f32(b, i):
        return little_endian(b, i, 4)

    @njit(cache=True, inline="always")
    def rot(v, shift):
        return (v >> np.uint64(shift)) | (v << np.uint64(64 - shift))

    @njit(cache=True, inline="always")
    def shift_mix(v):
        return v ^ (v >> _U47)

    @njit(cache=True, inline="always")
    def len16(u, v, mul):
        a = (u ^ v) * mul
        a ^= a >> _U47
        b = (v ^ a) * mul
        b ^= b >> _U47
        return b * mul

    @njit(cache=True)
    def len0to16(b, s, n):
        un = np.uint64(n)
        if n >= 8:
            mul = _K2 + un * np.uint64(2)
            a = f64(b, s) + _K2
            c = f64(b, s + n - 8)
            return len16(rot(c, 37) * mul + a, (rot(a, 25) + c) * mul, mul)
        if n >= 4:
            mul = _K2 + un * np.uint64(2)
            return len16(un + (f32(b, s) << np.uint64(3)), f32(b, s + n - 4), mul)
        if n > 0:
            y = np.uint64(b[s]) + (np.uint64(b[s + (n >> 1)]) << _U8)
            z = un + (np.uint64(b[s + n - 1]) << np.uint64(2))
            return shift_mix(y * _K2 ^ z * _K0) * _K2
        return _K2

    @njit(cache=True, inline="always")
    def weak32(b, i, a, c):
        w, x, y, z = f64(b, i), f64(b, i + 8), f64(b, i + 16), f64(b, i + 24)
        a = a + w
        c = rot(c + a + z, 21)
        t = a
        a = a + x + y
        c = c + rot(a, 44)
        return a + z, c + t

    @njit(cache=True)
    def city_murmur(b, s, n, lo, hi):
        a, c_hi, c, d = lo, hi, _U0, _U0
        left = n - 16
        if left <= 0:
            a = shift_mix(a * _K1) * _K1
            c = c_hi * _K1 + len0to16(b, s, n)
            d = shift_mix(a + (f64(b, s) if n >= 8 else c))
        else:
            c = len16(f64(b, s + n - 8) + _K1, a, _KMUL)
            d = len16(c_hi + np.uint64(n), c + f64(b, s + n - 16), _KMUL)
            a = a + d
            i = s
            while left > 0:
                a ^= shift_mix(f64(b, i) * _K1) * _K1
                a = a * _K1
                c_hi ^= a
                c ^= shift_mix(f64(b, i + 8) * _K1) * _K1
                c = c * _K1
                d ^= c
                i += 16
                left -= 16
        a = len16(a, c, _KMUL)
        c_hi = len16(d, c_hi, _KMUL)
        return a ^ c_hi, len16(c_hi, a, _KMUL)

    @njit(cache=True)
    def city128(b, s, n, lo, hi):
        if n < 128:
            return city_murmur(b, s, n, lo, hi)
        x, y, z = lo, hi, np.uint64(n) * _K1
        v0 = rot(y ^ _K1, 49) * _K1 + f64(b, s)
        v1 = rot(v0, 42) * _K1 + f64(b, s + 8)
        w0 = rot(y + z, 35) * _K1 + x
        w1 = rot(x + f64(b, s + 88), 53) * _K1
        i = s
        while n >= 128:
            for _ in range(2):
                x = rot(x + y + v0 + f64(b, i + 8), 37) * _K1
                y = rot(y + v1 + f64(b, i + 48), 42) * _K1
                x ^= w1
                y = y + v0 + f64(b, i + 40)
                z = rot(z + w0, 33) * _K1
                v0, v1 = weak32(b, i, v1 * _K1, x + w0)
                w0, w1 = weak32(b, i + 32, z + w1, y + f64(b, i + 16))
                z, x = x, z
                i += 64
            n -= 128
        x = x + rot(v0 + z, 49) * _K0
        y = y * _K0 + rot(w1, 37)
        z = z * _K0 + rot(w0, 27)
        w0 = w0 * np.uint64(9)
        v0 = v0 * _K0
        done = 0
        while done < n:
            done += 32
            y = rot(x + y, 42) * _K0 + v1
            w0 = w0 + f64(b, i + n - done + 16)
            x = x * _K0 + w0
            z = z + w1 + f64(b, i + n - done)
            w1 = w1 + v0
            v0, v1 = weak32(b, i + n - done, v0 + z, v1)
            v0 = v0 * _K0
        x = len16(x, v0, _KMUL)
        y = len16(y + z, w0, _KMUL)
        return len16(x + v1, w1, _KMUL) + y, len16(x + w1, y + v1, _KMUL)

    @njit(cache=True)
    def each(b, starts, lens, out):
        for k in range(starts.shape[0]):
            s, n = starts[k], lens[k]
            if n >= 16:
                lo, hi = city128(b, s + 16, n - 16, f64(b, s), f64(b, s + 8) + _K0)
            else:
                lo, hi = city128(b, s, n, _K0, _K1)
            out[k, 0] = lo
            out[k, 1] = hi

    return each


kernels = built_once(_build)


def fingerprint128_strings(values: list) -> np.ndarray | None:
    """uint64 [n, 2]: (low, high) Fingerprint128 of each bytes value; None without numba."""
    each = kernels()
    if each is None:
        return None
    lens = np.fromiter(map(len, values), np.int64, len(values))
    buf = np.frombuffer(b"".join(values) + bytes(8), np.uint8)
    out = np.empty((len(values), 2), np.uint64)
    if out.shape[0]:
        each(buf, np.cumsum(lens) - lens, lens, out)
    return out

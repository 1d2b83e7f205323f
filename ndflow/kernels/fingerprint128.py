"""farmhash's Fingerprint128 (farmhashcc: CityHash128 v1.1.1), TensorFlow's `Fingerprint128`,
which SdcaFprint hashes example ids with. Pure Python on 64-bit integers kept in range by
masking: SdcaFprint hashes one mini-batch's ids, a few thousand short strings."""

from __future__ import annotations

from ndflow.kernels.farmhash import K0, K1, M, f64, len0to16, len16, rot, shift_mix, weak32


def _city_murmur(s: bytes, n: int, lo: int, hi: int) -> tuple:
    a, b, c, d = lo, hi, 0, 0
    left = n - 16
    if left <= 0:
        a = (shift_mix((a * K1) & M) * K1) & M
        c = (b * K1 + len0to16(s, n)) & M
        d = shift_mix((a + (f64(s, 0) if n >= 8 else c)) & M)
    else:
        c = len16((f64(s, n - 8) + K1) & M, a)
        d = len16((b + n) & M, (c + f64(s, n - 16)) & M)
        a = (a + d) & M
        i = 0
        while left > 0:
            a ^= (shift_mix((f64(s, i) * K1) & M) * K1) & M
            a = (a * K1) & M
            b ^= a
            c ^= (shift_mix((f64(s, i + 8) * K1) & M) * K1) & M
            c = (c * K1) & M
            d ^= c
            i += 16
            left -= 16
    a = len16(a, c)
    b = len16(d, b)
    return a ^ b, len16(b, a)


def _city128_with_seed(s: bytes, n: int, lo: int, hi: int) -> tuple:
    if n < 128:
        return _city_murmur(s, n, lo, hi)
    x, y, z = lo, hi, (n * K1) & M
    v0 = (rot(y ^ K1, 49) * K1 + f64(s, 0)) & M
    v1 = (rot(v0, 42) * K1 + f64(s, 8)) & M
    w0 = (rot((y + z) & M, 35) * K1 + x) & M
    w1 = (rot((x + f64(s, 88)) & M, 53) * K1) & M
    i = 0
    while n >= 128:
        for _ in range(2):  # the loop body, unrolled twice per 128 bytes as in CityHash
            x = (rot((x + y + v0 + f64(s, i + 8)) & M, 37) * K1) & M
            y = (rot((y + v1 + f64(s, i + 48)) & M, 42) * K1) & M
            x ^= w1
            y = (y + v0 + f64(s, i + 40)) & M
            z = (rot((z + w0) & M, 33) * K1) & M
            v0, v1 = weak32(s, i, (v1 * K1) & M, (x + w0) & M)
            w0, w1 = weak32(s, i + 32, (z + w1) & M, (y + f64(s, i + 16)) & M)
            z, x = x, z
            i += 64
        n -= 128
    x = (x + rot((v0 + z) & M, 49) * K0) & M
    y = (y * K0 + rot(w1, 37)) & M
    z = (z * K0 + rot(w0, 27)) & M
    w0 = (w0 * 9) & M
    v0 = (v0 * K0) & M
    done = 0
    while done < n:  # up to four 32-byte chunks from the end
        done += 32
        y = (rot((x + y) & M, 42) * K0 + v1) & M
        w0 = (w0 + f64(s, i + n - done + 16)) & M
        x = (x * K0 + w0) & M
        z = (z + w1 + f64(s, i + n - done)) & M
        w1 = (w1 + v0) & M
        v0, v1 = weak32(s, i + n - done, (v0 + z) & M, v1)
        v0 = (v0 * K0) & M
    x = len16(x, v0)
    y = len16((y + z) & M, w0)
    return (len16((x + v1) & M, w1) + y) & M, len16((x + w1) & M, (y + v1) & M)


def fingerprint128(s: bytes) -> tuple:
    """(low 64 bits, high 64 bits) of farmhash::Fingerprint128(s), as unsigned ints."""
    n = len(s)
    if n >= 16:
        return _city128_with_seed(s[16:], n - 16, f64(s, 0), (f64(s, 8) + K0) & M)
    return _city128_with_seed(s, n, K0, K1)

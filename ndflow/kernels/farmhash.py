"""The 64-bit building blocks FarmHash's Fingerprint64 (farmhashna) and Fingerprint128
(farmhashcc: CityHash128) share, in pure Python on integers kept in range by masking with M
(string_hash.py and fingerprint128.py build the hashes from them)."""

from __future__ import annotations

M = (1 << 64) - 1
K0, K1, K2 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F
KMUL = 0x9DDFEA08EB382D69


def f64(s: bytes, i: int) -> int:
    return int.from_bytes(s[i:i + 8], "little")


def f32(s: bytes, i: int) -> int:
    return int.from_bytes(s[i:i + 4], "little")


def rot(v: int, r: int) -> int:
    return ((v >> r) | (v << (64 - r))) & M


def shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def len16(u: int, v: int, mul: int = KMUL) -> int:
    a = ((u ^ v) * mul) & M
    a ^= a >> 47
    b = ((v ^ a) * mul) & M
    b ^= b >> 47
    return (b * mul) & M


def len0to16(s: bytes, n: int) -> int:
    if n >= 8:
        mul = (K2 + n * 2) & M
        a = (f64(s, 0) + K2) & M
        b = f64(s, n - 8)
        return len16((rot(b, 37) * mul + a) & M, ((rot(a, 25) + b) * mul) & M, mul)
    if n >= 4:
        mul = (K2 + n * 2) & M
        return len16((n + (f32(s, 0) << 3)) & M, f32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (shift_mix(((y * K2) ^ (z * K0)) & M) * K2) & M
    return K2


def weak32(s: bytes, i: int, a: int, b: int) -> tuple:
    w, x, y, z = f64(s, i), f64(s, i + 8), f64(s, i + 16), f64(s, i + 24)
    a = (a + w) & M
    b = rot((b + a + z) & M, 21)
    c = a
    a = (a + x + y) & M
    b = (b + rot(a, 44)) & M
    return (a + z) & M, (b + c) & M

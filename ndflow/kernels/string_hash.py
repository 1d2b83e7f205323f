"""The string hashes of TensorFlow's StringToHashBucket ops, in pure Python: FarmHash's
Fingerprint64 (farmhashna::Hash64; StringToHashBucketFast), SipHash-2-4 keyed by two uint64
(StringToHashBucketStrong) and TF's MurmurHash64A-style Hash64 with seed 0xDECAFCAFFE (the
legacy StringToHashBucket). Bucket = hash % num_buckets, as TensorFlow computes it.

The kernels hash whole tensors with string_hash_numba's loops over all the strings at once
(`*_array`); these functions are the reference and the path without numba."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import string_hash_numba
from ndflow.kernels.farmhash import K0, K1, K2, M, f64, len0to16, len16, rot, shift_mix, weak32
from ndflow.kernels.registry import host_kernel
from ndflow.ops import string_hash_ops


def _mix_ends(s: bytes, n: int, k: int) -> tuple:
    """The 17..64-byte hashes' mix of the first and last 16 bytes (the first word times k):
    (mul, a, and the two words len16 takes)."""
    mul = (K2 + n * 2) & M
    a = (f64(s, 0) * k) & M
    b = f64(s, 8)
    c = (f64(s, n - 8) * mul) & M
    d = (f64(s, n - 16) * K2) & M
    return (mul, a, (rot((a + b) & M, 43) + rot(c, 30) + d) & M,
            (a + rot((b + K2) & M, 18) + c) & M)


def _len17to32(s: bytes, n: int) -> int:
    mul, _, u, v = _mix_ends(s, n, K1)
    return len16(u, v, mul)


def _len33to64(s: bytes, n: int) -> int:
    mul, a, y, v = _mix_ends(s, n, K2)
    z = len16(y, v, mul)
    e = (f64(s, 16) * mul) & M
    f = f64(s, 24)
    g = ((y + f64(s, n - 32)) * mul) & M
    h = ((z + f64(s, n - 24)) * mul) & M
    return len16((rot((e + f) & M, 43) + rot(g, 30) + h) & M,
                 (e + rot((f + a) & M, 18) + g) & M, mul)




def fingerprint64(s: bytes) -> int:
    """FarmHash's Fingerprint64 (farmhashna::Hash64) of `s`."""
    n = len(s)
    if n <= 16:
        return len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    seed = 81
    x, y = seed, (seed * K1 + 113) & M
    z = (shift_mix((y * K2 + 113) & M) * K2) & M
    v, w = (0, 0), (0, 0)
    x = (x * K2 + f64(s, 0)) & M
    end, last64 = ((n - 1) // 64) * 64, n - 64
    i = 0
    while True:
        x = (rot((x + y + v[0] + f64(s, i + 8)) & M, 37) * K1) & M
        y = (rot((y + v[1] + f64(s, i + 48)) & M, 42) * K1) & M
        x ^= w[1]
        y = (y + v[0] + f64(s, i + 40)) & M
        z = (rot((z + w[0]) & M, 33) * K1) & M
        v = weak32(s, i, (v[1] * K1) & M, (x + w[0]) & M)
        w = weak32(s, i + 32, (z + w[1]) & M, (y + f64(s, i + 16)) & M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = (K1 + ((z & 0xFF) << 1)) & M
    i = last64
    w = ((w[0] + ((n - 1) & 63)) & M, w[1])
    v = ((v[0] + w[0]) & M, v[1])
    w = ((w[0] + v[0]) & M, w[1])
    x = (rot((x + y + v[0] + f64(s, i + 8)) & M, 37) * mul) & M
    y = (rot((y + v[1] + f64(s, i + 48)) & M, 42) * mul) & M
    x ^= (w[1] * 9) & M
    y = (y + v[0] * 9 + f64(s, i + 40)) & M
    z = (rot((z + w[0]) & M, 33) * mul) & M
    v = weak32(s, i, (v[1] * mul) & M, (x + w[0]) & M)
    w = weak32(s, i + 32, (z + w[1]) & M, (y + f64(s, i + 16)) & M)
    z, x = x, z
    return len16((len16(v[0], w[0], mul) + shift_mix(y) * K0 + z) & M,
                 (len16(v[1], w[1], mul) + x) & M, mul)


def _sip_round(v0, v1, v2, v3):
    v0 = (v0 + v1) & M
    v1 = rot(v1, 64 - 13) ^ v0
    v0 = rot(v0, 64 - 32)
    v2 = (v2 + v3) & M
    v3 = rot(v3, 64 - 16) ^ v2
    v0 = (v0 + v3) & M
    v3 = rot(v3, 64 - 21) ^ v0
    v2 = (v2 + v1) & M
    v1 = rot(v1, 64 - 17) ^ v2
    v2 = rot(v2, 64 - 32)
    return v0, v1, v2, v3


def siphash24(k0: int, k1: int, s: bytes) -> int:
    """SipHash-2-4 of `s` under the 128-bit key (k0, k1)."""
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261,
         k1 ^ 0x7465646279746573]
    n = len(s)
    tail = s[n - n % 8:] + bytes(7 - n % 8) + bytes([n & 0xFF])
    for i in range(0, n - n % 8, 8):
        m = f64(s, i)
        v[3] ^= m
        v = list(_sip_round(*_sip_round(*v)))
        v[0] ^= m
    m = f64(tail, 0)
    v[3] ^= m
    v = list(_sip_round(*_sip_round(*v)))
    v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(4):
        v = list(_sip_round(*v))
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def legacy_hash64(s: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TensorFlow's Hash64 (core/lib/hash): MurmurHash64A with its default seed."""
    m, n = 0xC6A4A7935BD1E995, len(s)
    h = (seed ^ (n * m)) & M
    for i in range(0, n - n % 8, 8):
        k = (f64(s, i) * m) & M
        k ^= k >> 47
        h = ((h ^ ((k * m) & M)) * m) & M
    rest = s[n - n % 8:]
    if rest:
        for j in range(len(rest) - 1, -1, -1):
            h ^= rest[j] << (8 * j)
        h = (h * m) & M
    h ^= h >> 47
    h = (h * m) & M
    return h ^ (h >> 47)


_LEGACY_SEED = 0xDECAFCAFFE


def _hashes(values, which: int, scalar_fn, *args) -> np.ndarray:
    flat = np.asarray(values, dtype=object).reshape(-1)
    if string_hash_numba.kernels() is None:
        return np.array([scalar_fn(*args, v.encode() if isinstance(v, str) else bytes(v))
                         for v in flat], dtype=np.uint64)
    return string_hash_numba.hash_strings(which, flat, *args)


def fingerprint64_array(values) -> np.ndarray:
    """uint64 Fingerprint64 of each string of an object array (flattened)."""
    return _hashes(values, string_hash_numba.FINGERPRINT64, fingerprint64)


def siphash24_array(k0: int, k1: int, values) -> np.ndarray:
    return _hashes(values, string_hash_numba.SIPHASH24, siphash24, k0, k1)


def legacy_hash64_array(values) -> np.ndarray:
    return _hashes(values, string_hash_numba.MURMUR64, lambda _, v: legacy_hash64(v),
                   _LEGACY_SEED)


def _bucket_kernel(hash_array):
    def factory(node):
        n = np.uint64(node.attrs["num_buckets"])

        def bucket(x):
            h = hash_array(x) % n     # uint64 % uint64, as TF's
            return torch.from_numpy(h.astype(np.int64)).reshape(np.shape(x))
        return bucket
    return factory


host_kernel(string_hash_ops.StringToHashBucketFast)(_bucket_kernel(fingerprint64_array))
host_kernel(string_hash_ops.StringToHashBucket)(_bucket_kernel(legacy_hash64_array))


@host_kernel(string_hash_ops.StringToHashBucketStrong)
def _strong(node):
    key = list(node.attrs["key"])
    if len(key) != 2:
        raise InvalidArgumentError(None, None, "Key must have 2 elements")
    k0, k1 = (k & M for k in key)
    return _bucket_kernel(lambda v: siphash24_array(k0, k1, v))(node)


def _row_fingerprints(rows: np.ndarray) -> np.ndarray:
    """Fingerprint64 of each row's bytes (little-endian numbers)."""
    if string_hash_numba.kernels() is None:
        return np.array([fingerprint64(np.ascontiguousarray(r).astype(
            r.dtype.newbyteorder("<")).tobytes()) for r in rows], dtype=np.uint64)
    return string_hash_numba.hash_spans(string_hash_numba.FINGERPRINT64,
                                        string_hash_numba.rows_spans(rows))


@host_kernel(string_hash_ops.Fingerprint)
def _fingerprint(node):  # noqa: ARG001
    def run(data, method):
        m = np.asarray(method, dtype=object).item()
        m = m.decode() if isinstance(m, bytes) else str(m)
        if m != "farmhash64":
            raise InvalidArgumentError(None, None, f"Unsupported fingerprint method: {m}")
        arr = data.numpy() if isinstance(data, torch.Tensor) else np.asarray(data)
        if arr.ndim < 1:
            raise InvalidArgumentError(None, None, "`data` should have at least one "
                                                   f"dimension: {list(arr.shape)}")
        rows = arr.reshape(arr.shape[0], int(np.prod(arr.shape[1:])))   # [0, ...] too
        if arr.dtype == object:   # strings: each one's fingerprint, then of their bytes
            prints = fingerprint64_array(rows).reshape(rows.shape)
            fp = prints[:, 0] if rows.shape[1] == 1 else _row_fingerprints(prints)
        else:
            fp = _row_fingerprints(rows)
        return torch.from_numpy(fp.astype("<u8").view(np.uint8).reshape(-1, 8))
    return run

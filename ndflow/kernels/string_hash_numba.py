"""The string hashes of kernels/string_hash.py over many strings at once, by numba loops bit
for bit the pure-Python reference's: FarmHash's Fingerprint64 (farmhashna::Hash64),
SipHash-2-4 and TensorFlow's MurmurHash64A-style Hash64. A Python call per string (even into
C, as pyfarmhash's) costs more than hashing it, and so does a `len` per string on large
arrays (each a cache miss), so the loops find each string where it is:

- `hash_strings` reads each `bytes` object of an object array where it lies (CPython's
  PyBytesObject: type, size and inline data at fixed offsets, checked on probe objects
  before first use; the array holds the objects alive and the GIL is held), its type first;
- where that layout is not CPython's, or an element is not exactly `bytes` (a str, a bytes
  subclass), the strings are packed instead: their concatenation and offsets (`pack`).

`kernels()` is None without numba: the callers then loop over the pure-Python functions."""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from ndflow.kernels.build_once import built_once

_K0 = np.uint64(0xC3A5C85C97CB3127)
_K1 = np.uint64(0xB492B66FBE98F273)
_K2 = np.uint64(0x9AE16A3B2F90404F)
_MURMUR = np.uint64(0xC6A4A7935BD1E995)
_SIP0, _SIP1 = np.uint64(0x736F6D6570736575), np.uint64(0x646F72616E646F6D)
_SIP2, _SIP3 = np.uint64(0x6C7967656E657261), np.uint64(0x7465646279746573)
_U0, _U8, _U47, _UFF = np.uint64(0), np.uint64(8), np.uint64(47), np.uint64(0xFF)
FINGERPRINT64, SIPHASH24, MURMUR64 = 0, 1, 2      # which hash


class Spans:
    """Where n strings lie: uint64 start addresses and int64 lengths, and the objects that
    own that memory (kept alive while the spans are)."""

    def __init__(self, addrs: np.ndarray, lens: np.ndarray, owner):
        self.addrs, self.lens, self.owner = addrs, lens, owner


def _bytes_layout():
    """(address of `bytes`, offset of ob_type, of ob_size, of the data) when every probe
    reads back as CPython lays out a PyBytesObject; None otherwise."""
    if sys.implementation.name != "cpython":
        return None
    head = object.__basicsize__          # PyObject: ..., ob_type last
    layout = (id(bytes), head - 8, head, bytes.__basicsize__ - 1)
    for probe in (b"", b"a", b"ab\x00c", bytes(range(256)) * 3):
        at = id(probe)
        if (ctypes.c_uint64.from_address(at + layout[1]).value != layout[0]
                or ctypes.c_int64.from_address(at + layout[2]).value != len(probe)
                or ctypes.string_at(at + layout[3], len(probe)) != probe):
            return None
    return layout


_LAYOUT = _bytes_layout()


def pack(flat: np.ndarray) -> Spans:
    """The spans of a 1-D object array of bytes (a str counts as its UTF-8 bytes) in one
    buffer of their concatenation."""
    values = flat.tolist()
    try:
        data = b"".join(values)
    except TypeError:     # not all bytes: str (UTF-8) or bytes-like objects
        values = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
        data = b"".join(values)
    lens = np.fromiter(map(len, values), np.int64, len(values))
    buf = np.frombuffer(data + bytes(8), np.uint8)
    starts = np.cumsum(lens) - lens
    return Spans(np.uint64(buf.ctypes.data) + starts.astype(np.uint64), lens, buf)


def rows_spans(rows: np.ndarray) -> Spans:
    """The spans of each row of a 2-D numeric array as one string: its bytes as stored
    (little-endian)."""
    rows = np.ascontiguousarray(rows.astype(rows.dtype.newbyteorder("<"), copy=False))
    width = rows.shape[1] * rows.dtype.itemsize
    buf = np.concatenate([rows.view(np.uint8).reshape(-1), np.zeros(8, np.uint8)])
    starts = np.arange(rows.shape[0], dtype=np.uint64) * np.uint64(width)
    return Spans(np.uint64(buf.ctypes.data) + starts, np.full(rows.shape[0], width, np.int64),
                 buf)


# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
load_u64 = load_u32 = load_u8 = rot = hash_len16 = farm_na = weak32 = sip_round = None
sip24 = murmur = hash_one = mix_ends = None


def _build():
    if sys.byteorder != "little":   # the loads below read words as FarmHash's little-endian
        return None
    try:
        from llvmlite import ir  # noqa: PLC0415 - loads with the first string hash, not ndflow
        from numba import njit, types  # noqa: PLC0415
        from numba.extending import intrinsic  # noqa: PLC0415
    except ImportError:
        return None
    global load_u64, load_u32, load_u8, rot, hash_len16, farm_na, weak32, sip_round, sip24, \
        murmur, hash_one, mix_ends

    def loader(bits):
        @intrinsic
        def load(typingctx, addr):
            """The `bits`-bit word at byte address `addr` (any alignment) as a uint64."""
            def codegen(context, builder, signature, args):
                ptr = builder.inttoptr(args[0], ir.IntType(bits).as_pointer())
                value = builder.load(ptr, align=1)
                return value if bits == 64 else builder.zext(value, ir.IntType(64))
            return types.uint64(types.uint64), codegen
        return load

    load_u64, load_u32, load_u8 = loader(64), loader(32), loader(8)

    @njit(cache=True, inline="always")
    def rot(v, shift):
        return (v >> np.uint64(shift)) | (v << np.uint64(64 - shift))

    @njit(cache=True, inline="always")
    def hash_len16(u, v, mul):
        a = (u ^ v) * mul
        a ^= a >> _U47
        b = (v ^ a) * mul
        b ^= b >> _U47
        return b * mul

    @njit(cache=True, inline="always")
    def weak32(p, a, b):
        w, x, y, z = (load_u64(p), load_u64(p + _U8), load_u64(p + np.uint64(16)),
                      load_u64(p + np.uint64(24)))
        a = a + w
        b = rot(b + a + z, 21)
        c = a
        a = a + x + y
        b = b + rot(a, 44)
        return a + z, b + c

    @njit(cache=True, inline="always")
    def mix_ends(p, un, k):
        """farmhashna's 17..64-byte mix of the first and last 16 bytes (the first word times
        k): (mul, a, and the two words hash_len16 takes)."""
        mul = _K2 + un * np.uint64(2)
        a = load_u64(p) * k
        b = load_u64(p + _U8)
        c = load_u64(p + un - _U8) * mul
        d = load_u64(p + un - np.uint64(16)) * _K2
        return mul, a, rot(a + b, 43) + rot(c, 30) + d, a + rot(b + _K2, 18) + c

    @njit(cache=True)
    def farm_na(p, n):
        """farmhashna::Hash64 of the n bytes at address p."""
        un = np.uint64(n)
        if n <= 16:
            if n >= 8:
                mul = _K2 + un * np.uint64(2)
                a = load_u64(p) + _K2
                b = load_u64(p + un - _U8)
                c = rot(b, 37) * mul + a
                d = (rot(a, 25) + b) * mul
                return hash_len16(c, d, mul)
            if n >= 4:
                mul = _K2 + un * np.uint64(2)
                return hash_len16(un + (load_u32(p) << np.uint64(3)),
                                  load_u32(p + un - np.uint64(4)), mul)
            if n > 0:
                y = load_u8(p) + (load_u8(p + (un >> np.uint64(1))) << _U8)
                z = un + (load_u8(p + un - np.uint64(1)) << np.uint64(2))
                h = (y * _K2) ^ (z * _K0)
                return (h ^ (h >> _U47)) * _K2
            return _K2
        if n <= 32:
            mul, _, u, v = mix_ends(p, un, _K1)
            return hash_len16(u, v, mul)
        if n <= 64:
            mul, a, y, v = mix_ends(p, un, _K2)
            z = hash_len16(y, v, mul)
            e = load_u64(p + np.uint64(16)) * mul
            f = load_u64(p + np.uint64(24))
            g = (y + load_u64(p + un - np.uint64(32))) * mul
            h = (z + load_u64(p + un - np.uint64(24))) * mul
            return hash_len16(rot(e + f, 43) + rot(g, 30) + h, e + rot(f + a, 18) + g, mul)
        x = np.uint64(81)
        y = x * _K1 + np.uint64(113)
        z = y * _K2 + np.uint64(113)
        z = (z ^ (z >> _U47)) * _K2
        v0, v1, w0, w1 = _U0, _U0, _U0, _U0
        x = x * _K2 + load_u64(p)
        end = p + np.uint64(((n - 1) // 64) * 64)
        i = p
        while True:
            x = rot(x + y + v0 + load_u64(i + np.uint64(8)), 37) * _K1
            y = rot(y + v1 + load_u64(i + np.uint64(48)), 42) * _K1
            x ^= w1
            y = y + v0 + load_u64(i + np.uint64(40))
            z = rot(z + w0, 33) * _K1
            v0, v1 = weak32(i, v1 * _K1, x + w0)
            w0, w1 = weak32(i + np.uint64(32), z + w1, y + load_u64(i + np.uint64(16)))
            z, x = x, z
            i += np.uint64(64)
            if i == end:
                break
        mul = _K1 + ((z & _UFF) << np.uint64(1))
        i = p + un - np.uint64(64)
        w0 = w0 + np.uint64((n - 1) & 63)
        v0 = v0 + w0
        w0 = w0 + v0
        x = rot(x + y + v0 + load_u64(i + np.uint64(8)), 37) * mul
        y = rot(y + v1 + load_u64(i + np.uint64(48)), 42) * mul
        x ^= w1 * np.uint64(9)
        y = y + v0 * np.uint64(9) + load_u64(i + np.uint64(40))
        z = rot(z + w0, 33) * mul
        v0, v1 = weak32(i, v1 * mul, x + w0)
        w0, w1 = weak32(i + np.uint64(32), z + w1, y + load_u64(i + np.uint64(16)))
        z, x = x, z
        return hash_len16(hash_len16(v0, w0, mul) + (y ^ (y >> _U47)) * _K0 + z,
                          hash_len16(v1, w1, mul) + x, mul)

    @njit(cache=True, inline="always")
    def sip_round(v0, v1, v2, v3):
        v0 = v0 + v1
        v1 = rot(v1, 51) ^ v0
        v0 = rot(v0, 32)
        v2 = v2 + v3
        v3 = rot(v3, 48) ^ v2
        v0 = v0 + v3
        v3 = rot(v3, 43) ^ v0
        v2 = v2 + v1
        v1 = rot(v1, 47) ^ v2
        v2 = rot(v2, 32)
        return v0, v1, v2, v3

    @njit(cache=True)
    def sip24(p, n, k0, k1):
        """SipHash-2-4 under (k0, k1) of the n bytes at address p."""
        v0, v1, v2, v3 = k0 ^ _SIP0, k1 ^ _SIP1, k0 ^ _SIP2, k1 ^ _SIP3
        tail = p + np.uint64(n - n % 8)
        while p < tail:
            m = load_u64(p)
            v3 ^= m
            v0, v1, v2, v3 = sip_round(v0, v1, v2, v3)
            v0, v1, v2, v3 = sip_round(v0, v1, v2, v3)
            v0 ^= m
            p += _U8
        m = np.uint64(n & 0xFF) << np.uint64(56)
        for j in range(n % 8):
            m |= load_u8(tail + np.uint64(j)) << np.uint64(8 * j)
        v3 ^= m
        v0, v1, v2, v3 = sip_round(v0, v1, v2, v3)
        v0, v1, v2, v3 = sip_round(v0, v1, v2, v3)
        v0 ^= m
        v2 ^= _UFF
        for _ in range(4):
            v0, v1, v2, v3 = sip_round(v0, v1, v2, v3)
        return v0 ^ v1 ^ v2 ^ v3

    @njit(cache=True)
    def murmur(p, n, seed):
        """TensorFlow's Hash64 (MurmurHash64A) under `seed` of the n bytes at address p."""
        h = seed ^ (np.uint64(n) * _MURMUR)
        tail = p + np.uint64(n - n % 8)
        while p < tail:
            m = load_u64(p) * _MURMUR
            m ^= m >> _U47
            h = (h ^ (m * _MURMUR)) * _MURMUR
            p += _U8
        if n % 8:
            for j in range(n % 8 - 1, -1, -1):
                h ^= load_u8(tail + np.uint64(j)) << np.uint64(8 * j)
            h = h * _MURMUR
        h ^= h >> _U47
        h = h * _MURMUR
        return h ^ (h >> _U47)

    @njit(cache=True, inline="always")
    def hash_one(which, p, n, k0, k1):
        if which == FINGERPRINT64:
            return farm_na(p, n)
        if which == SIPHASH24:
            return sip24(p, n, k0, k1)
        return murmur(p, n, k0)

    @njit(cache=True)
    def each_span(which, addrs, lens, k0, k1, out):
        for k in range(out.shape[0]):
            out[k] = hash_one(which, addrs[k], lens[k], k0, k1)

    @njit(cache=True)
    def each_object(which, ptrs, type_addr, type_at, size_at, data_at, k0, k1, out):
        """The hash of each bytes object, read where it lies (one pass: a large array's
        objects are visited once); the index of the first object that is not exactly
        `bytes` (its type read before anything else), or -1."""
        for k in range(ptrs.shape[0]):
            obj = ptrs[k]
            if load_u64(obj + type_at) != type_addr:
                return k
            out[k] = hash_one(which, obj + data_at, np.int64(load_u64(obj + size_at)), k0, k1)
        return -1

    return each_span, each_object


# (each_span, each_object) or None without numba
kernels = built_once(_build)


def hash_spans(which: int, where: Spans, k0: int = 0, k1: int = 0) -> np.ndarray:
    """uint64 hash `which` (FINGERPRINT64, SIPHASH24 under (k0, k1), MURMUR64 under seed k0)
    of each span."""
    out = np.empty(where.lens.size, np.uint64)
    if out.size:
        kernels()[0](which, where.addrs, where.lens, np.uint64(k0), np.uint64(k1), out)
    return out


def hash_strings(which: int, flat: np.ndarray, k0: int = 0, k1: int = 0) -> np.ndarray:
    """uint64 hash `which` of each string of a 1-D object array: read from the bytes objects
    in place where it can, else packed."""
    flat = np.ascontiguousarray(flat, dtype=object)
    if _LAYOUT is None or flat.size == 0:
        return hash_spans(which, pack(flat), k0, k1)
    ptrs = np.frombuffer((ctypes.c_uint64 * flat.size).from_address(flat.ctypes.data),
                         np.uint64)
    out = np.empty(flat.size, np.uint64)
    if kernels()[1](which, ptrs, *(np.uint64(v) for v in _LAYOUT), np.uint64(k0),
                    np.uint64(k1), out) >= 0:
        return hash_spans(which, pack(flat), k0, k1)   # an element that is not exactly bytes
    return out

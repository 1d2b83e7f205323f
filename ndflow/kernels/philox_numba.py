"""TensorFlow's Philox4x32-10 streams and distributions (kernels/philox.py) as numba kernels.

`generate(kind, float_kind, n, key, counter, lo, hi)` fills a new array with what TF's CPU
`FillPhiloxRandom` writes for a generator at (key, counter):

- fixed-sample distributions (uniform, normal, integers): group g of k values (4 from 32-bit
  words, 2 from 64-bit ones) is the distribution of Philox(counter + g);
- the truncated normal (a variable number of samples per output): group g draws from its own
  sub-stream starting at counter + g * 256 (4 values) or g * 128 (2 float64 values), taking
  Box-Muller pairs until k fall strictly inside 2 stddev (TF's TruncatedNormalDistribution).

Box-Muller uses the C library's float `logf`/`sqrtf`/`sinf`/`cosf` (numba's float32 math calls
them, as TF's BoxMullerFloat does), which makes float32 normals bit-equal to TensorFlow's.
16-bit floats come out as float32 (exact for uniforms, TF's float math before rounding for
normals); the caller rounds them.

`generate_elements(kind, float_kind, count, n, ...)` draws `count` executions of n values at
once (a vectorized tf.data map's random op: element k at counter + k * n * 256, as its own
execution would draw), one kernel call for float32/16-bit uniforms.

The uniform kernels (float32/16-bit, float64, int32) are loops LLVM vectorizes: two Philox
groups per iteration, in uint64 lanes (see `_build`). On a Xeon with AVX-512, one thread, a
float32 uniform costs ~0.65 ns (the scalar loop took 2.4 ns), a raw int32 word 0.7 ns, a
bounded one 0.9 ns, a float64 uniform 1.3 ns; normals ~8 ns (the C library calls).

The kernels are compiled with `cache=True` (another process loads the machine code from disk)
and `nogil=True` (tf.data's parallel maps draw concurrently), one signature each:
`(out, params)` with every scalar in a uint64 `params` array. numba is imported on the first
draw; without it the NumPy implementation of kernels/philox.py gives the same values, slower.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.kernels import omp_pool, philox
from ndflow.kernels.build_once import built_once

_U = np.uint64
_M0, _M1 = _U(0xD2511F53), _U(0xCD9E8D57)
_W0, _W1 = _U(0x9E3779B9), _U(0xBB67AE85)
_MK = _U(0xFFFFFFFF)
_S32 = _U(32)
_F23, _F10, _F7 = np.float32(2.0**-23), np.float32(2.0**-10), np.float32(2.0**-7)
_D52 = 2.0**-52
_EPS32, _EPS64 = np.float32(1e-7), 1e-7
_TWO_PI = 2.0 * math.pi
_TWO32, _TWO64 = np.float32(2.0), 2.0
_TWO31 = 2.0**31
_ONE_HI, _M20 = _U(0x3FF00000), _U(0xFFFFF)   # 1.0's high word; a double's 20 high mantissa bits


# The helpers every Philox kernel inlines (these and kernels/stateless_random_extra_numba.py's):
# module globals, not closure cells (numba's disk cache refuses closures), set on the first
# build. numba's disk cache keys a kernel on its own file's content (a hash, not the mtime):
# stateless_random_extra_numba.py names the hash of `_build_helpers`'s source, which
# tests/ops/test_numba_disk_cache.py checks, so that a change here changes that file too.
philox_round = philox4x32 = philox4x32_pair = advance = key_counter = None
uniform_double = box_muller_float = box_muller_double = uniform_f32_groups = None
keep_inside = None   # _build's


def _build_helpers() -> bool:
    """Sets the helpers (inlined where they are called); False without numba."""
    try:
        import numba  # noqa: PLC0415 - loads on the first draw, not with `import ndflow`
    except ImportError:
        return False
    global philox_round, philox4x32, philox4x32_pair, advance, key_counter
    global uniform_double, box_muller_float, box_muller_double, uniform_f32_groups
    inline = numba.njit(nogil=True, inline="always")

    @inline
    def philox_round(x0, x1, x2, x3, a, b):
        """One Philox4x32 round of the words x0..x3 (uint64s under 2**32) under the round
        key (a, b): two 32x32 -> 64-bit products (vpmuludq where the kernel's loop
        vectorizes), shifts and three-way xors."""
        p0, p1 = _M0 * x0, _M1 * x2
        return (p1 >> _S32) ^ x1 ^ a, p1 & _MK, (p0 >> _S32) ^ x3 ^ b, p0 & _MK

    @inline
    def philox4x32(lo, hi, k0, k1):
        """Philox4x32-10 of the 128-bit counter (lo, hi) under the key (k0, k1): its four
        32-bit words, as uint64s. The key words are masked to 32 bits, so that LLVM knows
        every word is (and every product 32x32 bits)."""
        x0, x1, x2, x3 = lo & _MK, lo >> _S32, hi & _MK, hi >> _S32
        a, b = k0 & _MK, k1 & _MK
        for _ in range(10):
            x0, x1, x2, x3 = philox_round(x0, x1, x2, x3, a, b)
            a, b = (a + _W0) & _MK, (b + _W1) & _MK
        return x0, x1, x2, x3

    @inline
    def philox4x32_pair(lo, hi, k0, k1):
        """`philox4x32` of the counters (lo, hi) and (lo, hi) + 1: eight words. The two
        chains' rounds interleave in one loop, which keeps the multiplier busy (two calls
        one after the other leave a vectorized loop ~6% slower)."""
        lo2, hi2 = advance(lo, hi, _U(1))
        x0, x1, x2, x3 = lo & _MK, lo >> _S32, hi & _MK, hi >> _S32
        y0, y1, y2, y3 = lo2 & _MK, lo2 >> _S32, hi2 & _MK, hi2 >> _S32
        a, b = k0 & _MK, k1 & _MK
        for _ in range(10):
            x0, x1, x2, x3 = philox_round(x0, x1, x2, x3, a, b)
            y0, y1, y2, y3 = philox_round(y0, y1, y2, y3, a, b)
            a, b = (a + _W0) & _MK, (b + _W1) & _MK
        return x0, x1, x2, x3, y0, y1, y2, y3

    @inline
    def advance(lo, hi, n):
        """The 128-bit counter (lo, hi) plus n (uint64)."""
        new = lo + n
        return new, hi + (_U(1) if new < lo else _U(0))

    @inline
    def key_counter(params):
        """(key0, key1, counter lo, counter hi) of params[:6]: the key's words, then the
        counter's four."""
        return (params[0], params[1], params[2] | (params[3] << _S32),
                params[4] | (params[5] << _S32))

    @inline
    def uniform_double(a, b):
        """TF's Uint64ToDouble: [0, 1) from 52 bits, 20 of word a and all of word b."""
        return np.float64(np.int64(((a & _M20) << _S32) | b)) * _D52

    @inline
    def box_muller_float(a, b):
        """TF's BoxMullerFloat: two float32 normals from two words, in float32 math (the C
        library's logf, sqrtf, sinf and cosf, as TF's)."""
        u1 = np.float32(np.int32(a & _U(0x7FFFFF))) * _F23
        if u1 < _EPS32:
            u1 = _EPS32
        v1 = np.float32(_TWO_PI * np.float64(np.float32(np.int32(b & _U(0x7FFFFF))) * _F23))
        u2 = math.sqrt(np.float32(-2.0) * math.log(u1))
        return math.sin(v1) * u2, math.cos(v1) * u2

    @inline
    def box_muller_double(x0, x1, x2, x3):
        """TF's BoxMullerDouble: two float64 normals from the four words."""
        u1 = uniform_double(x0, x1)
        if u1 < _EPS64:
            u1 = _EPS64
        v1 = _TWO_PI * uniform_double(x2, x3)
        u2 = math.sqrt(-2.0 * math.log(u1))
        return math.sin(v1) * u2, math.cos(v1) * u2

    @inline
    def uniform_f32_groups(o, k0, k1, base_lo, base_hi, bits, first, count):
        """Pairs of groups first..first + count - 1 counted from (base_lo, base_hi) into o
        (from o[0]): floats of `bits` random mantissa bits in [0, 1), eight a pair."""
        mask = (_U(1) << bits) - _U(1)
        scale = np.float32(1.0) / np.float32(_U(1) << bits)
        first = np.int64(first)   # int64 with int64 (numba adds int64 and uint64 as floats)
        for i in range(np.int64(count)):
            lo, hi = advance(base_lo, base_hi, _U(2) * _U(first + i))
            x0, x1, x2, x3, y0, y1, y2, y3 = philox4x32_pair(lo, hi, k0, k1)
            j = 8 * i
            o[j] = np.float32(np.int32(x0 & mask)) * scale
            o[j + 1] = np.float32(np.int32(x1 & mask)) * scale
            o[j + 2] = np.float32(np.int32(x2 & mask)) * scale
            o[j + 3] = np.float32(np.int32(x3 & mask)) * scale
            o[j + 4] = np.float32(np.int32(y0 & mask)) * scale
            o[j + 5] = np.float32(np.int32(y1 & mask)) * scale
            o[j + 6] = np.float32(np.int32(y2 & mask)) * scale
            o[j + 7] = np.float32(np.int32(y3 & mask)) * scale

    return True


# True once the helpers are set (False without numba)
helpers = built_once(_build_helpers)


def _build() -> dict:
    """The numba kernels by name, or {} without numba."""
    if not helpers():
        return {}
    import numba  # noqa: PLC0415 - loads on the first draw, not with `import ndflow`
    global keep_inside
    jit = numba.njit(cache=True, nogil=True)

    @numba.njit(cache=True, nogil=True, inline="always")
    def keep_inside(out, first, got, want, v, bound):
        """A truncated normal's step: v stored at out[first + got] when |v| < bound and fewer
        than `want` are kept. The new count."""
        if abs(v) < bound and got < want:
            out[first + got] = v
            return got + 1
        return got

    # params: key0, key1, counter word 0..3, then the distribution's own (see each kernel).
    # `out` holds whole groups (whole pairs of groups for the uniforms); the caller trims.

    # The uniform kernels draw a pair of groups (counters c and c + 1, `philox4x32_pair`) per
    # iteration (an odd group count draws one group more, so no tail branch). LLVM vectorizes
    # the loop over pairs in uint64 lanes, 8 pairs per AVX-512 iteration: each round is
    # vpmuludq (32x32 -> 64 bits), a shift and a three-way xor, and the pair's two
    # independent chains keep the multiplier busy where one chain per iteration left the loop
    # waiting on its latency (1.0 ns per float32 against 0.65). Four groups per iteration do
    # not vectorize (a 16-way interleaved store).

    @jit
    def uniform_f32(out, params):
        """params[6]: mantissa bits (23 float, 10 half, 7 bfloat16); params[7] consecutive
        executions (1, or a vectorized tf.data map's elements): execution e draws at counter +
        e * params[8] (its own reserve), params[9] pairs of groups each, into
        out[e * 8 * params[9]:]."""
        k0, k1, start_lo, start_hi = key_counter(params)
        pairs = params[9]
        for e in range(params[7]):
            base_lo, base_hi = advance(start_lo, start_hi, _U(e) * params[8])
            o = out[e * 8 * pairs:(e + 1) * 8 * pairs]   # a slice: unsigned indices, no wrap
            uniform_f32_groups(o, k0, k1, base_lo, base_hi, params[6], 0, pairs)

    @jit
    def uniform_f64(out, params):
        """Writes each double's bits as two 32-bit words, 1 + mantissa * 2**-52 (TF's
        construction), then subtracts 1 (exact): 64-bit stores of two values per group left
        LLVM at 4 lanes, 32-bit words vectorize at 8 as in uniform_f32."""
        k0, k1, base_lo, base_hi = key_counter(params)
        words = out.view(np.uint32)   # little-endian: low word first
        for i in range(out.shape[0] // 4):
            lo, hi = advance(base_lo, base_hi, _U(2) * _U(i))
            x0, x1, x2, x3, y0, y1, y2, y3 = philox4x32_pair(lo, hi, k0, k1)
            j = 8 * i
            words[j], words[j + 1] = np.uint32(x1), np.uint32(_ONE_HI | (x0 & _M20))
            words[j + 2], words[j + 3] = np.uint32(x3), np.uint32(_ONE_HI | (x2 & _M20))
            words[j + 4], words[j + 5] = np.uint32(y1), np.uint32(_ONE_HI | (y0 & _M20))
            words[j + 6], words[j + 7] = np.uint32(y3), np.uint32(_ONE_HI | (y2 & _M20))
        for i in range(out.shape[0]):
            out[i] -= 1.0

    @jit
    def normal_f32(out, params):
        """params[6]: 0 plain (4 values per Philox call), else truncated (4 per sub-stream of
        256 calls). Plain: the words first (a vector loop), then Box-Muller on them."""
        k0, k1, base_lo, base_hi = key_counter(params)
        truncated = params[6] != _U(0)
        groups = out.shape[0] // 4
        words = np.empty(0 if truncated else 4 * groups, np.uint32)
        if not truncated:
            for g in range(groups):
                lo, hi = advance(base_lo, base_hi, _U(g))
                x0, x1, x2, x3 = philox4x32(lo, hi, k0, k1)
                words[4 * g], words[4 * g + 1] = np.uint32(x0), np.uint32(x1)
                words[4 * g + 2], words[4 * g + 3] = np.uint32(x2), np.uint32(x3)
            for i in range(0, 4 * groups, 2):
                out[i], out[i + 1] = box_muller_float(_U(words[i]), _U(words[i + 1]))
            return
        for g in range(groups):
            lo, hi = advance(base_lo, base_hi, _U(g) * _U(256))
            got = 0
            while got < 4:
                x0, x1, x2, x3 = philox4x32(lo, hi, k0, k1)
                lo, hi = advance(lo, hi, _U(1))
                for pair in range(2):
                    u = x0 if pair == 0 else x2
                    v = x1 if pair == 0 else x3
                    f0, f1 = box_muller_float(u, v)
                    got = keep_inside(out, 4 * g, got, 4, f0, _TWO32)
                    got = keep_inside(out, 4 * g, got, 4, f1, _TWO32)

    @jit
    def normal_f64(out, params):
        """params[6]: 0 plain (2 values per Philox call), else truncated (2 per sub-stream of
        128 calls)."""
        k0, k1, base_lo, base_hi = key_counter(params)
        truncated = params[6] != _U(0)
        step = _U(128) if truncated else _U(1)
        for g in range(out.shape[0] // 2):
            lo, hi = advance(base_lo, base_hi, _U(g) * step)
            got = 0
            while got < 2:
                x0, x1, x2, x3 = philox4x32(lo, hi, k0, k1)
                lo, hi = advance(lo, hi, _U(1))
                d0, d1 = box_muller_double(x0, x1, x2, x3)
                if not truncated:
                    out[2 * g], out[2 * g + 1] = d0, d1
                    got = 2
                    continue
                got = keep_inside(out, 2 * g, got, 2, d0, _TWO64)   # got < 2 here
                got = keep_inside(out, 2 * g, got, 2, d1, _TWO64)

    @jit
    def int_u32(out, params):
        """int32 as uint32: params[6] = lo (mod 2**32), params[7] = span (0: the raw bits).
        The words first, then lo + word % span in a second pass, in float64, which LLVM
        vectorizes (integer division it does not): with inv = 1/span rounded, floor(word *
        inv) is exact or, for a multiple of span, one less (the product's error is under
        2**-20 / span, a non-multiple's quotient at least 1 / span below the next integer),
        so one correction gives the remainder; every value is an integer under 2**33."""
        k0, k1, base_lo, base_hi = key_counter(params)
        for i in range(out.shape[0] // 8):
            lo, hi = advance(base_lo, base_hi, _U(2) * _U(i))
            x0, x1, x2, x3, y0, y1, y2, y3 = philox4x32_pair(lo, hi, k0, k1)
            j = 8 * i
            out[j], out[j + 1], out[j + 2], out[j + 3] = (np.uint32(x0), np.uint32(x1),
                                                          np.uint32(x2), np.uint32(x3))
            out[j + 4], out[j + 5], out[j + 6], out[j + 7] = (np.uint32(y0), np.uint32(y1),
                                                              np.uint32(y2), np.uint32(y3))
        if params[7] == _U(0):
            return
        low, span = (params[6] + _U(0x80000000)) & _MK, np.float64(params[7])
        inv = 1.0 / span
        for i in range(out.shape[0]):
            w = np.float64(out[i])
            r = w - np.floor(w * inv) * span
            r = r - span if r >= span else r
            # r - 2**31 through int32 (AVX2 converts doubles to int32 lanes, not uint32 ones);
            # `low` holds the 2**31 back
            out[i] = np.uint32((low + _U(np.uint32(np.int32(r - _TWO31)))) & _MK)

    @jit
    def int_u64(out, params):
        """int64 as uint64: params[6] = lo (mod 2**64), params[7] = span (0: the raw bits)."""
        k0, k1, base_lo, base_hi = key_counter(params)
        low, span = params[6], params[7]
        raw = span == _U(0)
        div = _U(1) if raw else span
        for g in range(out.shape[0] // 2):
            lo, hi = advance(base_lo, base_hi, _U(g))
            x0, x1, x2, x3 = philox4x32(lo, hi, k0, k1)
            w0, w1 = x0 | (x1 << _S32), x2 | (x3 << _S32)
            out[2 * g] = w0 if raw else low + w0 % div
            out[2 * g + 1] = w1 if raw else low + w1 % div

    return {"uniform_f32": uniform_f32, "uniform_f64": uniform_f64, "normal_f32": normal_f32,
            "normal_f64": normal_f64, "int_u32": int_u32, "int_u64": int_u64}


# the numba kernels by name, built once per process on the first draw ({} without numba)
kernels = built_once(_build)


_MANTISSA = {"float": 23, "half": 10, "bfloat16": 7}


def generate(kind: str, float_kind: str, n: int, key, counter, lo: int = 0,
             hi: int = 0) -> np.ndarray:
    """n values of TF's `kind` distribution at Philox (key, counter): 'uniform', 'normal',
    'truncated_normal', 'uniform_int' (lo + bits % (hi - lo)) or 'full_int' (the raw bits).

    `float_kind`: 'half', 'bfloat16', 'float' or 'double' for floats (16-bit ones come back as
    float32), 'int32' or 'int64' for integers.
    """
    ks = kernels()
    if not ks:
        return _generate_numpy(kind, float_kind, n, key, counter, lo, hi)
    if kind in ("uniform_int", "full_int"):
        wide = float_kind == "int64"
        mask = 2**64 - 1 if wide else 0xFFFFFFFF
        span = (hi - lo) & mask if kind == "uniform_int" else 0
        params = np.array([*key, *counter, lo & mask, span], np.uint64)
        out = np.empty(_padded(n, 2 if wide else 8), np.uint64 if wide else np.uint32)
        ks["int_u64" if wide else "int_u32"](out, params)
        return out[:n].view(np.int64 if wide else np.int32)
    double = float_kind == "double"
    if kind == "uniform" and not double:
        return generate_elements(kind, float_kind, 1, n, key, counter)
    # whole groups of values (2 float64 normals, 4 float32 ones) or pairs (the float64 uniform)
    out = np.empty(_padded(n, 2 if double and kind != "uniform" else 4),
                   np.float64 if double else np.float32)
    if kind == "uniform":
        extra, name = 0, "uniform_f64"
    else:
        extra = int(kind == "truncated_normal")
        name = "normal_f64" if double else "normal_f32"
    ks[name](out, np.array([*key, *counter, extra, 0], np.uint64))
    return out[:n]


# float32/16-bit uniform draws of at least this many values run on ATen's OpenMP team, as
# TF's FillPhiloxRandom shards its groups over the intra-op threads (one thread: ~0.65 ns a
# value, so a 64x14x14x64 dropout mask took 0.5 ms)
PARALLEL_VALUES = 1 << 16
_CHUNK_PAIRS = 1 << 10     # pairs of groups (8 values) a thread claims at a time
claim_chunk = address_as_pointer = carray = None


def _build_parallel():
    """The OpenMP callback drawing chunks of a float32 uniform's pairs of groups, or None
    (no numba, or ATen's OpenMP launcher not found)."""
    if not helpers() or omp_pool.launcher() is None:
        return None
    import numba  # noqa: PLC0415 - loads on the first draw, not with `import ndflow`
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray

    # data = [counter, pairs, chunk, (address, length) of out, params, finished]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def uniform_f32_chunks(data):
        d = carray(data, 8, dtype=np.int64)
        pairs, chunk = d[1], d[2]
        out = carray(address_as_pointer(d[3], np.float32), d[4])
        params = carray(address_as_pointer(d[5], np.uint64), d[6])
        q = claim_chunk(data)
        while q * chunk < pairs:
            first, last = q * chunk, min(q * chunk + chunk, pairs)
            k0, k1, base_lo, base_hi = key_counter(params)
            uniform_f32_groups(out[8 * first:8 * last], k0, k1, base_lo, base_hi, params[6],
                               first, last - first)
            q = claim_chunk(data)

    return uniform_f32_chunks.address


_parallel = built_once(_build_parallel)


def generate_elements(kind: str, float_kind: str, count: int, n: int, key, counter,
                      lo: int = 0, hi: int = 0) -> np.ndarray:
    """`count` consecutive executions of n values each, concatenated: execution k draws at
    counter + k * n * 256, as `count` reserves of n outputs on one kernel state would (a
    vectorized tf.data map's random op, every element drawing what its own run would).
    float32/16-bit uniforms are one kernel call; other kinds one call per execution."""
    ks = kernels()
    if ks and kind == "uniform" and float_kind != "double" and count:
        pairs = _padded(n, 8) // 8
        out = np.empty(count * 8 * pairs, np.float32)
        params = np.array([*key, *counter, _MANTISSA[float_kind], count, n * 256, pairs],
                          np.uint64)
        threads = torch.get_num_threads()
        if count == 1 and n >= PARALLEL_VALUES and threads > 1 and _parallel() is not None:
            omp_pool.run_chunks(_parallel(), pairs, _CHUNK_PAIRS, [out, params],
                                min(threads, -(-pairs // _CHUNK_PAIRS)))
        else:
            ks["uniform_f32"](out, params)
        return out.reshape(count, 8 * pairs)[:, :n].reshape(-1)
    start = sum(int(w) << (32 * i) for i, w in enumerate(counter))
    parts = []
    for k in range(count):
        c = (start + k * n * 256) & (2**128 - 1)
        parts.append(generate(kind, float_kind, n, key,
                              [c >> (32 * i) & 0xFFFFFFFF for i in range(4)], lo, hi))
    return np.concatenate(parts) if parts else generate(kind, float_kind, 0, key, counter,
                                                        lo, hi)


def _padded(n: int, k: int) -> int:
    return -(-n // k) * k


def _generate_numpy(kind, float_kind, n, key, counter, lo, hi) -> np.ndarray:
    if kind == "uniform":
        return philox.uniform(n, float_kind, key, counter)
    if kind == "normal":
        return philox.normal(n, float_kind, key, counter)
    if kind == "truncated_normal":
        return philox.truncated_normal(n, float_kind == "double", key, counter)
    wide = float_kind == "int64"
    if kind == "full_int":
        return philox.full_int(n, wide, key, counter)
    return philox.uniform_int(n, wide, lo, hi, key, counter)

"""TensorFlow's CPU samplers of StatelessRandomBinomial and StatelessParameterizedTruncatedNormal
(tensorflow/core/kernels/random_binomial_op.cc, parameterized_truncated_normal_op.cc) as numba
kernels on TF's Philox4x32-10 streams, so that a seed gives TensorFlow's values bit for bit.

Binomial (`binomial`): output i of the op's flat iteration order (batch-major: i = batch *
samples_per_batch + sample, written at sample * num_batches + batch) draws from its own
sub-stream: the op's counter skipped 256 * i Philox calls for BTRS (Hormann's transformed
rejection, count * p >= 10) and 42 * i calls for inversion (a sum of geometric variables,
count * p < 10; those sub-streams overlap when a draw takes more than 42 calls, as TF's do).
Each call gives two doubles (words 0-1 and 2-3) that TF's UNIFORM macro takes second first.
p > 0.5 samples count - Binomial(count, 1 - p). The per-batch choice (zero, count, which
sampler, NaN) is made by the caller in the parameters' dtype (`binomial_methods`).

Truncated normal (`truncated_normal`): TF's TruncatedNormalFunctorV2. The outputs are split
into the blocks of TF's thread pool (Eigen's parallelFor, `blocks` in
kernels/stateless_random_extra.py): a block starting at output s draws one sequential stream
from the counter skipped ceil(s * 2000 / k) calls (k = 4 values per call, 2 for float64),
through its batches in order, with one of three rejection samplers per batch: normal draws
(Box-Muller, as TF's NormalDistribution), uniform proposals, or exponential ones. Every
operation is done in the output dtype, rounded as TF's `T` arithmetic rounds it: float32
(numba's float32 math calls the C library's logf/expf/sinf/cosf, as TF's does), float64, or
float16 (computed in float32 and rounded to half after every operation, Eigen::half's rule).
The kernels return a status per block (TF's errors: 1 invalid parameters, 2-4 a sampler that
rejected 1000 proposals in a row).

numba compiles them on the first draw (cached on disk, `nogil`: a caller may run blocks on
several threads).
"""

from __future__ import annotations

import math

import numpy as np

from ndflow.kernels import philox_numba
from ndflow.kernels.build_once import built_once

_U = np.uint64
_F23, _F10 = np.float32(2.0**-23), np.float32(2.0**-10)
_HALF_MAX_ROUNDED = 65520.0   # the smallest magnitude float16 rounds to infinity
# TF's Stirling tail corrections log(k!) - Stirling(k) for k = 0..9
_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287])
MAX_ITERATIONS = 1000   # TF's kMaxIterations

# per-batch sampler codes of `binomial`
ZERO, COUNT, BTRS, INVERSION, COUNT_MINUS_BTRS, COUNT_MINUS_INVERSION, NAN = range(7)
# `truncated_normal`'s statuses
OK, INVALID, RANDN_FAILED, UNIFORM_FAILED, EXPONENTIAL_FAILED = range(5)

# numba helpers as module globals, not closure cells (numba's disk cache refuses closures).
# Philox, the counter arithmetic and the Box-Muller transforms are kernels/philox_numba.py's,
# inlined. numba's disk cache keys these kernels on this file's content, so this line changes
# with those helpers (tests/ops/test_numba_disk_cache.py checks the hash of their source):
# philox_numba._build_helpers: 94447baf5d893e52
philox4x32 = advance = key_counter = uniform_double = box_muller_float = None
box_muller_double = stirling_tail = btrs = inversion = None
round_half = rounded = fill_normal = fill_uniform = tn_block = None
next_words = uniform_bits = keep = settle = None


def _build() -> dict:
    """The kernels by name ({} without numba)."""
    if not philox_numba.helpers():
        return {}
    import numba  # noqa: PLC0415 - loads on the first draw, not with `import ndflow`
    global philox4x32, advance, key_counter, uniform_double, box_muller_float
    global box_muller_double, stirling_tail, btrs, inversion
    global round_half, rounded, fill_normal, fill_uniform, tn_block
    global next_words, uniform_bits, keep, settle
    philox4x32, advance, key_counter = (philox_numba.philox4x32, philox_numba.advance,
                                        philox_numba.key_counter)
    uniform_double, box_muller_float, box_muller_double = (
        philox_numba.uniform_double, philox_numba.box_muller_float,
        philox_numba.box_muller_double)
    jit = numba.njit(cache=True, nogil=True)
    inline = numba.njit(cache=True, nogil=True, inline="always")

    @inline
    def next_words(lo, hi, k0, k1):
        """One Philox call at counter (lo, hi): its four words and the next counter."""
        x0, x1, x2, x3 = philox4x32(lo, hi, k0, k1)
        lo, hi = advance(lo, hi, _U(1))
        return x0, x1, x2, x3, lo, hi

    @inline
    def stirling_tail(k):
        if k <= 9.0:
            return _TAIL[int(k)]
        kp1sq = (k + 1.0) * (k + 1.0)
        return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1.0)

    @jit
    def btrs(count, p, lo, hi, k0, k1):
        """TF's btrs(): Hormann's BTRS, one Philox call (u from words 2-3, v from 0-1) per
        proposal."""
        stddev = math.sqrt(count * p * (1.0 - p))
        b = 1.15 + 2.53 * stddev
        a = -0.0873 + 0.0248 * b + 0.01 * p
        c = count * p + 0.5
        v_r = 0.92 - 4.2 / b
        r = p / (1.0 - p)
        alpha = (2.83 + 5.1 / b) * stddev
        m = np.floor((count + 1.0) * p)
        while True:
            x0, x1, x2, x3, lo, hi = next_words(lo, hi, k0, k1)
            u = uniform_double(x2, x3) - 0.5
            v = uniform_double(x0, x1)
            us = 0.5 - abs(u)
            k = np.floor((2.0 * a / us + b) * u + c)
            if us >= 0.07 and v <= v_r:
                return k
            if k < 0.0 or k > count:
                continue
            v = math.log(v * alpha / (a / (us * us) + b))
            upperbound = ((m + 0.5) * math.log((m + 1.0) / (r * (count - m + 1.0)))
                          + (count + 1.0) * math.log((count - m + 1.0) / (count - k + 1.0))
                          + (k + 0.5) * math.log(r * (count - k + 1.0) / (k + 1.0))
                          + stirling_tail(m) + stirling_tail(count - m)
                          - stirling_tail(k) - stirling_tail(count - k))
            if v <= upperbound:
                return k

    @jit
    def inversion(count, p, lo, hi, k0, k1):
        """TF's binomial_inversion(): geometric variables until their sum exceeds count."""
        geom_sum = 0.0
        num_geom = 0
        denominator = math.log1p(-p)
        while True:
            x0, x1, x2, x3, lo, hi = next_words(lo, hi, k0, k1)
            for half in range(2):
                u = uniform_double(x2, x3) if half == 0 else uniform_double(x0, x1)
                geom_sum += np.ceil(math.log(u) / denominator)
                if geom_sum > count:
                    return np.float64(num_geom)
                num_geom += 1

    @jit
    def binomial(out, first, last, kc, method, count, prob, samples_per_batch, num_batches):
        """Outputs first..last - 1 (TF's flat order) into float64 `out` (the output layout);
        kc = [key0, key1, counter words 0..3]; per batch its sampler code, count and the
        probability the sampler takes (p, or 1 - p for the count-minus ones)."""
        k0, k1, base_lo, base_hi = key_counter(kc)
        for i in range(first, last):
            b = i // samples_per_batch
            pos = (i - b * samples_per_batch) * num_batches + b
            m = method[b]
            if m == ZERO:
                out[pos] = 0.0
            elif m == COUNT:
                out[pos] = count[b]
            elif m == NAN:
                out[pos] = np.nan
            else:
                rejection = m == BTRS or m == COUNT_MINUS_BTRS
                lo, hi = advance(base_lo, base_hi,
                                 _U(256 if rejection else 42) * _U(i))
                if rejection:
                    r = btrs(count[b], prob[b], lo, hi, k0, k1)
                else:
                    r = inversion(count[b], prob[b], lo, hi, k0, k1)
                out[pos] = r if m <= INVERSION else count[b] - r

    @jit
    def round_half(x):
        """float32 (or float64) `x` rounded to the nearest float16 (ties to even), as float32."""
        d = np.float64(x)
        a = abs(d)
        if a != a or a == np.inf:
            return np.float32(x)
        if a >= _HALF_MAX_ROUNDED:
            return np.float32(math.copysign(np.inf, d))
        if a < 2.0**-14:
            q = 2.0**-24     # float16's subnormal spacing
        else:
            q = math.ldexp(1.0, math.frexp(a)[1] - 11)   # 11 significant bits
        return np.float32(math.copysign(np.rint(a / q) * q, d))

    @jit
    def rounded(x, half):
        """`x` as TF's T arithmetic leaves it: rounded to float16 for half, else as it is."""
        if half:
            return round_half(x)
        return x

    @jit
    def fill_normal(buf, x0, x1, x2, x3, double, half):
        """TF's NormalDistribution of one Philox call into buf: 2 doubles or 4 floats
        (rounded to half for float16). Returns the count."""
        if double:
            buf[0], buf[1] = box_muller_double(x0, x1, x2, x3)
            return 2
        f0, f1 = box_muller_float(x0, x1)
        f2, f3 = box_muller_float(x2, x3)
        buf[0], buf[1] = rounded(f0, half), rounded(f1, half)
        buf[2], buf[3] = rounded(f2, half), rounded(f3, half)
        return 4

    @jit
    def fill_uniform(buf, x0, x1, x2, x3, double, half):
        """TF's UniformDistribution of one Philox call into buf: 2 doubles, 4 floats (23
        mantissa bits) or 4 halves (10). Returns the count."""
        if double:
            buf[0] = uniform_double(x0, x1)
            buf[1] = uniform_double(x2, x3)
            return 2
        buf[0], buf[1] = uniform_bits(x0, half), uniform_bits(x1, half)
        buf[2], buf[3] = uniform_bits(x2, half), uniform_bits(x3, half)
        return 4

    @inline
    def uniform_bits(w, half):
        """TF's float uniform of one Philox word: its low 10 (half) or 23 mantissa bits."""
        if half:
            return np.float32(np.int32(w & _U(0x3FF))) * _F10
        return np.float32(np.int32(w & _U(0x7FFFFF))) * _F23

    @inline
    def keep(out, z, s, i, b, nb, stddev, mean, half):
        """Stores the accepted normal z, scaled to the batch's stddev and mean, as sample s of
        batch b; (s, i) one on."""
        out[s * nb + b] = rounded(rounded(z * stddev, half) + mean, half)
        return s + 1, i + 1

    @inline
    def settle(out, accept, z, s, i, rejected, b, nb, stddev, mean, half):
        """TF's step of a uniform or exponential rejection loop: an accepted z is kept (and
        the rejections start again), a rejected one counts, and the one reaching
        MAX_ITERATIONS fails. (s, i, rejected, failed)"""
        if accept:
            s, i = keep(out, z, s, i, b, nb, stddev, mean, half)
            return s, i, 0, False
        if rejected + 1 >= MAX_ITERATIONS:
            return s, i, rejected, True
        return s, i, rejected + 1, False

    @jit
    def tn_block(out, start, stop, lo, hi, k0, k1, params, spb, nb, double, half, c, rnd,
                 uni):
        """One block of TF's TruncatedNormalFunctorV2: outputs start..stop - 1 (flat order)
        from the stream at (lo, hi). params: [4, num_batches] means, stddevs, minvals,
        maxvals; c: the dtype's constants 0, 1.3, 2, 4, 0.5; rnd, uni: scratch."""
        zero, inside, two, four, one_half = c[0], c[1], c[2], c[3], c[4]
        i = start
        while i < stop:
            b = i // spb
            mean, stddev = params[0, b], params[1, b]
            minval, maxval = params[2, b], params[3, b]
            if not (stddev > zero and minval < maxval
                    and (math.isfinite(minval) or math.isfinite(maxval))):
                return INVALID
            rejected = 0
            if (math.isinf(minval) and minval < zero) or maxval < mean:
                minval, maxval = maxval, minval
                stddev = -stddev
            norm_min = rounded(rounded(minval - mean, half) / stddev, half)
            norm_max = rounded(rounded(maxval - mean, half) / stddev, half)
            square = rounded(norm_min * norm_min, half)
            sqrt_factor = rounded(math.sqrt(rounded(square + four, half)), half)
            exponent = rounded(one_half + rounded(rounded(
                norm_min * rounded(norm_min - sqrt_factor, half), half) / four, half), half)
            cutoff = rounded(rounded(two * rounded(math.exp(exponent), half), half)
                             / rounded(norm_min + sqrt_factor, half), half)
            diff = rounded(norm_max - norm_min, half)
            s = i - b * spb
            if (norm_min < -inside and norm_max >= zero) or \
                    (norm_max > inside and norm_min <= zero):
                # normal proposals, kept when inside the bounds
                while s < spb and i < stop:
                    x0, x1, x2, x3, lo, hi = next_words(lo, hi, k0, k1)
                    size = fill_normal(rnd, x0, x1, x2, x3, double, half)
                    for j in range(size):
                        z = rnd[j]
                        if z >= norm_min and z <= norm_max:
                            s, i = keep(out, z, s, i, b, nb, stddev, mean, half)
                            if s >= spb or i >= stop:
                                break
                            rejected = 0
                        else:
                            rejected += 1
                            if rejected > MAX_ITERATIONS:
                                return RANDN_FAILED
            elif diff < cutoff:
                # uniform proposals on [norm_min, norm_max]
                plus = zero if norm_min < zero else square
                while s < spb and i < stop:
                    x0, x1, x2, x3, lo, hi = next_words(lo, hi, k0, k1)
                    size = fill_uniform(rnd, x0, x1, x2, x3, double, half)
                    for j in range(size):
                        z = rounded(rounded(rnd[j] * diff, half) + norm_min, half)
                        rnd[j] = z
                        uni[j] = rounded(rounded(plus - rounded(z * z, half), half) / two, half)
                    x0, x1, x2, x3, lo, hi = next_words(lo, hi, k0, k1)
                    # uni holds g; the second call's uniforms are compared in place
                    for j in range(size):
                        g = uni[j]
                        if double:
                            u = uniform_double(x0, x1) if j == 0 else uniform_double(x2, x3)
                        else:
                            w = x0 if j == 0 else x1 if j == 1 else x2 if j == 2 else x3
                            u = uniform_bits(w, half)
                        accept = u <= rounded(math.exp(g), half)
                        s, i, rejected, failed = settle(out, accept, rnd[j], s, i, rejected, b,
                                                        nb, stddev, mean, half)
                        if failed:
                            return UNIFORM_FAILED
                        if s >= spb or i >= stop:
                            break
            else:
                # exponential proposals from norm_min, kept below norm_max
                alpha = rounded(rounded(norm_min + sqrt_factor, half) / two, half)
                while s < spb and i < stop:
                    x0, x1, x2, x3, lo, hi = next_words(lo, hi, k0, k1)
                    size = fill_uniform(rnd, x0, x1, x2, x3, double, half)
                    j = 0
                    while j < size:
                        z = rounded(rounded(-rounded(math.log(rnd[j]), half) / alpha, half)
                                    + norm_min, half)
                        j += 1
                        x = rounded(alpha - z, half) if norm_min < alpha else \
                            rounded(norm_min - alpha, half)
                        g = rounded(math.exp(rounded(rounded(-x * x, half) / two, half)), half)
                        u = rnd[j]
                        j += 1
                        accept = u <= g and z < norm_max
                        s, i, rejected, failed = settle(out, accept, z, s, i, rejected, b,
                                                        nb, stddev, mean, half)
                        if failed:
                            return EXPONENTIAL_FAILED
                        if s >= spb or i >= stop:
                            break
        return OK

    @jit
    def truncated_normal(out, n, block, first, last, kc, params, spb, nb, double, half, c,
                         status):
        """Blocks first..last - 1 of `block` outputs each (the last one short); block k's
        stream starts at the counter skipped ceil(k * block * 2000 / values per call)."""
        k0, k1, base_lo, base_hi = key_counter(kc)
        per_call = 2 if double else 4
        rnd = np.empty(4, c.dtype)
        uni = np.empty(4, c.dtype)
        for k in range(first, last):
            start = k * block
            stop = min(n, start + block)
            skip = (start * 2 * MAX_ITERATIONS + per_call - 1) // per_call
            lo, hi = advance(base_lo, base_hi, _U(skip))
            status[k] = tn_block(out, start, stop, lo, hi, k0, k1, params, spb, nb, double,
                                 half, c, rnd, uni)

    return {"binomial": binomial, "truncated_normal": truncated_normal}


# the kernels by name, built once per process on the first draw ({} without numba)
kernels = built_once(_build)

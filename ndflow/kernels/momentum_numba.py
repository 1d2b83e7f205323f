"""Momentum updates in one pass over memory: `ResourceApplyMomentum`/`ResourceApplyKerasMomentum`
and the remapper's `_ResourceApplyMomentumWithDecay` (whose gradient carries an L2 term) on
large float32 CPU variables, a numba callback run on ATen's OpenMP team (kernels/omp_pool.py).

With `grad = g + scale * var` (an L2-regularized weight's gradient), TF's form is

    accum = accum * momentum + grad;  var -= lr * accum      (nesterov: var -= lr * (grad +
                                                               momentum * accum))
and Keras' (`keras=True`)

    accum = accum * momentum - lr * grad;  var += accum      (nesterov: var += momentum *
                                                               accum - lr * grad)

Unfused this is an add of the scaled weight (3 passes over weight-sized buffers) and two
ATen calls for the update (6 passes); here it reads g, var and accum once and writes var and
accum once: MNIST's 3136x512 fc1 update takes 1.5 ms instead of 3.0 ms from cold caches on
one thread (Xeon with AVX-512), and a plain update 0.72 ms instead of ATen's 0.90 (warm).
Each element is read before it is written, so the outputs may be the inputs' own buffers (an
update in place); then the kernel writes through the same arrays it reads, so that LLVM sees
no possible aliasing and vectorizes the loop (through distinct arrays of the same memory it
ran scalar, 1.38 ms).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import bfloat16_numba, omp_pool, raw_memory
from ndflow.kernels.build_once import built_once

CHUNK = 1 << 15           # elements per claimed chunk
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = _update = _apply = _at = None
round_bf16 = bf16_to_f32 = _bf16_decayed = _update_bf16_decay = _keras_step = _tf_step = None


def applies(var: torch.Tensor) -> bool:
    """Whether a float32 CPU variable's update runs here (numba and ATen's OpenMP found)."""
    return var.dtype == torch.float32 and var.device.type == "cpu" and _callback() is not None


# the OpenMP callbacks (one variable, many variables, the pass after an accumulating GEMM,
# the bfloat16 decayed gradient alone), built on first use (None without numba or ATen's
# OpenMP)
_callback = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def update(g, var, accum, var_out, accum_out, scale: float, lr: float, momentum: float,
           nesterov: bool, keras: bool) -> None:
    """Writes the new var and accum into `var_out` and `accum_out` (contiguous float32 CPU
    tensors of var's shape; they may be `var` and `accum` themselves)."""
    _run_update(g, var, accum, var_out, accum_out,
                _params(scale, lr, momentum, nesterov, keras))


def update_bf16_decay(g, var, accum, var_out, accum_out, scale: float, lr: float,
                      momentum: float, nesterov: bool, keras: bool) -> None:
    """`update` of the gradient `float32(bf16(bf16(var * scale) + g))`, g a contiguous
    bfloat16 tensor: the auto-mixed-precision rewrite's sum of a bfloat16 gradient and a
    weight's L2 term (`_ResourceApplyMomentumWithCastDecay`), rounded as its Mul, Casts and
    AddN round (to nearest even, as ATen does)."""
    _run_update(g.view(torch.int16), var, accum, var_out, accum_out,
                _params(scale, lr, momentum, nesterov, keras, True))


def _run_update(g, var, accum, var_out, accum_out, params) -> None:
    n = var.numel()
    if n == 0:
        return
    arrays = [g.contiguous()] + [t.contiguous() for t in (var, accum)]
    arrays += [var_out, accum_out, params]
    omp_pool.run_chunks(_callback()[0], n, CHUNK, arrays, torch.get_num_threads())


def bf16_decayed_gradient(g, x, scale: float) -> torch.Tensor:
    """float32(bf16(bf16(x * scale) + g)) for a contiguous bfloat16 g and float32 CPU x of
    one shape, rounded as update_bf16_decay rounds it (`_CastDecayedGradient`)."""
    out = torch.empty(x.shape, dtype=torch.float32)
    n = x.numel()
    if n:
        arrays = [g.contiguous().view(torch.int16), x.contiguous(), out,
                  np.array([scale], dtype=np.float32)]
        omp_pool.run_chunks(_callback()[3], n, CHUNK, arrays, torch.get_num_threads())
    return out


def apply_accumulated(var, accum, var_out, decay: float, step: float) -> None:
    """The pass after a GEMM accumulated a gradient product into `accum` in place
    (`_MatMulApplyMomentum`): `accum += decay * var; var_out = var + step * accum` (Keras:
    decay = -lr * scale, step = 1; TF: decay = scale, step = -lr). Contiguous float32 CPU
    tensors of one shape; `var_out` may be `var`."""
    n = var.numel()
    if n == 0:
        return
    arrays = [var, accum, var_out]
    arrays.append(np.array([decay, step], dtype=np.float32))
    omp_pool.run_chunks(_callback()[2], n, CHUNK, arrays, torch.get_num_threads())


def apply_kernel():
    """The numba function of `apply_accumulated`'s pass over one block, `(var, accum,
    var_out, size, decay, step)`, for other kernels to inline (None without numba)."""
    return _apply if _callback() is not None else None


def update_many(table: list, total: int, params: list) -> None:
    """`update` of many variables in one launch, a variable (or CHUNK elements of a larger
    one) per claimed chunk: `table` holds
    6 ints per variable, the addresses of its contiguous float32 g, var, accum, var_out and
    accum_out and its element count, `params` 5 numbers per variable (scale, lr, momentum,
    nesterov, keras); `total` is the sum of the counts (below `CHUNK` elements one thread
    does it all: a second costs more than it saves)."""
    if not len(table):
        return
    # a variable over CHUNK elements as several rows, so that the threads share it
    table, origin = raw_memory.split_rows(np.asarray(table, dtype=np.int64), 6, 5, CHUNK)
    params = np.asarray(params, dtype=np.float32)
    if origin is not None:
        params = params.reshape(-1, 5)[origin].reshape(-1)
    threads = torch.get_num_threads() if total >= CHUNK else 1
    omp_pool.run_chunks(_callback()[1], len(table) // 6, 1, [table, params], threads)


def update_laid_out(table: np.ndarray, sizes: list, total: int, grads: list,
                    params: list) -> None:
    """`update_many` with its table laid out before (g's addresses left to fill): `grads`
    holds each variable's gradient, float32 on the CPU, of the variable's size in `sizes`."""
    held = [g.contiguous() for g in grads]
    table = table.copy()
    table[0::6] = raw_memory.sized_addresses(held, sizes, torch.float32)
    update_many(table, total, params)


def _params(scale: float, lr: float, momentum: float, nesterov: bool, keras: bool,
            bf16: bool = False):
    return np.array([scale, lr, momentum, float(nesterov), float(keras), float(bf16)],
                    dtype=np.float32)


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such update, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, _update, _apply
    global round_bf16, bf16_to_f32, _bf16_decayed, _update_bf16_decay, _at, _keras_step, _tf_step
    bf16_to_f32, _, round_bf16 = bfloat16_numba.helpers()
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray

    @numba.njit(inline="always")
    def _at(address, lo, m):
        """The m float32s from element lo of the array at `address`."""
        return carray(address_as_pointer(address + lo * 4, np.float32), m)

    @numba.njit(inline="always")
    def _bf16_decayed(g, w, s):
        return round_bf16(round_bf16(w * s) + bf16_to_f32(g))

    @numba.njit(inline="always")
    def _update_bf16_decay(g, v, a, v_out, a_out, m, s, lr, mu, nesterov, keras):
        if keras:
            for i in range(m):
                w = v[i]
                a_out[i], v_out[i] = _keras_step(w, a[i], _bf16_decayed(g[i], w, s), lr, mu,
                                                 nesterov)
        else:
            for i in range(m):
                w = v[i]
                a_out[i], v_out[i] = _tf_step(w, a[i], _bf16_decayed(g[i], w, s), lr, mu,
                                              nesterov)

    # One element's step: (new accum, new var) from var w, accum acc and the gradient
    @numba.njit(inline="always")
    def _keras_step(w, acc, grad, lr, mu, nesterov):
        acc = acc * mu - lr * grad
        return acc, w + (acc * mu - lr * grad if nesterov else acc)

    @numba.njit(inline="always")
    def _tf_step(w, acc, grad, lr, mu, nesterov):
        acc = acc * mu + grad
        return acc, w - (lr * (grad + mu * acc) if nesterov else lr * acc)

    @numba.njit(inline="always")
    def _update(g, v, a, v_out, a_out, m, s, lr, mu, nesterov, keras):
        if s == 0:      # a plain update: no decay term (0 * inf would be NaN)
            if keras:
                for i in range(m):
                    a_out[i], v_out[i] = _keras_step(v[i], a[i], g[i], lr, mu, nesterov)
            else:
                for i in range(m):
                    a_out[i], v_out[i] = _tf_step(v[i], a[i], g[i], lr, mu, nesterov)
        elif keras:
            for i in range(m):
                w = v[i]
                a_out[i], v_out[i] = _keras_step(w, a[i], g[i] + s * w, lr, mu, nesterov)
        else:
            for i in range(m):
                w = v[i]
                a_out[i], v_out[i] = _tf_step(w, a[i], g[i] + s * w, lr, mu, nesterov)

    # data = [counter, n, chunk, (address, length) of g, var, accum, var_out, accum_out,
    #         params = (scale, lr, momentum, nesterov, keras, g bfloat16) as float32]; a
    #         bfloat16 g (its bits as int16) is summed with the L2 term as update_bf16_decay
    #         says
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def momentum_with_decay(data):
        d = carray(data, 15, dtype=np.int64)
        n, chunk = d[1], d[2]
        p = carray(address_as_pointer(d[13], np.float32), 6)
        s, lr, mu, nesterov, keras, bf16 = p[0], p[1], p[2], p[3] != 0, p[4] != 0, p[5] != 0
        in_place = d[9] == d[5] and d[11] == d[7]
        q = claim_chunk(data)
        while q * chunk < n:
            lo = q * chunk
            m = min(lo + chunk, n) - lo
            v, a = _at(d[5], lo, m), _at(d[7], lo, m)
            if bf16:
                g16 = carray(address_as_pointer(d[3] + lo * 2, np.int16), m)
                if in_place:   # the same arrays: LLVM then sees no aliasing and vectorizes
                    _update_bf16_decay(g16, v, a, v, a, m, s, lr, mu, nesterov, keras)
                else:
                    _update_bf16_decay(g16, v, a, _at(d[9], lo, m), _at(d[11], lo, m), m, s,
                                       lr, mu, nesterov, keras)
            else:
                g = _at(d[3], lo, m)
                if in_place:
                    _update(g, v, a, v, a, m, s, lr, mu, nesterov, keras)
                else:
                    _update(g, v, a, _at(d[9], lo, m), _at(d[11], lo, m), m, s, lr, mu,
                            nesterov, keras)
            q = claim_chunk(data)

    # data = [counter, rows, 1, (address, length) of the table (6 int64s a variable: g, var,
    #         accum, var_out, accum_out addresses and the element count), params (5 float32s
    #         a variable)]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def momentum_many(data):
        d = carray(data, 7, dtype=np.int64)
        rows = d[1]
        table = carray(address_as_pointer(d[3], np.int64), d[4])
        params = carray(address_as_pointer(d[5], np.float32), d[6])
        q = claim_chunk(data)
        while q < rows:
            p = params[q * 5:q * 5 + 5]
            s, lr, mu, nesterov, keras = p[0], p[1], p[2], p[3] != 0, p[4] != 0
            r = table[q * 6:q * 6 + 6]
            m = r[5]
            g = carray(address_as_pointer(r[0], np.float32), m)
            v = carray(address_as_pointer(r[1], np.float32), m)
            a = carray(address_as_pointer(r[2], np.float32), m)
            if r[3] == r[1] and r[4] == r[2]:
                _update(g, v, a, v, a, m, s, lr, mu, nesterov, keras)
            else:
                v_out = carray(address_as_pointer(r[3], np.float32), m)
                a_out = carray(address_as_pointer(r[4], np.float32), m)
                _update(g, v, a, v_out, a_out, m, s, lr, mu, nesterov, keras)
            q = claim_chunk(data)

    @numba.njit(inline="always")
    def _apply(v, a, v_out, m, decay, step):
        for i in range(m):
            w = v[i]
            acc = a[i] + decay * w
            a[i] = acc
            v_out[i] = w + step * acc

    # data = [counter, n, chunk, (address, length) of var, accum, var_out,
    #         params = (decay, step) as float32]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def accumulated(data):
        d = carray(data, 11, dtype=np.int64)
        n, chunk = d[1], d[2]
        p = carray(address_as_pointer(d[9], np.float32), 2)
        decay, step = p[0], p[1]
        in_place = d[7] == d[3]
        q = claim_chunk(data)
        while q * chunk < n:
            lo = q * chunk
            m = min(lo + chunk, n) - lo
            v = carray(address_as_pointer(d[3] + lo * 4, np.float32), m)
            a = carray(address_as_pointer(d[5] + lo * 4, np.float32), m)
            if in_place:   # the same array: LLVM then sees no aliasing and vectorizes
                _apply(v, a, v, m, decay, step)
            else:
                _apply(v, a, carray(address_as_pointer(d[7] + lo * 4, np.float32), m), m,
                       decay, step)
            q = claim_chunk(data)

    # data = [counter, n, chunk, (address, length) of g (bfloat16 bits), x, out, (scale,)]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def decayed_gradient(data):
        d = carray(data, 11, dtype=np.int64)
        n, chunk = d[1], d[2]
        s = carray(address_as_pointer(d[9], np.float32), 1)[0]
        q = claim_chunk(data)
        while q * chunk < n:
            lo = q * chunk
            m = min(lo + chunk, n) - lo
            g16 = carray(address_as_pointer(d[3] + lo * 2, np.int16), m)
            x, out = _at(d[5], lo, m), _at(d[7], lo, m)
            for i in range(m):
                out[i] = _bf16_decayed(g16[i], x[i], s)
            q = claim_chunk(data)

    return (momentum_with_decay.address, momentum_many.address, accumulated.address,
            decayed_gradient.address)

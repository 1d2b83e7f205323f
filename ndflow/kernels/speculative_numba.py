"""Momentum updates computed into new buffers and the finite check of their gradients in the
same pass: the float32 CPU work of `_SpeculativeApplyMomentum` (a loss-scale optimizer's
step, ndflow/passes/speculative_momentum.py), one numba callback run on ATen's OpenMP team
(kernels/omp_pool.py) for all variables at once.

Each variable is cut into chunks; a thread claims a chunk, reads g, var and accum once,
checks every element of the gradient `t = g + var * scale` (or g) finite (`t - t` is 0
exactly where t is finite, NaN elsewhere; the differences are summed per lane) and writes
the new var and accum into the output buffers. The formulas and their rounding are
kernels/momentum_numba.py's (the in-place update this replaces), the check's is
kernels/finite_numba.py's: product rounded, then sum, no fused multiply-add.

The new var may be written into g's own buffer (donated by the plan: its lines are in the
cache, just read). Other large outputs are written with non-temporal stores (x86
`vmovntps`): the new buffers are written whole and not read back soon, so without them each
output line is first read from the cache hierarchy (a read for ownership). Measured for
MNIST's 3136x512 fc1 weight, two threads, operands in L3 (AVX-512 Xeon): check then in-place
update 1.10 ms, update alone 0.68 ms, this pass 0.75 ms (new var in g's buffer, accum
streamed) or 0.82 ms (both streamed); with plain stores into new buffers 1.08 ms. Gradients
of variables updated elsewhere (small ones, whose update keeps ATen's rounding) can be
checked alone in the same launch (`checks`).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, raw_memory, simd_numba
from ndflow.kernels.build_once import built_once

CHUNK = 1 << 15           # elements per claimed task
STREAM_MIN = 1 << 16      # elements from which outputs are written with streaming stores
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = None
_body = _check = None
wide_vectors = vload = vstore = vstore_stream = store_fence = vsplat = vzero = None
vadd = vsub = vmul = vany_nonzero = None


def applies(var: torch.Tensor) -> bool:
    """Whether float32 CPU `var`'s speculative update can run here (numba and ATen's OpenMP
    found)."""
    return var.dtype == torch.float32 and var.device.type == "cpu" and _callback() is not None


# the OpenMP callback, built on first use (None without numba or ATen's OpenMP)
_callback = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def update_all(entries: list, checks: tuple = ()) -> bool:
    """Runs each entry's update and check, and each of `checks` alone; whether every
    gradient was finite (when not, the outputs hold garbage). An entry is (g, var, accum,
    var_out, accum_out, scale, lr, momentum, nesterov, keras, decay): contiguous float32 CPU
    tensors of one shape (the outputs new buffers, or var_out g itself: each element is read
    before it is written) and Python scalars; a check is (g, var, scale, decay), the
    gradient's check only (as `_AllFinite(g)` or `_AllFiniteAddScaled(g, var, scale)`)."""
    # the task table in Python lists, one NumPy array at the end: a few small updates (a
    # model's biases) paid more for per-entry NumPy calls (~80 us for seven) than for the
    # work itself
    tasks, params = [], []
    entries = list(entries) + [(g, v, g, g, g, s, 0.0, 0.0, False, False, decay)
                               for g, v, s, decay in checks]
    first_check = len(entries) - len(checks)
    for e, (g, v, a, vo, ao, s, lr, mu, nesterov, keras, decay) in enumerate(entries):
        n = v.numel()
        ptrs = [raw_memory.address(t, torch.float32, n) for t in (g, v, a, vo, ao)]
        big = n >= STREAM_MIN
        # var_out may be g's own buffer (donated): then its lines are in the cache already
        stream_v = big and ptrs[3] % 64 == 0 and ptrs[3] != ptrs[0]
        stream_a = big and ptrs[4] % 64 == 0
        params += (s, lr, mu, nesterov, keras, decay, stream_v, stream_a)
        for lo in range(0, n, CHUNK):
            tasks += [p + 4 * lo for p in ptrs]
            tasks += (min(CHUNK, n - lo), e, e >= first_check)   # (a check alone)
    if not tasks:
        return True
    flag = np.zeros(1, dtype=np.int32)
    arrays = [np.array(tasks, dtype=np.int64), np.array(params, dtype=np.float32), flag]
    omp_pool.run_chunks(_callback(), len(tasks) // 8, 1, arrays, torch.get_num_threads())
    return flag[0] == 0


def body_kernel():
    """The numba function of one chunk's update and check, `(g, var, accum, var_out,
    accum_out, size, scale, lr, momentum, decay, keras, nesterov, stream_var, stream_accum)
    -> not finite`, for other kernels to inline (None without numba)."""
    return _body if _callback() is not None else None


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such update, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, _body, _check
    global wide_vectors, vload, vstore, vstore_stream, store_fence, vsplat, vzero
    global vadd, vsub, vmul, vany_nonzero
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    ops = simd_numba.vector_ops()
    wide_vectors, vload, vstore, vstore_stream = (ops.wide_vectors, ops.vload, ops.vstore,
                                                  ops.vstore_stream)
    store_fence, vsplat, vzero, vadd, vsub, vmul, vany_nonzero = (
        ops.store_fence, ops.vsplat, ops.vzero, ops.vadd, ops.vsub, ops.vmul, ops.vany_nonzero)

    @numba.njit(inline="always")
    def _check(g, v, m, s, decay):
        """True when an element of g + v * s (or g) is not finite."""
        found = False
        for i in range(m):
            t = g[i] + s * v[i] if decay else g[i]
            found |= (t - t) != 0
        return found

    @numba.njit(inline="always")
    def _body(g, v, a, vo, ao, m, s, lr, mu, decay, keras, nesterov, stream_v, stream_a):
        """The update of m elements (16-lane vectors, then a scalar tail); True when a
        gradient element is not finite. The flags are loop-invariant branches, predicted
        every time: the pass is bound by memory, not by them."""
        wide_vectors()
        S, LR, MU = vsplat(s), vsplat(lr), vsplat(mu)
        scaled = decay and s != 0    # the update's gradient: g + s * var, or g (no term)
        bad = vzero()
        top = m - m % 16
        for i in range(0, top, 16):
            w, gv = vload(v, i), vload(g, i)
            if decay:
                t = vadd(gv, vmul(S, w))
                bad = vadd(bad, vsub(t, t))
                grad = t if scaled else gv
            else:
                bad = vadd(bad, vsub(gv, gv))
                grad = gv
            if keras:
                acc = vsub(vmul(vload(a, i), MU), vmul(LR, grad))
                new = vadd(w, vsub(vmul(acc, MU), vmul(LR, grad)) if nesterov else acc)
            else:
                acc = vadd(vmul(vload(a, i), MU), grad)
                step = vmul(LR, vadd(grad, vmul(MU, acc))) if nesterov else vmul(LR, acc)
                new = vsub(w, step)
            if stream_a:
                vstore_stream(ao, i, acc)
            else:
                vstore(ao, i, acc)
            if stream_v:
                vstore_stream(vo, i, new)
            else:
                vstore(vo, i, new)
        if stream_v or stream_a:
            store_fence()
        found = vany_nonzero(bad)
        for i in range(top, m):
            w = v[i]
            t = g[i] + s * w if decay else g[i]
            found |= (t - t) != 0
            grad = t if scaled else g[i]
            if keras:
                acc = a[i] * mu - lr * grad
                ao[i] = acc
                vo[i] = w + (acc * mu - lr * grad if nesterov else acc)
            else:
                acc = a[i] * mu + grad
                ao[i] = acc
                vo[i] = w - (lr * (grad + mu * acc) if nesterov else lr * acc)
        return found

    # data = [counter, tasks, 1, (address, length) of the task table (int64: addresses of
    #         g, var, accum, var_out, accum_out at the task's first element, its length,
    #         its variable, 1 for a check alone), of the parameters (float32 per variable:
    #         scale, lr, momentum, nesterov, keras, decay, stream var_out, stream accum_out)
    #         and of the flag (int32)]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def speculative_momentum(data):
        d = carray(data, 9, dtype=np.int64)
        n = d[1]
        table = carray(address_as_pointer(d[3], np.int64), d[4])
        params = carray(address_as_pointer(d[5], np.float32), d[6])
        flag = carray(address_as_pointer(d[7], np.int32), 1)
        q = claim_chunk(data)
        while q < n:
            t = table[q * 8:q * 8 + 8]
            m = t[5]
            p = params[t[6] * 8:t[6] * 8 + 8]
            g = carray(address_as_pointer(t[0], np.float32), m)
            v = carray(address_as_pointer(t[1], np.float32), m)
            a = carray(address_as_pointer(t[2], np.float32), m)
            vo = carray(address_as_pointer(t[3], np.float32), m)
            ao = carray(address_as_pointer(t[4], np.float32), m)
            if t[7]:
                bad = _check(g, v, m, p[0], p[5] != 0)
            else:
                bad = _body(g, v, a, vo, ao, m, p[0], p[1], p[2], p[5] != 0, p[4] != 0,
                            p[3] != 0, p[6] != 0, p[7] != 0)
            if bad:
                flag[0] = 1   # every writer writes 1: the race is benign
            q = claim_chunk(data)

    return speculative_momentum.address

"""Scaled dot-product attention on the CPU in 16-lane float32 vectors (kernels/simd_numba.py),
one (batch, head) at a time on ATen's OpenMP team (kernels/omp_pool.py): a candidate beside
ATen's flash kernels for `_ScaledDotProductAttention` and its gradient (kernels/attention.py
times both per shape).

ATen's CPU flash kernels multiply their blocks with MKL's sgemm, which runs its AVX2 code on
AMD CPUs, and spend as long again on the softmax between the products: for the Keras
Transformer example's attention (32 x 2 heads x 200 x 200, depth 32) on a 2-core Zen 5, 2.7
ms forward, of which ~1.4 ms do not grow with the depth. Here every product is one
register-blocked loop (kernels/register_gemm_numba.py's `product`: four rows of A, their
elements broadcast, times four 16-lane column tiles of B, in sixteen accumulators): 1.5 ms
forward, 3.2-3.5 ms for the gradient against ATen's 5.0-5.3. A head's scores and
probabilities stay in
per-thread scratch (the gradient keeps the head's whole probability and score-gradient
matrices, [length, keys], so that the key and value gradients are two long products rather
than one short one per block of rows); the softmax is a vector pass with a polynomial exp.

Inputs are (batch, length, heads, depth) float32 tensors, the depth a multiple of 16, at most
MAX_SCORES scores a head (kernels/attention.py sends the rest to ATen), and a boolean mask
or none: a masked key's score becomes MASKED_SCORE, as Keras masks, so a row whose keys are
all masked averages the values. The log-sum-exp output is ATen's: log(sum(exp(scale *
scores))) per query row, [batch, heads, length]; the gradient recomputes the softmax, so
either kernel's gradient takes either forward's outputs.
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np
import torch

from ndflow.kernels import omp_pool, register_gemm_numba, simd_numba
from ndflow.kernels.build_once import built_once

ROWS = register_gemm_numba.ROWS   # query rows per register block
MAX_SCORES = 1 << 20   # queries x keys (padded) a head may hold in scratch: 4 MB
MASKED_SCORE = -0.7 * float(np.finfo(np.float32).max)   # Keras' score for a masked key
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = None
wide_vectors = vload = vstore = vsplat = vzero = vmul = vadd = vsub = None
vmax = vhmax = vexp = vsum = vwhere_zero = None
view = product = softmax_rows = zero_masked = transpose_in = transpose_out = None
forward_head = backward_head = None


def applies(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask) -> bool:
    """Whether these inputs can take this kernel (else ATen's): `mask` None or a bool tensor
    of rank 4 broadcasting to [batch, heads, queries, keys]."""
    return (q.device.type == "cpu" and q.dtype == k.dtype == v.dtype == torch.float32
            and q.dim() == 4 and q.shape[-1] % 16 == 0
            and q.shape[-1] == k.shape[-1] == v.shape[-1] and q.numel() > 0
            and k.shape[1] > 0 and q.shape[1] * _padded(k.shape[1]) <= MAX_SCORES
            and (mask is None or mask.dtype == torch.bool and mask.device.type == "cpu")
            and _available())


@functools.lru_cache(maxsize=1)
def _available() -> bool:
    """numba is installed and ATen's OpenMP launcher was found: the kernels can build (they
    compile when the autotuner first runs them, not for every small attention)."""
    return importlib.util.find_spec("numba") is not None and omp_pool.launcher() is not None


def _padded(s: int) -> int:
    return -(-s // 16) * 16


def _params(q, k, mask) -> tuple:
    """(params, mask bytes): params = batch, queries, keys, heads, depth, padded keys,
    whether masked, and the mask's batch, head and query strides in bytes (0 where it
    broadcasts); the mask's rows are contiguous over the keys."""
    b, t, n, d = q.shape
    s = k.shape[1]
    head = [b, t, s, n, d, _padded(s)]
    if mask is None:
        return np.array(head + [0, 0, 0, 0], dtype=np.int64), np.zeros(0, dtype=np.uint8)
    m = mask.to(torch.uint8).expand(*mask.shape[:3], s).contiguous()
    strides = [0 if m.shape[i] == 1 else m.stride(i) for i in range(3)]
    return np.array(head + [1] + strides, dtype=np.int64), m.reshape(-1)


def _launch(which: int, heads: int, per_slot: int, arrays: list) -> None:
    """Runs kernel `which` over `heads` (batch x heads) with a scratch of `per_slot` floats
    for each chunk of heads a thread claims."""
    threads = max(1, min(torch.get_num_threads(), heads))
    chunk = -(-heads // threads)
    slots = -(-heads // chunk)
    scratch = torch.empty(slots * per_slot, dtype=torch.float32)
    omp_pool.run_chunks(_kernels()[which], heads, chunk, arrays[:-2] + [scratch] + arrays[-2:],
                        threads)


def forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, mask=None):
    """(out [b, t, n, d], lse [b, n, t]) for BTNH q, k, v."""
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    b, t, n, d = q.shape
    params, mask_bytes = _params(q, k, mask)
    out = torch.empty_like(q)
    lse = torch.empty((b, n, t), dtype=torch.float32)
    _launch(0, b * n, (d + ROWS) * int(params[5]),
            [q, k, v, out, lse, mask_bytes, params, np.array([scale], dtype=np.float32)])
    return out, lse


def backward(g, q, k, v, out, scale: float, mask=None):
    """(dq, dk, dv), BTNH, for the output gradient `g` of `forward`'s `out` (the softmax is
    recomputed with its own normalization, not from the log-sum-exp: a row whose keys are all
    masked has probabilities 1/keys, which exp(score - lse) loses to rounding)."""
    g, q, k, v, out = (x.contiguous() for x in (g, q, k, v, out))
    b, t, n, d = q.shape
    params, mask_bytes = _params(q, k, mask)
    sp = int(params[5])
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    _launch(1, b * n, 4 * d * sp + 2 * t * sp,
            [g, q, k, v, out, mask_bytes, dq, dk, dv, params,
             np.array([scale], dtype=np.float32)])
    return dq, dk, dv


_kernels = built_once(lambda: _build())


def _build():
    nb = omp_pool.callback_builder()
    if nb is None:
        return None
    numba, cfunc, types = nb.numba, nb.cfunc, nb.types

    global claim_chunk, address_as_pointer, carray
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    _vector_globals(simd_numba.vector_ops())
    _helpers(numba.njit(inline="always"), register_gemm_numba.helpers())

    # The two callbacks spell out the same claim loop: a shared inline loop taking the
    # head function as an argument measured slower (5.4 against 3.8 ms forward, on a host
    # busy with a CI run).
    # data = [counter, heads, chunk, (address, length) of q, k, v, out, lse, mask, scratch,
    #         params, scale, finished]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def attention_forward(data):
        wide_vectors()
        d = carray(data, 22, dtype=np.int64)
        heads, chunk = d[1], d[2]
        slot = claim_chunk(data)
        while slot * chunk < heads:
            for h in range(slot * chunk, min(slot * chunk + chunk, heads)):
                forward_head(d, h, slot)
            slot = claim_chunk(data)

    # data = [counter, heads, chunk, (address, length) of g, q, k, v, out, mask, dq, dk, dv,
    #         scratch, params, scale, finished]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def attention_backward(data):
        wide_vectors()
        d = carray(data, 28, dtype=np.int64)
        heads, chunk = d[1], d[2]
        slot = claim_chunk(data)
        while slot * chunk < heads:
            for h in range(slot * chunk, min(slot * chunk + chunk, heads)):
                backward_head(d, h, slot)
            slot = claim_chunk(data)

    return attention_forward.address, attention_backward.address


def _vector_globals(ops) -> None:
    global wide_vectors, vload, vstore, vsplat, vzero, vmul, vadd, vsub
    global vmax, vhmax, vexp, vsum, vwhere_zero
    wide_vectors, vload, vstore, vsplat, vzero = (ops.wide_vectors, ops.vload, ops.vstore,
                                                  ops.vsplat, ops.vzero)
    vmul, vadd, vsub = ops.vmul, ops.vadd, ops.vsub
    vmax, vhmax, vexp, vsum, vwhere_zero = (ops.vmax, ops.vhmax, ops.vexp, ops.vsum,
                                            ops.vwhere_zero)


def _helpers(inline, gemm) -> None:
    global view, product, softmax_rows, zero_masked, transpose_in, transpose_out
    global forward_head
    global backward_head
    product = gemm.product

    @inline
    def view(d, k, dtype):
        """The array at d[k] (its length at d[k + 1])."""
        return carray(address_as_pointer(d[k], dtype), d[k + 1])

    @inline
    def softmax_rows(sc, base, rows, s, sp, mask, mask_base, mask_row, lse, lse_base):
        """Rows of sc (scaled scores, `sp` wide of which `s` are keys) become their softmax:
        masked keys (mask bytes 0, when mask_row >= 0) first take MASKED_SCORE as Keras
        writes them, the padding 0; with lse_base >= 0 each row's log(sum(exp)) goes to
        lse[lse_base + r]."""
        neg, fill = np.float32(-np.inf), np.float32(MASKED_SCORE)
        fills = vsplat(fill)
        full = s - s % 16
        for r in range(rows):
            row = base + r * sp
            if mask_row >= 0:
                mrow = mask_base + r * mask_row
                for j in range(0, full, 16):
                    vstore(sc, row + j, vwhere_zero(mask, mrow + j, fills, vload(sc, row + j)))
                for j in range(full, s):
                    if mask[mrow + j] == 0:
                        sc[row + j] = fill
            for j in range(s, sp):
                sc[row + j] = neg
            m = vload(sc, row)
            for j in range(16, sp, 16):
                m = vmax(m, vload(sc, row + j))
            top = vhmax(m)
            tops = vsplat(top)
            total = vzero()
            for j in range(0, sp, 16):
                e = vexp(vsub(vload(sc, row + j), tops))
                vstore(sc, row + j, e)
                total = vadd(total, e)
            z = vsum(total)
            if lse_base >= 0:
                lse[lse_base + r] = top + np.log(z)
            inv = vsplat(np.float32(1.0) / z)
            for j in range(0, sp, 16):
                vstore(sc, row + j, vmul(vload(sc, row + j), inv))

    @inline
    def zero_masked(sc, row, s, mask, mrow):
        """sc[row + j] = 0 where mask[mrow + j] is 0, j < s."""
        zeros = vzero()
        full = s - s % 16
        for j in range(0, full, 16):
            vstore(sc, row + j, vwhere_zero(mask, mrow + j, zeros, vload(sc, row + j)))
        for j in range(full, s):
            if mask[mrow + j] == 0:
                sc[row + j] = np.float32(0.0)

    @inline
    def transpose_in(x, base, nd, s, depth, sp, out, out_base):
        """out[out_base + c * sp + j] = x[base + j * nd + c] (a head's rows as columns), the
        padding columns 0."""
        zero = np.float32(0.0)
        for j in range(s):
            src = base + j * nd
            for c in range(depth):
                out[out_base + c * sp + j] = x[src + c]
        for c in range(depth):
            for j in range(s, sp):
                out[out_base + c * sp + j] = zero

    @inline
    def transpose_out(acc, acc_base, sp, s, depth, x, base, nd):
        """x[base + j * nd + c] = acc[acc_base + c * sp + j]: transpose_in's inverse."""
        for j in range(s):
            dst = base + j * nd
            for c in range(depth):
                x[dst + c] = acc[acc_base + c * sp + j]

    @inline
    def forward_head(d, h, slot):
        q, k, v = view(d, 3, np.float32), view(d, 5, np.float32), view(d, 7, np.float32)
        out, lse, mask = view(d, 9, np.float32), view(d, 11, np.float32), view(d, 13, np.uint8)
        scratch, p = view(d, 15, np.float32), view(d, 17, np.int64)
        scale = view(d, 19, np.float32)[0]
        t, s, n, depth, sp = p[1], p[2], p[3], p[4], p[5]
        b, head = h // n, h % n
        nd = n * depth
        qb, kb = (b * t * n + head) * depth, (b * s * n + head) * depth
        mask_base, mask_row = b * p[7] + head * p[8], p[9] if p[6] else -1
        kt = slot * (depth + ROWS) * sp
        sc = kt + depth * sp
        transpose_in(k, kb, nd, s, depth, sp, scratch, kt)
        for r0 in range(0, t, ROWS):
            rows = min(ROWS, t - r0)
            product(q, qb + r0 * nd, nd, 1, rows, depth, scratch, kt, sp, sp, scratch, sc, sp,
                    scale, False)
            softmax_rows(scratch, sc, rows, s, sp, mask, mask_base + r0 * p[9], mask_row, lse,
                         h * t + r0)
            product(scratch, sc, sp, 1, rows, s, v, kb, nd, depth, out, qb + r0 * nd, nd,
                    np.float32(1.0), False)

    @inline
    def backward_head(d, h, slot):
        g, q, k = view(d, 3, np.float32), view(d, 5, np.float32), view(d, 7, np.float32)
        v, o, mask = view(d, 9, np.float32), view(d, 11, np.float32), view(d, 13, np.uint8)
        dq, dk, dv = view(d, 15, np.float32), view(d, 17, np.float32), view(d, 19, np.float32)
        scratch, p = view(d, 21, np.float32), view(d, 23, np.int64)
        scale = view(d, 25, np.float32)[0]
        t, s, n, depth, sp = p[1], p[2], p[3], p[4], p[5]
        b, head = h // n, h % n
        nd = n * depth
        qb, kb = (b * t * n + head) * depth, (b * s * n + head) * depth
        mask_base, mask_row = b * p[7] + head * p[8], p[9] if p[6] else -1
        kt = slot * (4 * depth * sp + 2 * t * sp)
        vt, probs = kt + depth * sp, kt + 2 * depth * sp
        dscores = probs + t * sp
        dvt, dkt = dscores + t * sp, dscores + t * sp + depth * sp
        transpose_in(k, kb, nd, s, depth, sp, scratch, kt)
        transpose_in(v, kb, nd, s, depth, sp, scratch, vt)
        for r0 in range(0, t, ROWS):
            rows = min(ROWS, t - r0)
            pr, dr, qr = probs + r0 * sp, dscores + r0 * sp, qb + r0 * nd
            product(q, qr, nd, 1, rows, depth, scratch, kt, sp, sp, scratch, pr, sp, scale, False)
            mrow = mask_base + r0 * p[9]
            softmax_rows(scratch, pr, rows, s, sp, mask, mrow, mask_row, o, -1)
            product(g, qr, nd, 1, rows, depth, scratch, vt, sp, sp, scratch, dr, sp,
                    np.float32(1.0), False)
            for r in range(rows):   # ds = p * (dp - sum(g * o)), the softmax's gradient
                total = np.float32(0.0)
                for c in range(depth):
                    total += g[qr + r * nd + c] * o[qr + r * nd + c]
                dot = vsplat(total)
                for j in range(0, sp, 16):
                    x = dr + r * sp + j
                    vstore(scratch, x, vmul(vload(scratch, pr + r * sp + j),
                                            vsub(vload(scratch, x), dot)))
                if mask_row >= 0:   # a masked score was a constant: no gradient
                    zero_masked(scratch, dr + r * sp, s, mask, mrow + r * mask_row)
            product(scratch, dr, sp, 1, rows, s, k, kb, nd, depth, dq, qr, nd, scale, False)
        # dv^T = g^T p and dk^T = scale q^T ds, over every query row at once
        for c0 in range(0, depth, ROWS):
            rows = min(ROWS, depth - c0)
            product(g, qb + c0, 1, nd, rows, t, scratch, probs, sp, sp, scratch,
                    dvt + c0 * sp, sp, np.float32(1.0), False)
            product(q, qb + c0, 1, nd, rows, t, scratch, dscores, sp, sp, scratch,
                    dkt + c0 * sp, sp, scale, False)
        transpose_out(scratch, dvt, sp, s, depth, dv, kb, nd)
        transpose_out(scratch, dkt, sp, s, depth, dk, kb, nd)

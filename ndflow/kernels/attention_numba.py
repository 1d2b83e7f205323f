"""Scaled dot-product attention on the CPU in 16-lane float32 vectors (kernels/simd_numba.py),
one (batch, head) at a time on ATen's OpenMP team (kernels/omp_pool.py): a candidate beside
ATen's flash kernels for `_ScaledDotProductAttention` and its gradient (kernels/attention.py
times both per shape).

ATen's CPU flash kernels multiply their blocks with MKL's sgemm, which runs its AVX2 code on
AMD CPUs, and spend as long again on the softmax between the products: for the Keras
Transformer example's attention (32 x 2 heads x 200 x 200, depth 32) on a 2-core Zen 5, 2.7
ms forward, of which ~1.4 ms do not grow with the depth. Here every product is one
register-blocked loop (`product`): four rows of A, their elements broadcast, times two
16-lane column tiles of B, in eight accumulators. A head's scores and probabilities stay in
per-thread scratch (the gradient keeps the head's whole probability and score-gradient
matrices, [length, keys], so that the key and value gradients are two long products rather
than one short one per block of rows); the softmax is a vector pass with a polynomial exp.

Inputs are (batch, length, heads, depth) float32 tensors, the depth a multiple of 16; no mask
and at most MAX_SCORES scores a head (kernels/attention.py sends the rest to ATen). The
log-sum-exp output is ATen's: log(sum(exp(scale * scores))) per query row, [batch, heads,
length], so either kernel's gradient takes either forward's output.
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np
import torch

from ndflow.kernels import omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

ROWS = 4               # rows of A per register block
MAX_SCORES = 1 << 20   # queries x keys (padded) a head may hold in scratch: 4 MB
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = None
wide_vectors = vload = vstore = vsplat = vzero = vfma = vmul = vadd = vsub = None
vmax = vhmax = vexp = vsum = vbroadcast = None
view = product = exp_rows = transpose_in = transpose_out = None
forward_head = backward_head = None


def applies(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, masks) -> bool:
    """Whether these inputs can take this kernel (else ATen's)."""
    return (not masks and q.device.type == "cpu" and q.dtype == k.dtype == v.dtype
            == torch.float32 and q.dim() == 4 and q.shape[-1] % 16 == 0
            and q.shape[-1] == k.shape[-1] == v.shape[-1] and q.numel() > 0
            and k.shape[1] > 0 and q.shape[1] * _padded(k.shape[1]) <= MAX_SCORES
            and _available())


@functools.lru_cache(maxsize=1)
def _available() -> bool:
    """numba is installed and ATen's OpenMP launcher was found: the kernels can build (they
    compile when the autotuner first runs them, not for every small attention)."""
    return importlib.util.find_spec("numba") is not None and omp_pool.launcher() is not None


def _padded(s: int) -> int:
    return -(-s // 16) * 16


def _launch(which: int, heads: int, per_slot: int, arrays: list) -> None:
    """Runs kernel `which` over `heads` (batch x heads) with a scratch of `per_slot` floats
    for each chunk of heads a thread claims."""
    threads = max(1, min(torch.get_num_threads(), heads))
    chunk = -(-heads // threads)
    slots = -(-heads // chunk)
    scratch = torch.empty(slots * per_slot, dtype=torch.float32)
    omp_pool.run_chunks(_kernels()[which], heads, chunk, arrays[:-2] + [scratch] + arrays[-2:],
                        threads)


def forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float):
    """(out [b, t, n, d], lse [b, n, t]) for BTNH q, k, v."""
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    b, t, n, d = q.shape
    s = k.shape[1]
    sp = _padded(s)
    out = torch.empty_like(q)
    lse = torch.empty((b, n, t), dtype=torch.float32)
    _launch(0, b * n, (d + ROWS) * sp,
            [q, k, v, out, lse, np.array([b, t, s, n, d, sp], dtype=np.int64),
             np.array([scale], dtype=np.float32)])
    return out, lse


def backward(g, q, k, v, out, lse, scale: float):
    """(dq, dk, dv), BTNH, for the output gradient `g` of `forward`'s (out, lse)."""
    g, q, k, v, out = (x.contiguous() for x in (g, q, k, v, out))
    lse = lse.contiguous()
    b, t, n, d = q.shape
    s = k.shape[1]
    sp = _padded(s)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    _launch(1, b * n, 4 * d * sp + 2 * t * sp,
            [g, q, k, v, out, lse, dq, dk, dv, np.array([b, t, s, n, d, sp], dtype=np.int64),
             np.array([scale], dtype=np.float32)])
    return dq, dk, dv


_kernels = built_once(lambda: _build())


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first attention, not with `import ndflow`
    except ImportError:
        return None
    if omp_pool.launcher() is None:
        return None
    from numba import cfunc, types  # noqa: PLC0415

    global claim_chunk, address_as_pointer, carray
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    _vector_globals(simd_numba.vector_ops())
    _helpers(numba.njit(inline="always"))

    # data = [counter, heads, chunk, (address, length) of q, k, v, out, lse, scratch, params,
    #         scale, finished]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def attention_forward(data):
        wide_vectors()
        d = carray(data, 20, dtype=np.int64)
        heads, chunk = d[1], d[2]
        slot = claim_chunk(data)
        while slot * chunk < heads:
            for h in range(slot * chunk, min(slot * chunk + chunk, heads)):
                forward_head(d, h, slot)
            slot = claim_chunk(data)

    # data = [counter, heads, chunk, (address, length) of g, q, k, v, out, lse, dq, dk, dv,
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
    global wide_vectors, vload, vstore, vsplat, vzero, vfma, vmul, vadd, vsub
    global vmax, vhmax, vexp, vsum, vbroadcast
    wide_vectors, vload, vstore, vsplat, vzero = (ops.wide_vectors, ops.vload, ops.vstore,
                                                  ops.vsplat, ops.vzero)
    vfma, vmul, vadd, vsub = ops.vfma, ops.vmul, ops.vadd, ops.vsub
    vmax, vhmax, vexp, vsum, vbroadcast = (ops.vmax, ops.vhmax, ops.vexp, ops.vsum,
                                           ops.vbroadcast)


def _helpers(inline) -> None:
    global view, product, exp_rows, transpose_in, transpose_out, forward_head, backward_head

    @inline
    def view(d, k, dtype):
        """The array at d[k] (its length at d[k + 1])."""
        return carray(address_as_pointer(d[k], dtype), d[k + 1])

    @inline
    def product(a, a_base, a_row, a_col, rows, inner, b_mat, b_base, b_row, cols, c, c_base,
                c_row, alpha, add):
        """c[c_base + r * c_row + j] (+)= alpha * sum_i a[a_base + r * a_row + i * a_col] *
        b_mat[b_base + i * b_row + j], r < rows (at most ROWS), j < cols (a multiple of 16);
        `add`: accumulated into c, else c is overwritten."""
        last = rows - 1
        o1, o2, o3 = min(1, last) * a_row, min(2, last) * a_row, min(3, last) * a_row
        al = vsplat(alpha)
        j = 0
        while j < cols:
            two = j + 16 < cols
            acc0 = acc1 = acc2 = acc3 = vzero()
            bcc0 = bcc1 = bcc2 = bcc3 = vzero()
            for i in range(inner):
                ai = a_base + i * a_col
                x0, x1 = vbroadcast(a, ai), vbroadcast(a, ai + o1)
                x2, x3 = vbroadcast(a, ai + o2), vbroadcast(a, ai + o3)
                bi = b_base + i * b_row + j
                y = vload(b_mat, bi)
                acc0, acc1 = vfma(x0, y, acc0), vfma(x1, y, acc1)
                acc2, acc3 = vfma(x2, y, acc2), vfma(x3, y, acc3)
                if two:
                    z = vload(b_mat, bi + 16)
                    bcc0, bcc1 = vfma(x0, z, bcc0), vfma(x1, z, bcc1)
                    bcc2, bcc3 = vfma(x2, z, bcc2), vfma(x3, z, bcc3)
            for r in range(rows):
                ci = c_base + r * c_row + j
                first = acc0 if r == 0 else acc1 if r == 1 else acc2 if r == 2 else acc3
                res = vmul(first, al)
                vstore(c, ci, vadd(vload(c, ci), res) if add else res)
                if two:
                    second = bcc0 if r == 0 else bcc1 if r == 1 else bcc2 if r == 2 else bcc3
                    res = vmul(second, al)
                    vstore(c, ci + 16, vadd(vload(c, ci + 16), res) if add else res)
            j += 32 if two else 16

    @inline
    def exp_rows(sc, base, rows, s, sp, shift, shift_base, normalize):
        """Rows of sc (scaled scores, `sp` wide of which `s` are keys) become exp(x - m): m
        the row's maximum, written to shift[shift_base + r] as m + log(sum) (`normalize`:
        the row is then divided by its sum: the softmax), or m = shift[shift_base + r]
        (the gradient: the forward pass's log-sum-exp). Padding columns become 0."""
        neg = np.float32(-np.inf)
        for r in range(rows):
            row = base + r * sp
            for j in range(s, sp):
                sc[row + j] = neg
            if normalize:
                m = vload(sc, row)
                for j in range(16, sp, 16):
                    m = vmax(m, vload(sc, row + j))
                top = vhmax(m)
            else:
                top = shift[shift_base + r]
            tops = vsplat(top)
            total = vzero()
            for j in range(0, sp, 16):
                e = vexp(vsub(vload(sc, row + j), tops))
                vstore(sc, row + j, e)
                total = vadd(total, e)
            if normalize:
                z = vsum(total)
                shift[shift_base + r] = top + np.log(z)
                inv = vsplat(np.float32(1.0) / z)
                for j in range(0, sp, 16):
                    vstore(sc, row + j, vmul(vload(sc, row + j), inv))

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
        out, lse = view(d, 9, np.float32), view(d, 11, np.float32)
        scratch, p = view(d, 13, np.float32), view(d, 15, np.int64)
        scale = view(d, 17, np.float32)[0]
        t, s, n, depth, sp = p[1], p[2], p[3], p[4], p[5]
        b, head = h // n, h % n
        nd = n * depth
        qb, kb = (b * t * n + head) * depth, (b * s * n + head) * depth
        kt = slot * (depth + ROWS) * sp
        sc = kt + depth * sp
        transpose_in(k, kb, nd, s, depth, sp, scratch, kt)
        for r0 in range(0, t, ROWS):
            rows = min(ROWS, t - r0)
            product(q, qb + r0 * nd, nd, 1, rows, depth, scratch, kt, sp, sp, scratch, sc, sp,
                    scale, False)
            exp_rows(scratch, sc, rows, s, sp, lse, h * t + r0, True)
            product(scratch, sc, sp, 1, rows, s, v, kb, nd, depth, out, qb + r0 * nd, nd,
                    np.float32(1.0), False)

    @inline
    def backward_head(d, h, slot):
        g, q, k = view(d, 3, np.float32), view(d, 5, np.float32), view(d, 7, np.float32)
        v, o, lse = view(d, 9, np.float32), view(d, 11, np.float32), view(d, 13, np.float32)
        dq, dk, dv = view(d, 15, np.float32), view(d, 17, np.float32), view(d, 19, np.float32)
        scratch, p = view(d, 21, np.float32), view(d, 23, np.int64)
        scale = view(d, 25, np.float32)[0]
        t, s, n, depth, sp = p[1], p[2], p[3], p[4], p[5]
        b, head = h // n, h % n
        nd = n * depth
        qb, kb = (b * t * n + head) * depth, (b * s * n + head) * depth
        kt = slot * (4 * depth * sp + 2 * t * sp)
        vt, probs = kt + depth * sp, kt + 2 * depth * sp
        dscores = probs + t * sp
        dvt, dkt = dscores + t * sp, dscores + t * sp + depth * sp
        transpose_in(k, kb, nd, s, depth, sp, scratch, kt)
        transpose_in(v, kb, nd, s, depth, sp, scratch, vt)
        for r0 in range(0, t, ROWS):
            rows = min(ROWS, t - r0)
            pr, dr, qr = probs + r0 * sp, dscores + r0 * sp, qb + r0 * nd
            product(q, qr, nd, 1, rows, depth, scratch, kt, sp, sp, scratch, pr, sp, scale,
                    False)
            exp_rows(scratch, pr, rows, s, sp, lse, h * t + r0, False)
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

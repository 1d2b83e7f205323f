"""A register-blocked float32 matrix product for hand-written numba kernels (16-lane vectors
of kernels/simd_numba.py), shared by the attention kernels (attention_numba.py) and the FFT
convolution's per-frequency products (conv_fft_numba.py).

`product` computes one small product from strided operands: A's elements broadcast, four rows
at a time, against four 16-lane column tiles of B (sixteen accumulators, then two or one
tiles for the last columns): on a 2-core Zen 5 ~450-550 GFLOP/s for the attention's
[4 x 32] x [32 x 208] blocks, where ATen's batched products of such sizes (MKL's sgemm,
AVX2 code on AMD CPUs) ran at 110-250.

The kernels inline it, and numba's disk cache keys a kernel on its own file: after changing
this one, touch the kernels' files (as for simd_numba.py).
"""

from __future__ import annotations

from types import SimpleNamespace

from ndflow.kernels import simd_numba
from ndflow.kernels.build_once import built_once

ROWS = 4   # rows of A per register block
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
vload = vstore = vzero = vfma = vmul = vadd = vsplat = vbroadcast = None
pick = put = product = None


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first kernel, not with `import ndflow`
    except ImportError:
        return None
    global vload, vstore, vzero, vfma, vmul, vadd, vsplat, vbroadcast, pick, put, product
    ops = simd_numba.vector_ops()
    vload, vstore, vzero, vfma, vmul, vadd, vsplat, vbroadcast = (
        ops.vload, ops.vstore, ops.vzero, ops.vfma, ops.vmul, ops.vadd, ops.vsplat,
        ops.vbroadcast)
    inline = numba.njit(inline="always")

    @inline
    def pick(r, v0, v1, v2, v3):
        return v0 if r == 0 else v1 if r == 1 else v2 if r == 2 else v3

    @inline
    def put(c, index, v, add):
        vstore(c, index, vadd(vload(c, index), v) if add else v)

    @inline
    def product(a, a_base, a_row, a_col, rows, inner, b_mat, b_base, b_row, cols, c, c_base,
                c_row, alpha, add):
        """c[c_base + r * c_row + j] (+)= alpha * sum_i a[a_base + r * a_row + i * a_col] *
        b_mat[b_base + i * b_row + j], r < rows (at most ROWS), j < cols (a multiple of 16),
        added to c's values when `add`: blocks of four 16-lane column tiles (16
        accumulators), then of two or one."""
        last = rows - 1
        o1, o2, o3 = min(1, last) * a_row, min(2, last) * a_row, min(3, last) * a_row
        al = vsplat(alpha)
        j = 0
        while j + 64 <= cols:
            p0 = p1 = p2 = p3 = q0 = q1 = q2 = q3 = vzero()
            u0 = u1 = u2 = u3 = w0 = w1 = w2 = w3 = vzero()
            for i in range(inner):
                ai = a_base + i * a_col
                x0, x1 = vbroadcast(a, ai), vbroadcast(a, ai + o1)
                x2, x3 = vbroadcast(a, ai + o2), vbroadcast(a, ai + o3)
                bi = b_base + i * b_row + j
                y = vload(b_mat, bi)
                p0, p1, p2, p3 = vfma(x0, y, p0), vfma(x1, y, p1), vfma(x2, y, p2), \
                    vfma(x3, y, p3)
                y = vload(b_mat, bi + 16)
                q0, q1, q2, q3 = vfma(x0, y, q0), vfma(x1, y, q1), vfma(x2, y, q2), \
                    vfma(x3, y, q3)
                y = vload(b_mat, bi + 32)
                u0, u1, u2, u3 = vfma(x0, y, u0), vfma(x1, y, u1), vfma(x2, y, u2), \
                    vfma(x3, y, u3)
                y = vload(b_mat, bi + 48)
                w0, w1, w2, w3 = vfma(x0, y, w0), vfma(x1, y, w1), vfma(x2, y, w2), \
                    vfma(x3, y, w3)
            for r in range(rows):
                ci = c_base + r * c_row + j
                put(c, ci, vmul(pick(r, p0, p1, p2, p3), al), add)
                put(c, ci + 16, vmul(pick(r, q0, q1, q2, q3), al), add)
                put(c, ci + 32, vmul(pick(r, u0, u1, u2, u3), al), add)
                put(c, ci + 48, vmul(pick(r, w0, w1, w2, w3), al), add)
            j += 64
        while j < cols:
            two = j + 16 < cols
            p0 = p1 = p2 = p3 = q0 = q1 = q2 = q3 = vzero()
            for i in range(inner):
                ai = a_base + i * a_col
                x0, x1 = vbroadcast(a, ai), vbroadcast(a, ai + o1)
                x2, x3 = vbroadcast(a, ai + o2), vbroadcast(a, ai + o3)
                bi = b_base + i * b_row + j
                y = vload(b_mat, bi)
                p0, p1, p2, p3 = vfma(x0, y, p0), vfma(x1, y, p1), vfma(x2, y, p2), \
                    vfma(x3, y, p3)
                if two:
                    y = vload(b_mat, bi + 16)
                    q0, q1, q2, q3 = vfma(x0, y, q0), vfma(x1, y, q1), vfma(x2, y, q2), \
                        vfma(x3, y, q3)
            for r in range(rows):
                ci = c_base + r * c_row + j
                put(c, ci, vmul(pick(r, p0, p1, p2, p3), al), add)
                if two:
                    put(c, ci + 16, vmul(pick(r, q0, q1, q2, q3), al), add)
            j += 32 if two else 16

    return SimpleNamespace(product=product)


# the helpers (`product`), built on first use; None without numba
helpers = built_once(_build)

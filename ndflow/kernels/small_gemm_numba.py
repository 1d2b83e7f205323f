"""Float32 matrix products on the calling thread: kernels/register_gemm_numba.py's
register-blocked product over a whole [M x K] by [K x N] matrix, the bias and a ReLU applied
in the same call, for kernels/gemm.py to time against the GEMM libraries per shape (its
VECTOR candidate).

A model of narrow layers multiplies many small matrices: a 31-layer Keras MLP of 64 units at
batch 64 runs 92 products of [64 x 64] by [64 x 64] a step. MKL's sgemm (AVX2 code on AMD
CPUs) took 5-6 us for one, its team's start and join included; this kernel ~2 us on one core
and ~4 us with the output's allocation and the call (2-core Zen 5, AVX-512). On CPUs without
512-bit vectors, and for products large enough to gain from the threads, the libraries win
the timing and keep the shape.

The operands are read in place by their strides (a transposed view is not copied); a right
operand whose columns are not adjacent in memory (`w` of a product by a transposed weight) is
first packed into a local [K x N] buffer (16 x 16 blocks transposed in registers: 0.2 us for
64 x 64, a scalar loop's 1.0). Where N is not a multiple of the 16-lane vectors (a
classifier's 10 logits) the packed operand has zero columns up to the next multiple and each
block of rows is computed into a scratch block, of which the N columns are copied out: the
[64 x 64] by [64 x 10] product of a 10-class head took 30-45 us in a training step on ATen's
kernel (its call, not its arithmetic) and ~5 us here.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, raw_memory, register_gemm_numba, simd_numba
from ndflow.kernels.build_once import built_once

LANES = 16   # the product's columns come in 16-lane vectors
# numba helpers as module globals (numba's disk cache refuses closure cells)
product = wide_vectors = address_as_pointer = carray = None
vload = vstore = vadd = vrelu = vtranspose = None


def applies(a: torch.Tensor, w: torch.Tensor) -> bool:
    """Whether `linear(a, w)` can run: 2-D float32 CPU operands a [M, K] and w [N, K] of
    non-negative strides, none empty, and the kernel built (numba)."""
    return (a.dim() == 2 and w.dim() == 2 and a.dtype == torch.float32
            and w.dtype == torch.float32 and a.is_cpu and w.is_cpu
            and a.shape[1] == w.shape[1] and a.numel() > 0
            and w.numel() > 0 and min(a.stride() + w.stride()) >= 0 and _kernel() is not None)


def linear(a: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None,
           relu: bool = False) -> torch.Tensor:
    """A new contiguous [M, N] = a @ w.T (+ bias, a float32 [N] tensor), its negative values
    set to zero when `relu`, for operands `applies` accepts."""
    return prepared(a, w, relu)(a, w, bias)


def prepared(a: torch.Tensor, w: torch.Tensor, relu: bool):
    """`run(a, w, bias)` computing `linear(a, w, bias, relu)` for operands of the shapes and
    strides of these (float32 CPU ones `applies` accepts), their layout checked once here and
    each call only where its operands lie: a product of a few microseconds pays for little
    more than the call. (So a call may take a 2-D operand's transposed view in its place: the
    same memory, which is all a call reads of it; kernels/gemm.py's Linear does.)"""
    m, k = a.shape
    n = w.shape[0]
    _, a_extent, a_row, a_col = raw_memory.matrix(a, torch.float32)
    # w.T [K, N] read as w: its row i is w's column i
    _, w_extent, w_row, w_col = raw_memory.matrix(w, torch.float32)
    kernel, f32 = _kernel(), torch.float32

    def run(a, w, bias):
        out = torch.empty(m, n)
        kernel(raw_memory.within(a, f32, a_extent), a_extent, a_row, a_col,
               raw_memory.within(w, f32, w_extent), w_extent, w_col, w_row,
               0 if bias is None else raw_memory.vector(bias, f32, n),
               raw_memory.within(out, f32, m * n), m, k, n, relu)
        return out
    return run


def _build():
    gemm = register_gemm_numba.helpers()
    if gemm is None:
        return None
    import numba  # noqa: PLC0415 - loads with the first such product, not with `import ndflow`

    global product, wide_vectors, address_as_pointer, carray, vload, vstore, vadd, vrelu, \
        vtranspose
    ops = simd_numba.vector_ops()
    product, wide_vectors = gemm.product, ops.wide_vectors
    vload, vstore, vadd, vrelu, vtranspose = ops.vload, ops.vstore, ops.vadd, ops.vrelu, \
        ops.vtranspose
    address_as_pointer, carray = omp_pool.chunk_intrinsics()[1], numba.carray
    rows_per_block = register_gemm_numba.ROWS

    @numba.njit(cache=True, nogil=True)   # inter-op threads run Python meanwhile
    def small_product(a_address, a_extent, a_row, a_col, b_address, b_extent, b_row, b_col,
                      bias_address, out_address, m, k, n, relu):
        """out[r * n + j] = bias[j] + sum_i a[r * a_row + i * a_col] * b[i * b_row +
        j * b_col] (bias_address 0: no bias), then max(0, .) when `relu`; the extents are
        the elements from each operand's first to its last one in memory."""
        wide_vectors()
        a = carray(address_as_pointer(a_address, np.float32), a_extent)
        b = carray(address_as_pointer(b_address, np.float32), b_extent)
        out = carray(address_as_pointer(out_address, np.float32), m * n)
        wide = -(-n // LANES) * LANES   # the columns computed: whole vectors
        if b_col != 1 or wide != n:   # the rows of b in unit stride, whole vectors: copied
            packed = np.zeros(k * wide, np.float32)
            whole = k - k % LANES if b_row == 1 and wide == n else 0
            for j in range(0, n, LANES):   # b's columns adjacent: 16 x 16 blocks transposed
                for i in range(0, whole, LANES):
                    vtranspose(b, j * b_col + i, b_col, packed, i * wide + j, wide)
            for i in range(whole, k):
                for j in range(n):
                    packed[i * wide + j] = b[i * b_row + j * b_col]
            b, b_row = packed, wide
        with_bias = bias_address != 0
        bias = carray(address_as_pointer(bias_address if with_bias else a_address,
                                         np.float32), n if with_bias else 1)
        one = np.float32(1.0)
        if wide != n:   # a block of rows computed whole, then its n columns copied out
            block = np.empty(rows_per_block * wide, np.float32)
            for r in range(0, m, rows_per_block):
                rows = min(rows_per_block, m - r)
                product(a, r * a_row, a_row, a_col, rows, k, b, 0, b_row, wide, block, 0,
                        wide, one, False)
                for i in range(rows):
                    for j in range(n):
                        v = block[i * wide + j]
                        if with_bias:
                            v += bias[j]
                        if relu and v < 0:   # (NaN stays, as vrelu keeps it)
                            v = np.float32(0)
                        out[(r + i) * n + j] = v
            return
        for r in range(0, m, rows_per_block):
            rows = min(rows_per_block, m - r)
            product(a, r * a_row, a_row, a_col, rows, k, b, 0, b_row, n, out, r * n, n, one,
                    False)
            if with_bias or relu:   # on the block's rows while they are in L1
                for i in range(r * n, (r + rows) * n, LANES):
                    v = vload(out, i)
                    if with_bias:
                        v = vadd(v, vload(bias, i % n))
                    vstore(out, i, vrelu(v) if relu else v)

    return small_product


_kernel = built_once(_build)
small_product = None   # the kernel, a module global for the C functions below


def _build_functions():
    kernel = _kernel()
    if kernel is None:
        return None
    import ctypes  # noqa: PLC0415

    import numba  # noqa: PLC0415
    global small_product
    small_product = kernel
    sig = numba.types.void(*[numba.types.int64] * 13, numba.types.boolean)
    c_function = numba.cfunc(sig, nopython=True, cache=True)

    @c_function
    def any_strides(a, ae, ar, ac, b, be, br, bc, bias, out, m, k, n, relu):
        small_product(a, ae, ar, ac, b, be, br, bc, bias, out, m, k, n, relu)

    @c_function
    def unit_b(a, ae, ar, ac, b, be, br, bc, bias, out, m, k, n, relu):
        small_product(a, ae, ar, ac, b, be, br, 1, bias, out, m, k, n, relu)

    @c_function
    def unit_a(a, ae, ar, ac, b, be, br, bc, bias, out, m, k, n, relu):
        small_product(a, ae, ar, 1, b, be, br, bc, bias, out, m, k, n, relu)

    @c_function
    def unit_both(a, ae, ar, ac, b, be, br, bc, bias, out, m, k, n, relu):
        small_product(a, ae, ar, 1, b, be, br, 1, bias, out, m, k, n, relu)

    proto = ctypes.CFUNCTYPE(None, *[ctypes.c_int64] * 13, ctypes.c_bool)
    compiled = ((any_strides, unit_b), (unit_a, unit_both))
    return compiled, tuple(tuple(proto(f.address) for f in row) for row in compiled)


_functions = built_once(_build_functions)


def product_functions():
    """The product as C functions `void(int64 x 13, bool)` (the kernel's arguments), as
    ctypes objects indexed [a's column stride is 1][b's column stride is 1] (those strides
    fixed in the code: called with them as literals, the dispatcher ran the deep MLP's jit
    step in 1.18-1.21 ms, with every argument an int64 in 1.30-1.39), for
    generated code to call through a pointer (jit/native_segments.py): numba compiled a caller
    of the dispatcher with the kernel inlined at each call site (~0.3 s a segment of two
    products, seconds more for each new combination of literal arguments), and compiles a
    caller of a pointer in ~0.05 s. None without numba."""
    built = _functions()
    return None if built is None else built[1]

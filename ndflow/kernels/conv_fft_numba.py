"""The FFT convolution's per-frequency complex products (conv_fft.py) as one numba kernel on
ATen's OpenMP team, each frequency's four real [rows x inner] x [inner x columns] products
by kernels/register_gemm_numba.py's register-blocked loop.

ATen's batched products (`bmm`, MKL's sgemm: AVX2 code on AMD CPUs) ran MNIST's second layer
(144 frequencies of [64 x 64] x [64 x 64] and [64 x 32] x [32 x 64]) at ~165 GFLOP/s on a
2-core Zen 5: 0.9 ms of the FFT pass's 2.2. Columns (output channels) must be a multiple of
16 (`applies`); conv_fft.py runs ATen's products otherwise.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, register_gemm_numba
from ndflow.kernels.build_once import built_once

SPECTRA, FILTER_GRADIENT = 0, 1   # the kernel's modes
claim_chunk = address_as_pointer = carray = product = None


def applies(columns: int, t: torch.Tensor) -> bool:
    return (columns % 16 == 0 and t.dtype == torch.float32 and t.device.type == "cpu"
            and _kernel() is not None)


def spectra_products(spec: torch.Tensor, filt: torch.Tensor) -> torch.Tensor:
    """conv_fft._products: [2 (re, im), f, N, out] from the data's spectrum [2, f, N, C] and
    the filter's matrices [f, 2, C, out] in any shape of that memory (F0, then F1): real
    Xr F0 + Xi F1, imaginary Xi F0 - Xr F1."""
    spec, filt = spec.contiguous(), filt.contiguous()
    _, f, n, ch = spec.shape
    out = filt.numel() // (2 * f * ch)
    prod = torch.empty((2, f, n, out), dtype=torch.float32)
    _run(SPECTRA, f, [spec, filt, prod, prod], [f, n, ch, out])
    return prod


def filter_products(xs: torch.Tensor, gs: torch.Tensor) -> torch.Tensor:
    """[2 (re, im), f, C, O]: X^T conj(G) per frequency, from the spectra [2, f, N, C] and
    [2, f, N, O]: real Xr^T Gr + Xi^T Gi, imaginary Xi^T Gr - Xr^T Gi."""
    xs, gs = xs.contiguous(), gs.contiguous()
    _, f, n, ch = xs.shape
    out = gs.shape[-1]
    parts = torch.empty((2, f, ch, out), dtype=torch.float32)
    _run(FILTER_GRADIENT, f, [xs, gs, parts[0], parts[1]], [f, n, ch, out])
    return parts


def _run(mode: int, frequencies: int, arrays: list, sizes: list) -> None:
    threads = max(1, min(torch.get_num_threads(), frequencies))
    chunk = max(1, -(-frequencies // (4 * threads)))
    omp_pool.run_chunks(_kernel(), frequencies, chunk,
                        arrays + [np.array([mode] + sizes, dtype=np.int64)], threads)


def _build():
    gemm, nb = register_gemm_numba.helpers(), omp_pool.callback_builder()
    if gemm is None or nb is None:
        return None
    numba, cfunc, types = nb.numba, nb.cfunc, nb.types

    global claim_chunk, address_as_pointer, carray, product
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray, product = numba.carray, gemm.product
    rows_per_block = register_gemm_numba.ROWS
    one, minus_one = np.float32(1.0), np.float32(-1.0)

    # data = [counter, frequencies, chunk, (address, length) of a, b, out0, out1, params,
    #         finished]; params = mode, f, n, c, o
    @cfunc(types.void(types.voidptr), nopython=True, cache=True)
    def spectral_products(data):
        d = carray(data, 14, dtype=np.int64)
        a = carray(address_as_pointer(d[3], np.float32), d[4])
        b = carray(address_as_pointer(d[5], np.float32), d[6])
        out0 = carray(address_as_pointer(d[7], np.float32), d[8])
        out1 = carray(address_as_pointer(d[9], np.float32), d[10])
        p = carray(address_as_pointer(d[11], np.int64), d[12])
        mode, f, n, c, o = p[0], p[1], p[2], p[3], p[4]
        q = claim_chunk(data)
        while q * d[2] < d[1]:
            for fi in range(q * d[2], min(q * d[2] + d[2], d[1])):
                if mode == 0:
                    # a: spectrum [2, f, n, c]; b: filter [f, 2c, o]; out0: [2, f, n, o]
                    xr, xi = fi * n * c, (f + fi) * n * c
                    f0 = fi * 2 * c * o
                    f1 = f0 + c * o
                    re, im = fi * n * o, (f + fi) * n * o
                    for r0 in range(0, n, rows_per_block):
                        rows = min(rows_per_block, n - r0)
                        ar, ai, cr, ci = xr + r0 * c, xi + r0 * c, re + r0 * o, im + r0 * o
                        product(a, ar, c, 1, rows, c, b, f0, o, o, out0, cr, o, one, False)
                        product(a, ai, c, 1, rows, c, b, f1, o, o, out0, cr, o, one, True)
                        product(a, ai, c, 1, rows, c, b, f0, o, o, out0, ci, o, one, False)
                        product(a, ar, c, 1, rows, c, b, f1, o, o, out0, ci, o, minus_one,
                                True)
                else:
                    # a: [2, f, n, c]; b: [2, f, n, o]; out0, out1: [f, c, o]
                    xr, xi = fi * n * c, (f + fi) * n * c
                    gr, gi = fi * n * o, (f + fi) * n * o
                    base = fi * c * o
                    for c0 in range(0, c, rows_per_block):
                        rows = min(rows_per_block, c - c0)
                        cr = base + c0 * o
                        product(a, xr + c0, 1, c, rows, n, b, gr, o, o, out0, cr, o, one,
                                False)
                        product(a, xi + c0, 1, c, rows, n, b, gi, o, o, out0, cr, o, one,
                                True)
                        product(a, xi + c0, 1, c, rows, n, b, gr, o, o, out1, cr, o, one,
                                False)
                        product(a, xr + c0, 1, c, rows, n, b, gi, o, o, out1, cr, o,
                                minus_one, True)
            q = claim_chunk(data)

    return spectral_products.address


_kernel = built_once(_build)

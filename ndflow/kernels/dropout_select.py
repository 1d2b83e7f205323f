"""`_DropoutSelect` (passes/dropout_fusion.py): `x * scale` where `u >= rate`, else 0, in one
numba pass on contiguous float32/float64 CPU tensors of one shape, or a bfloat16 x with a
float32/float64 u (the mixed-precision rewrite's dropout); ATen's `where` of a comparison
and a product elsewhere. float32 tensors of PARALLEL_ELEMENTS and more run in 16-lane vectors
on ATen's OpenMP team (kernels/omp_pool.py): 0.054 ms at 64x14x14x64 on a 2-core Zen 5, where
the one-thread loop took 0.43 ms.

A dropout was three ops over its activation (GreaterEqual, Mul, SelectV2) and its gradient
two (SelectV2, Mul); each is a pass over a buffer and, inside a training step, a call whose
code the step's large kernels have pushed out of the cache. The values are the ones those
ops give: the product rounded once, a dropped element 0 whatever x holds (NaN included).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from ndflow.kernels import bfloat16_numba, omp_pool, simd_numba
from ndflow.kernels.build_once import built_once
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_fused

_DTYPES = (torch.float32, torch.float64)
# float32 tensors from this size on run in chunks on ATen's OpenMP team (kernels/omp_pool.py)
PARALLEL_ELEMENTS = 1 << 15
CHUNK_ELEMENTS = 1 << 14
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
bf16_to_f32 = f32_to_bf16 = None
claim_chunk = address_as_pointer = carray = wide_vectors = None
vload = vstore = vsplat = vmul = vkeep_ge = None


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such op, not with ndflow
    except ImportError:
        return None
    global bf16_to_f32, f32_to_bf16
    bf16_to_f32, f32_to_bf16, _ = bfloat16_numba.helpers()

    @numba.njit(cache=True, nogil=True)
    def select(u, x, out, rate, scale):
        for i in range(x.size):
            out[i] = x[i] * scale if u[i] >= rate else 0

    @numba.njit(cache=True, nogil=True)
    def select_bf16(u, x, out, rate, scale):
        """x and out bfloat16 bits (int16), scale a bfloat16 value: the product rounded once."""
        for i in range(x.size):
            out[i] = np.int16(f32_to_bf16(bf16_to_f32(x[i]) * scale)) if u[i] >= rate else 0

    launcher = None
    if omp_pool.launcher() is not None:
        global claim_chunk, address_as_pointer, carray, wide_vectors, vload, vstore, vsplat
        global vmul, vkeep_ge
        claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
        carray = numba.carray
        ops = simd_numba.vector_ops()
        wide_vectors, vload, vstore, vsplat = ops.wide_vectors, ops.vload, ops.vstore, ops.vsplat
        vmul, vkeep_ge = ops.vmul, ops.vkeep_ge

        # data = [counter, elements, chunk, (address, length) of u, x, out, (rate, scale)]
        @numba.cfunc(numba.types.void(numba.types.voidptr), nopython=True, cache=True)
        def select_chunks(data):
            wide_vectors()
            d = carray(data, 12, dtype=np.int64)
            n, chunk = d[1], d[2]
            u = carray(address_as_pointer(d[3], np.float32), n)
            x = carray(address_as_pointer(d[5], np.float32), n)
            out = carray(address_as_pointer(d[7], np.float32), n)
            p = carray(address_as_pointer(d[9], np.float32), 2)
            rate, scale = p[0], p[1]
            rates, scales = vsplat(rate), vsplat(scale)
            q = claim_chunk(data)
            while q * chunk < n:
                i, end = q * chunk, min(q * chunk + chunk, n)
                while i + 16 <= end:
                    vstore(out, i, vkeep_ge(vload(u, i), rates, vmul(vload(x, i), scales)))
                    i += 16
                while i < end:
                    out[i] = x[i] * scale if u[i] >= rate else np.float32(0.0)
                    i += 1
                q = claim_chunk(data)
        launcher = select_chunks.address
    return select, select_bf16, launcher


_select = built_once(_build)


def dropout_select(u: torch.Tensor, x: torch.Tensor, rate: float, scale: float) -> torch.Tensor:
    if (u.shape == x.shape and u.device.type == x.device.type == "cpu" and u.is_contiguous()
            and x.is_contiguous() and u.dtype in _DTYPES and x.dtype in (u.dtype, torch.bfloat16)
            and _select() is not None):
        out = torch.empty_like(x)
        u_type = np.float32 if u.dtype == torch.float32 else np.float64
        if x.dtype == torch.bfloat16:
            # bits in, bits out (ATen's where on bfloat16 took 100 us for MNIST's 64x512)
            kernel, xs, outs = _select()[1], x.view(torch.int16), out.view(torch.int16)
            scale = np.float32(_rounded(scale, torch.bfloat16))
        elif x.dtype == torch.float32 and _select()[2] is not None and \
                x.numel() >= PARALLEL_ELEMENTS:
            threads = torch.get_num_threads()
            omp_pool.run_chunks(_select()[2], x.numel(), CHUNK_ELEMENTS,
                                [u, x, out, np.array([rate, scale], dtype=np.float32)],
                                min(threads, -(-x.numel() // CHUNK_ELEMENTS)))
            return out
        else:
            kernel, xs, outs, scale = _select()[0], x, out, u_type(scale)
        kernel(u.numpy().reshape(-1), xs.numpy().reshape(-1), outs.numpy().reshape(-1),
               u_type(rate), scale)
        return out
    # Python numbers, not tensors made per call (on a GPU each was a host-to-device copy that
    # waits), rounded to the tensors' dtypes first as 0-d tensors of those dtypes were
    return torch.where(u >= _rounded(rate, u.dtype), x * _rounded(scale, x.dtype), 0.0)


@functools.lru_cache(maxsize=64)
def _rounded(value: float, dtype: torch.dtype) -> float:
    return float(torch.tensor(value, dtype=dtype))


@kernel(nn_fused.DropoutSelect)
def _dropout_select(node):
    rate, scale = float(node.attrs["rate"]), float(node.attrs["scale"])

    def run(u, x):
        return dropout_select(u, x, rate, scale)
    return run

"""bfloat16 scalars for numba kernels: numba has none, so bfloat16 values travel as 16-bit
integer bit patterns, widened exactly to float32 and rounded back to nearest even as ATen
rounds (NaN to the quiet NaN 0x7FC0). Hand-written kernels and the JIT's generated ones
(jit/codegen/numba_intrinsics.py) share these, so a bfloat16 result rounds the same
whichever computed it. Built with the first kernel that asks (numba is not imported with
ndflow).
"""

from __future__ import annotations

import numpy as np

from ndflow.kernels import omp_pool
from ndflow.kernels.build_once import built_once

# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
f32_from_bits = f32_bits = bf16_to_f32 = f32_to_bf16 = round_bf16 = None


def _build():
    from numba import njit  # noqa: PLC0415 - loads with the first such kernel, not with ndflow
    global f32_from_bits, f32_bits, bf16_to_f32, f32_to_bf16, round_bf16
    f32_from_bits, f32_bits = omp_pool.chunk_intrinsics()[2], omp_pool.f32_bits_intrinsic()

    @njit(cache=True)
    def bf16_to_f32(u):
        """bfloat16 bits (any integer type; an int16 is taken as its 16 bits) -> float32."""
        return f32_from_bits(np.uint32(np.uint16(u)) << np.uint32(16))

    @njit(cache=True)
    def f32_to_bf16(x):
        """float32 -> bfloat16 bits (uint16), rounded to nearest even."""
        x = np.float32(x)
        u = f32_bits(x)
        if x != x:
            return np.uint16(0x7FC0)
        return np.uint16((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))
                         >> np.uint32(16))

    @njit(cache=True)
    def round_bf16(x):
        """x rounded to bfloat16, as float32."""
        return bf16_to_f32(f32_to_bf16(x))

    return bf16_to_f32, f32_to_bf16, round_bf16


# (bf16_to_f32, f32_to_bf16, round_bf16)
helpers = built_once(_build)

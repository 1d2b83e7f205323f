"""float32 exp and sigmoid for numba kernels, as branch-free arithmetic LLVM vectorizes:
`math.exp` is a call into libm, one element at a time. exp is Cephes' float32 polynomial
(a few ulp from ATen's SLEEF results), sigmoid 1 / (1 + exp(-x)). The JIT's generated
kernels (jit/codegen/numba_intrinsics.py) and hand-written ones (kernels/rnn_numba.py) share
these. Built with the first kernel that asks (numba is not imported with ndflow).
"""

from __future__ import annotations

import numpy as np

from ndflow.kernels import omp_pool
from ndflow.kernels.build_once import built_once

# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
f32_from_bits = exp_f32 = None


def _build():
    from numba import njit  # noqa: PLC0415 - loads with the first such kernel, not with ndflow
    global f32_from_bits, exp_f32
    f32_from_bits = omp_pool.chunk_intrinsics()[2]

    @njit(cache=True, error_model="numpy")
    def exp_f32(x):
        xc = min(max(x, np.float32(-103.9)), np.float32(88.72283))
        n = np.floor(xc * np.float32(1.44269504088896341) + np.float32(0.5))
        r = xc - n * np.float32(0.693359375) - n * np.float32(-2.12194440e-4)
        p = np.float32(1.9875691500e-4)
        p = p * r + np.float32(1.3981999507e-3)
        p = p * r + np.float32(8.3334519073e-3)
        p = p * r + np.float32(4.1665795894e-2)
        p = p * r + np.float32(1.6666665459e-1)
        p = p * r + np.float32(5.0000001201e-1)
        p = p * (r * r) + r + np.float32(1.0)
        # 2^n as two factors: n reaches 150 below float32's smallest normal
        k = np.int32(n)
        k1 = k >> np.int32(1)
        s1 = f32_from_bits(np.uint32((k1 + np.int32(127)) << np.int32(23)))
        s2 = f32_from_bits(np.uint32((k - k1 + np.int32(127)) << np.int32(23)))
        y = p * s1 * s2
        y = np.float32(0.0) if x < np.float32(-103.9) else y
        y = np.float32(np.inf) if x > np.float32(88.72283) else y
        return x if x != x else y

    @njit(cache=True, error_model="numpy")
    def sigmoid_f32(x):
        return np.float32(1.0) / (np.float32(1.0) + exp_f32(-x))

    return exp_f32, sigmoid_f32


# (exp_f32, sigmoid_f32)
helpers = built_once(_build)

"""Scalar helpers that generated numba kernels import (never imported by `import ndflow`).

numba has no float16/bfloat16 scalars: 16-bit floats travel as uint16 bit patterns and are
widened/rounded with LLVM bit casts (`fpext`/`fptrunc` for IEEE half here, integer
round-to-nearest-even for bfloat16 in kernels/bfloat16_numba.py, as ATen rounds). `select`,
`maximum` and `minimum` are the backend-neutral primitives of emitters.py (maximum/minimum
propagate NaN like ATen's).
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

from ndflow.kernels import bfloat16_numba, exp_numba, omp_pool, tanh_numba
from ndflow.kernels.simd_numba import vector_ops

# float32 from its bits: kernels/omp_pool.py's intrinsic, shared with hand-written kernels
# (as the bfloat16 helpers are: kernels/bfloat16_numba.py)
_f32_from_bits = omp_pool.chunk_intrinsics()[2]
bf16_to_f32, f32_to_bf16, round_bf16 = bfloat16_numba.helpers()


@intrinsic
def f16_to_f32(typingctx, u):
    """IEEE half bits (uint16) -> float32."""
    if not isinstance(u, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        v = args[0]
        if u.bitwidth != 16:
            v = builder.trunc(v, ir.IntType(16)) if u.bitwidth > 16 else \
                builder.zext(v, ir.IntType(16))
        return builder.fpext(builder.bitcast(v, ir.HalfType()), ir.FloatType())
    return types.float32(u), codegen


@intrinsic
def f32_to_f16(typingctx, x):
    """float32 -> IEEE half bits (uint16), rounded to nearest even."""
    if not isinstance(x, types.Float):
        return None

    def codegen(context, builder, sig, args):
        h = builder.fptrunc(args[0], ir.HalfType())
        return builder.bitcast(h, ir.IntType(16))
    return types.uint16(x), codegen


# The helpers keep their machine code in numba's on-disk cache (beside this file, or numba's
# user cache when the package is read-only; keyed on this file's stamp): the float32 tanh/exp
# chain alone costs a process ~1 s of its first JIT step to compile, ~0.3 s to load.
@njit(cache=True)
def round_f16(x):
    return f16_to_f32(f32_to_f16(np.float32(x)))


@njit(cache=True)
def select(c, a, b):
    return a if c else b


@njit(cache=True)
def maximum(a, b):
    return a if (a > b or a != a) else b


@njit(cache=True)
def minimum(a, b):
    return a if (a < b or a != a) else b


@njit(cache=True)
def pow(x, y):  # noqa: A001 - the backend-neutral primitive's name
    return x ** y


@njit(cache=True)
def trunc_div(s, n):
    q = abs(s) // n
    return -q if s < 0 else q


# -- exp and tanh that LLVM can vectorize ------------------------------------------------------
# math.exp/tanh are calls into libm, one element at a time; these are branch-free arithmetic,
# so a loop calling them becomes AVX code. float64 keeps libm.

def exp(x):  # noqa: D103 - typed by the overload below
    return math.exp(x)


def tanh(x):  # noqa: D103
    return math.tanh(x)


# float32 exp: kernels/exp_numba.py's Cephes polynomial (hand-written kernels share it)
_exp_f32 = exp_numba.helpers()[0]


# float32 tanh as TF's Eigen and XLA compute it: kernels/tanh_numba.py's rational function
# (the Tanh op's own CPU kernel runs it too)
_tanh_f32 = tanh_numba.tanh_f32_function()


@overload(exp)
def _exp_overload(x):
    if x == types.float32:
        return lambda x: _exp_f32(x)
    return lambda x: math.exp(x)


@overload(tanh)
def _tanh_overload(x):
    if x == types.float32:
        return lambda x: _tanh_f32(x)
    return lambda x: math.tanh(x)


# Marks the kernel being compiled for 512-bit vectors: LLVM's tuning for AVX-512 server cores
# otherwise vectorizes the loops with 256-bit ones (the MLP of benchmarks/jit_mlp.py: its fused
# kernels 4.8 -> 4.5 ms a step); other CPUs split the vectors to their width.
wide_vectors = vector_ops().wide_vectors


# -- chunked kernels on ATen's OpenMP pool (kernels/omp_pool.py) ------------------------------

claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
count_finished = omp_pool.finish_intrinsic()

"""Scalar helpers that generated numba kernels import (never imported by `import ndflow`).

numba has no float16/bfloat16 scalars: 16-bit floats travel as uint16 bit patterns and are
widened/rounded here with LLVM bit casts (`fpext`/`fptrunc` for IEEE half, integer
round-to-nearest-even for bfloat16, as ATen rounds). `select`, `maximum` and `minimum` are the
backend-neutral primitives of emitters.py (maximum/minimum propagate NaN like ATen's).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def _f32_from_bits(typingctx, u):
    if not isinstance(u, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        v = builder.zext(args[0], ir.IntType(32)) if u.bitwidth < 32 else \
            builder.trunc(args[0], ir.IntType(32)) if u.bitwidth > 32 else args[0]
        return builder.bitcast(v, ir.FloatType())
    return types.float32(u), codegen


@intrinsic
def _f32_bits(typingctx, x):
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(x), codegen


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


@njit
def bf16_to_f32(u):
    return _f32_from_bits(np.uint32(u) << np.uint32(16))


@njit
def f32_to_bf16(x):
    x = np.float32(x)
    u = _f32_bits(x)
    if x != x:
        return np.uint16(0x7FC0)
    return np.uint16((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))
                     >> np.uint32(16))


@njit
def round_bf16(x):
    return bf16_to_f32(f32_to_bf16(x))


@njit
def round_f16(x):
    return f16_to_f32(f32_to_f16(np.float32(x)))


@njit
def select(c, a, b):
    return a if c else b


@njit
def maximum(a, b):
    return a if (a > b or a != a) else b


@njit
def minimum(a, b):
    return a if (a < b or a != a) else b


@njit
def pow(x, y):  # noqa: A001 - the backend-neutral primitive's name
    return x ** y


@njit
def trunc_div(s, n):
    q = abs(s) // n
    return -q if s < 0 else q

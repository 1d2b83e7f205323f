"""Scalar primitives that generated Triton kernels import (never imported by `import ndflow`).

emitters.py's backend-neutral primitives over Triton blocks: transcendental functions from
CUDA's libdevice (the correctly rounded or few-ulp `__nv_*` functions, as ATen's CUDA kernels
use), `select`, and `maximum`/`minimum` propagating NaN as ATen's do. Also the combine
functions of the tile reductions (`tl.reduce`).
"""

from __future__ import annotations

import triton
import triton.language as tl
from triton.language.extra import libdevice

INF = tl.constexpr(float("inf"))
NAN = tl.constexpr(float("nan"))


@triton.jit
def exp(x):
    return libdevice.exp(x)


@triton.jit
def log(x):
    return libdevice.log(x)


@triton.jit
def log1p(x):
    return libdevice.log1p(x)


@triton.jit
def expm1(x):
    return libdevice.expm1(x)


@triton.jit
def sqrt(x):
    return libdevice.sqrt(x)


@triton.jit
def tanh(x):
    return libdevice.tanh(x)


@triton.jit
def erf(x):
    return libdevice.erf(x)


@triton.jit
def sin(x):
    return libdevice.sin(x)


@triton.jit
def cos(x):
    return libdevice.cos(x)


@triton.jit
def pow(x, y):  # noqa: A001 - the primitive's name in emitters.py
    return libdevice.pow(x, y)


@triton.jit
def floor(x):
    return libdevice.floor(x)


@triton.jit
def ceil(x):
    return libdevice.ceil(x)


@triton.jit
def rint(x):
    return libdevice.rint(x)


@triton.jit
def fmod(x, y):
    return libdevice.fmod(x, y)


@triton.jit
def fabs(x):
    return tl.abs(x)


@triton.jit
def isnan(x):
    return x != x


@triton.jit
def isinf(x):
    return tl.abs(x) == INF


@triton.jit
def isfinite(x):
    return tl.abs(x) < INF


@triton.jit
def select(c, a, b):
    return tl.where(c, a, b)


@triton.jit
def maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def minimum(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def multiply(a, b):
    return a * b

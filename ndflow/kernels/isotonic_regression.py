"""IsotonicRegression (ops/nn_isotonic.py): the pool-adjacent-violators algorithm on each row
of the input seen as [rows, n] (its last dimension n), as TF's CPU kernel
(core/kernels/isotonic_regression_op.cc) runs it, in a numba loop.

The row's values are pushed left to right as one-point pools; while the last pool's mean is
greater than the one before it (strictly: equal means stay apart), the two merge, their sums
added and the mean taken as sum / T(points). Everything is in the output type (the kernel's
`Tout`): float32 for float32, int8 and int16 inputs, float64 for float64, int32 and int64,
half and bfloat16 for themselves — those two computed as Eigen computes them, each sum and
quotient in float32 and rounded (to nearest even) to the 16-bit type, so the results are TF's
bit for bit. The segments number the pools 0, 1, ... from the left of each row.

TF registers kernels for those (input, output) pairs only: another pair (an unsigned input, or
a raw op's output_dtype of another width) finds none: NotFoundError eagerly and
InvalidArgumentError in a graph, as TF's.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.core.errors import OpError
from ndflow.kernels.build_once import built_once
from ndflow.kernels.registry import kernel, no_kernel_error
from ndflow.kernels.row_threads import over_rows
from ndflow.ops import nn_isotonic

_F32, _F64 = torch.float32, torch.float64
# input dtype -> the output dtype of TF's kernel for it
_PAIRS = {torch.float16: torch.float16, torch.bfloat16: torch.bfloat16, _F32: _F32, _F64: _F64,
          torch.int8: _F32, torch.int16: _F32, torch.int32: _F64, torch.int64: _F64}
_TYPES = {torch.float16: "DT_HALF", torch.bfloat16: "DT_BFLOAT16", _F32: "DT_FLOAT",
          _F64: "DT_DOUBLE", torch.int8: "DT_INT8", torch.int16: "DT_INT16",
          torch.int32: "DT_INT32", torch.int64: "DT_INT64", torch.uint8: "DT_UINT8",
          torch.uint16: "DT_UINT16", torch.uint32: "DT_UINT32", torch.uint64: "DT_UINT64"}
# rounding of a float32 result to the output type: 0 none, 1 half, 2 bfloat16
_MODES = {torch.float16: 1, torch.bfloat16: 2}


def _round_to(x, mode, bits):
    """float32 `x` rounded to nearest even half (mode 1) or bfloat16 (mode 2) by its bits
    (`bits`: a one-element uint32 view of a float32 buffer), inf past the largest finite value;
    `x` itself for mode 0, NaN or inf."""
    if mode == 0:
        return x
    floats = bits.view(np.float32)
    floats[0] = x
    word = np.int64(bits[0])
    sign, size = word & 0x80000000, word & 0x7FFFFFFF
    if size >= 0x7F800000:
        return x
    if mode == 2:       # 16 fraction bits dropped (float32 subnormals too)
        size = (size + 0x7FFF + ((size >> 16) & 1)) & 0x7FFF0000
    elif size >= 0x477FF000:        # 65520 and above: inf
        size = 0x7F800000
    elif size >= 0x38800000:        # a normal half: 13 fraction bits dropped
        size = (size + 0xFFF + ((size >> 13) & 1)) & 0x7FFFE000
    else:                           # a subnormal half: a multiple of 2^-24
        return np.float32(math.copysign(np.rint(abs(float(x)) * 16777216.0) / 16777216.0,
                                        float(x)))
    bits[0] = np.uint32(sign | size)
    return floats[0]


def _pava_rows(x, out, segments, mode, first, stop):
    """PAVA on rows first..stop-1 of `x` [rows, n] (float32 or float64) into `out` and
    `segments`. The last pool is kept in locals; the ones before it on a stack."""
    n = x.shape[1]
    start = np.empty(n + 1, np.int64)
    sums = np.empty(n, x.dtype)
    means = np.empty(n, x.dtype)
    bits = np.empty(1, np.uint32)
    counts = np.empty(n + 1, x.dtype)       # point counts in the output type
    for i in range(n + 1):
        counts[i] = i
        counts[i] = _round_to(counts[i], mode, bits)
    for r in range(first, stop):
        top = 0                             # pools on the stack
        last_start, last_sum, last_mean = 0, x[r, 0], x[r, 0]
        for c in range(1, n + 1):
            while top > 0 and last_mean > means[top - 1]:
                top -= 1
                last_start = start[top]
                if mode == 0:
                    last_sum = sums[top] + last_sum
                    last_mean = last_sum / counts[c - last_start]
                else:
                    last_sum = _round_to(sums[top] + last_sum, mode, bits)
                    last_mean = _round_to(last_sum / counts[c - last_start], mode, bits)
            if c == n:
                break
            start[top], sums[top], means[top] = last_start, last_sum, last_mean
            top += 1
            last_start, last_sum, last_mean = c, x[r, c], x[r, c]
        start[top], means[top] = last_start, last_mean
        start[top + 1] = n
        for p in range(top + 1):
            for c in range(start[p], start[p + 1]):
                out[r, c] = means[p]
                segments[r, c] = p


def _build():
    """The row solver, compiled by numba (cached on disk); the Python functions without it."""
    global _round_to
    try:
        import numba  # noqa: PLC0415 - loads with the first isotonic regression
    except ImportError:
        return _pava_rows
    jit = numba.njit(cache=True, nogil=True, error_model="numpy")
    _round_to = numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")(
        _round_to)
    return jit(_pava_rows)


_solver = built_once(_build)


def _no_kernel(node, tin, tout) -> OpError:
    """TF's error for a type pair the op accepts but has no kernel for: the eager lookup's
    NotFoundError, or the graph executor's InvalidArgumentError (a graph's NodeInfo knows its
    inputs' readers; an eager one does not)."""
    name = "IsotonicRegression"
    attrs = f"T={_TYPES.get(tin, tin)}, output_dtype={_TYPES.get(tout, tout)}"
    registered = "\n".join(
        f"  device='CPU'; T in [{_TYPES[i]}]; output_dtype in [{_TYPES[o]}]"
        for i, o in _PAIRS.items())
    return no_kernel_error(node, name, attrs, registered)


@kernel(nn_isotonic.IsotonicRegression)
def _isotonic_regression(node):
    tin = node.input_dtypes[0].torch_dtype
    tout = node.output_dtypes[0].torch_dtype
    if _PAIRS.get(tin) is not tout:
        raise _no_kernel(node, tin, tout)
    mode = _MODES.get(tout, 0)
    work = np.float64 if tout is _F64 else np.float32

    def run(x):
        shape = x.shape
        n = shape[-1] if x.dim() else 1
        rows = x.numel() // n if n else 0
        values = x.detach().cpu().reshape(rows, n)
        values = (values.float() if tout is not _F64 else values.double()).numpy()
        out = np.empty((rows, n), work)
        segments = np.empty((rows, n), np.int32)
        if rows and n:   # rows split over threads, each with >= ~16K values
            over_rows(_solver(), rows, max(1, (1 << 14) // n), np.ascontiguousarray(values),
                      out, segments, mode)
        out_t = torch.from_numpy(out).to(tout).reshape(shape)
        seg_t = torch.from_numpy(segments).reshape(shape)
        return out_t.to(x.device), seg_t.to(x.device)
    return run

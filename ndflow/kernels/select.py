"""SelectV2 (`tf.where(cond, x, y)`) on the CPU without a branch per element.

ATen's CPU `where` picks each element with a branch, which mispredicts on a random condition
(a dropout mask): 3.6-4 ns an element against 0.5 when the condition is all true or all
false (measured on a 2-core Xeon, 32K to 1M float32 elements). When the condition has the
output's shape and x and y are contiguous (each the full shape or a scalar), a numba loop
selects instead: LLVM turns its `x[i] if c[i] else y` into vector blends, and it reads and
writes what `where` does, once (MNIST's dropout, 64x512: 125 -> 10 us warm). An earlier
form that selected on the values' bits with ATen ops (a mask, and, or) was as fast warm but
slower inside a training step, where every extra pass over a cold buffer costs. A condition
that broadcasts over the trailing dimensions (one flag per row or image: the condition's
shape is the output's up to some dimension, then 1s) picks whole rows: a numba loop copies
each row from x or y (an MNIST batch's random flip, 128x28x28x1: 58 -> 17 us), where ATen's
`where` still walks it element by element. numba loads with the first large select; without
it ATen's `where` runs.
"""

from __future__ import annotations

import torch

from ndflow.kernels.build_once import built_once

_DTYPES = (torch.float32, torch.float64, torch.int32, torch.int64)
MIN_ELEMENTS = 4096  # below this the numba call costs more than ATen's mispredictions



def _flag_rows(cond: torch.Tensor, shape) -> int | None:
    """The number of rows when `cond` (of the same rank as `shape`) is `shape` up to some
    dimension and 1 after it (one flag per row of the trailing dimensions), else None."""
    dims = cond.shape
    k = len(dims)
    while k and dims[k - 1] == 1:
        k -= 1
    if dims[:k] != shape[:k]:
        return None
    return cond.numel()


def _select_rows(cond, x, y) -> torch.Tensor | None:
    """`where(cond, x, y)` by whole rows for a condition with one flag per row of x and y
    (both contiguous, of the output's shape); None when that does not apply."""
    shape = x.shape
    if (y.shape != shape or cond.dim() != x.dim() or x.dtype not in _DTYPES
            or x.dtype != y.dtype or cond.dtype != torch.bool or x.numel() < MIN_ELEMENTS
            or x.device.type != "cpu" or cond.device.type != "cpu"
            or not (x.is_contiguous() and y.is_contiguous())
            or x.requires_grad or y.requires_grad):
        return None
    rows = _flag_rows(cond, shape)
    if rows is None:
        return None
    kernels = _kernels()
    if kernels is None:
        return None
    out = torch.empty(shape, dtype=x.dtype)
    kernels[3](cond.reshape(-1).numpy(), x.reshape(rows, -1).numpy(),
               y.reshape(rows, -1).numpy(), out.reshape(rows, -1).numpy())
    return out


def select(cond: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """`torch.where(cond, x, y)`, branch-free where that is faster (module doc)."""
    shape = cond.shape
    if shape != x.shape and cond.dim() == x.dim():  # one flag per row?
        out = _select_rows(cond, x, y)
        if out is not None:
            return out
    if (x.dtype not in _DTYPES or x.dtype != y.dtype or cond.dtype != torch.bool
            or cond.device.type != "cpu" or cond.numel() < MIN_ELEMENTS
            or not (x.shape == shape or x.dim() == 0) or not (y.shape == shape or y.dim() == 0)
            or x.dim() == y.dim() == 0
            or not (cond.is_contiguous() and x.is_contiguous() and y.is_contiguous())
            or x.requires_grad or y.requires_grad):
        return torch.where(cond, x, y)
    kernels = _kernels()
    if kernels is None:
        return torch.where(cond, x, y)
    both, scalar_y, scalar_x, _ = kernels
    out = torch.empty(shape, dtype=x.dtype)
    args = [t.reshape(-1).numpy() for t in (cond, x, y, out)]
    (scalar_x if x.dim() == 0 else scalar_y if y.dim() == 0 else both)(*args)
    return out


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first large select, not with ndflow
    except ImportError:
        return None
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def both(c, x, y, out):
        for i in range(out.shape[0]):
            out[i] = x[i] if c[i] else y[i]

    @jit
    def scalar_y(c, x, y, out):  # y: a one-element array (its bits kept, NaN payloads too)
        v = y[0]
        for i in range(out.shape[0]):
            out[i] = x[i] if c[i] else v

    @jit
    def scalar_x(c, x, y, out):
        v = x[0]
        for i in range(out.shape[0]):
            out[i] = v if c[i] else y[i]

    @jit
    def rows(c, x, y, out):  # c: a flag per row; x, y, out: [rows, row length]
        n, m = out.shape
        for i in range(n):
            if c[i]:
                for j in range(m):
                    out[i, j] = x[i, j]
            else:
                for j in range(m):
                    out[i, j] = y[i, j]

    return both, scalar_y, scalar_x, rows


# (both arrays, scalar y, scalar x, rows), built on the first large select; None without numba
_kernels = built_once(_build)

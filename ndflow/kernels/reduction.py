"""ATen kernels for reductions and ArgMax/ArgMin.

The axes arrive as an ATen int tensor; where a plan binds them to a constant and the input's
rank is known they are resolved once, when the kernel is built (`_fixed_axes`), saving a
host read and the checks on every call. An empty axis list is the identity, as in TF.
Integer sums keep their dtype (ATen would widen to int64) and integer means truncate like
TF's.
"""

from __future__ import annotations

import math

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import reduction


def _axes(axes, rank: int) -> list:
    """The reduction axes, sorted and non-negative; TF's errors for an axis out of range or
    given twice (a tensor axis reaches the kernel unchecked by shape inference)."""
    a = axes.tolist()
    a = [a] if isinstance(a, int) else a
    seen = set()
    for d in a:
        if not -max(rank, 1) <= d < max(rank, 1):
            raise InvalidArgumentError(None, None, f"Invalid reduction dimension ({d} for input "
                                       f"with {rank} dimension(s)")
        d %= max(rank, 1)
        if d in seen:
            raise InvalidArgumentError(None, None, "Invalid reduction arguments: Axes contains "
                                       f"duplicate dimension: {d}")
        seen.add(d)
    return sorted(seen) if rank else []


def _fixed_axes(node) -> list | None:
    """The axes resolved once: the axes input is a plan constant and the input's rank is
    known; else None (resolved per call, where a bad axis raises TF's error)."""
    axes, shape = node.const_input(1), node.input_shapes[0] if node.input_shapes else None
    if axes is None or shape is None or shape.rank is None:
        return None
    try:
        return _axes(axes, shape.rank)
    except InvalidArgumentError:
        return None


def _empty_reduction(x, axes, keep, fill):
    shape = [1 if i in axes else d for i, d in enumerate(x.shape)] if keep else \
        [d for i, d in enumerate(x.shape) if i not in axes]
    return torch.full(shape, fill, dtype=x.dtype, device=x.device)


SHORT_AXIS = 4            # a reduced inner axis this short is summed as slices
SHORT_AXIS_MIN = 1 << 16  # elements below which ATen's one call costs less than the slices


def _sum_short_axis(x: torch.Tensor, dims: list, keep: bool):
    """The sum of float32/64 `x` over `dims` when those are one axis of 2..SHORT_AXIS elements
    that is not the contiguous one (besides axes of size 1), as that many slices added, else
    None. ATen's reduction kernel vectorizes over the reduced axis and crawls along a short
    one: 2 x 32-float rows of 2M elements 0.64 ms, against 0.12 ms for one add of the two
    halves (a tiled or repeated tensor's gradient; Zen 5, 2 threads)."""
    if x.numel() < SHORT_AXIS_MIN or x.dtype not in (torch.float32, torch.float64):
        return None   # small first: most sums on a hot path end here (16-bit floats: ATen's
                      # float accumulation, rounded once)
    real = [d for d in dims if x.shape[d] != 1]
    if len(real) != 1:
        return None
    d = real[0]
    if not 2 <= x.shape[d] <= SHORT_AXIS or x.stride(d) == 1:
        return None
    out = torch.add(x.select(d, 0), x.select(d, 1))
    for j in range(2, x.shape[d]):
        out += x.select(d, j)
    shape = [1 if i in dims else n for i, n in enumerate(x.shape)] if keep else \
        [n for i, n in enumerate(x.shape) if i not in dims]
    return out.reshape(shape)


INNER_BLOCK = 16          # a reduced trailing block this short is summed after the rest


def _sum_inner_last(x: torch.Tensor, dims: list, keep: bool):
    """The sum of contiguous float32/64 `x` over `dims` when those end with a trailing block
    of 2..INNER_BLOCK elements and include axes before it, as the outer axes' sum first (its
    inner loops run over the contiguous rows the block is part of) and the block's after,
    else None. ATen reduces all at once along the short block: Keras' GroupNormalization's
    moments, [32, 32, 32, 8, 4] over (1, 2, 4), 0.43 ms against 0.03 ms so (Zen 5)."""
    if x.numel() < SHORT_AXIS_MIN or x.dtype not in (torch.float32, torch.float64) or \
            not x.is_contiguous():
        return None
    rank = x.dim()
    inner = []
    d = rank - 1
    while d >= 0 and d in dims:
        inner.append(d)
        d -= 1
    block = math.prod(x.shape[i] for i in inner)
    outer = [i for i in dims if i not in inner and x.shape[i] != 1]
    if not inner or not outer or not 2 <= block <= INNER_BLOCK:
        return None
    out = torch.sum(torch.sum(x, outer, keepdim=True), inner, keepdim=True)
    if keep:
        return out
    return out.reshape([n for i, n in enumerate(x.shape) if i not in dims])


def _fast_sum(x: torch.Tensor, dims: list, keep: bool):
    """A float sum's faster form where one applies (short axes, module functions), else None."""
    short = _sum_short_axis(x, dims, keep)
    return short if short is not None else _sum_inner_last(x, dims, keep)


@kernel(reduction.Sum)
def _sum(node):
    keep, fixed = node.attrs["keep_dims"], _fixed_axes(node)
    if fixed and node.input_dtypes[0].is_floating:
        def float_sum(x, axes):   # a float sum keeps its dtype
            fast = _fast_sum(x, fixed, keep)
            return torch.sum(x, fixed, keep) if fast is None else fast
        return float_sum

    def reduce_sum(x, axes):
        dims = fixed if fixed is not None else _axes(axes, x.dim())
        if not dims:
            return x
        fast = _fast_sum(x, dims, keep)
        return torch.sum(x, dim=dims, keepdim=keep, dtype=x.dtype) if fast is None else fast
    return reduce_sum


@kernel(reduction.Mean)
def _mean(node):
    keep, fixed = node.attrs["keep_dims"], _fixed_axes(node)
    if node.input_dtypes[0].is_integer:
        def reduce_mean(x, axes):
            dims = fixed if fixed is not None else _axes(axes, x.dim())
            if not dims:
                return x
            count = math.prod(x.shape[d] for d in dims)
            s = torch.sum(x, dim=dims, keepdim=keep, dtype=torch.int64)  # no overflow, as TF
            return torch.div(s, max(count, 1), rounding_mode="trunc").to(x.dtype)
        return reduce_mean

    def reduce_mean_float(x, axes):
        dims = fixed if fixed is not None else _axes(axes, x.dim())
        if not dims:
            return x
        fast = _sum_inner_last(x, dims, keep)
        if fast is None:
            return torch.mean(x, dim=dims, keepdim=keep)
        return fast.div_(math.prod(x.shape[d] for d in dims))
    return reduce_mean_float


def _extremum(fn, lowest: bool):
    def factory(node):
        keep, fixed = node.attrs["keep_dims"], _fixed_axes(node)
        dt = node.input_dtypes[0]
        fill = (-math.inf if lowest else math.inf) if dt.is_floating else \
            (dt.min if lowest else dt.max)

        def reduce_extremum(x, axes):
            dims = fixed if fixed is not None else _axes(axes, x.dim())
            if not dims:
                return x
            if x.numel() == 0:
                return _empty_reduction(x, dims, keep, fill)
            return fn(x, dim=dims, keepdim=keep)
        return reduce_extremum
    return factory


kernel(reduction.Max)(_extremum(torch.amax, lowest=True))
kernel(reduction.Min)(_extremum(torch.amin, lowest=False))


@kernel(reduction.Prod)
def _prod(node):
    keep, fixed = node.attrs["keep_dims"], _fixed_axes(node)

    def reduce_prod(x, axes):
        dims = fixed if fixed is not None else _axes(axes, x.dim())
        if not dims:
            return x
        for d in reversed(dims):  # highest axis first keeps lower indices valid
            x = torch.prod(x, d, keepdim=keep, dtype=x.dtype)
        return x
    return reduce_prod


def _logical(fn):
    def factory(node):
        keep, fixed = node.attrs["keep_dims"], _fixed_axes(node)

        def reduce_logical(x, axes):
            dims = fixed if fixed is not None else _axes(axes, x.dim())
            return fn(x, dim=tuple(dims), keepdim=keep) if dims else x
        return reduce_logical
    return factory


kernel(reduction.All)(_logical(torch.all))
kernel(reduction.Any)(_logical(torch.any))


def _arg(fn, largest: bool):
    def factory(node):
        out = node.output_dtypes[0].torch_dtype
        as_uint8 = node.input_dtypes[0].is_bool

        def arg_extremum(x, dim):
            d = int(dim)
            if not -x.dim() <= d < max(x.dim(), 1):     # shape inference skips vectors
                raise InvalidArgumentError(None, None, f"Expected dimension in the range "
                                           f"[{-x.dim()}, {x.dim()}), but got {d}")
            if as_uint8:
                x = x.to(torch.uint8)
            elif x.is_floating_point():
                # TF's reducer starts at the dtype's lowest (highest) finite value at index 0
                # and takes a value only if it is strictly greater (less): NaN never wins, nor
                # does a value at or beyond that bound.
                bound = torch.finfo(x.dtype).min if largest else torch.finfo(x.dtype).max
                beyond = -math.inf if largest else math.inf
                x = torch.where(x > bound if largest else x < bound, x, beyond)
            r = fn(x, d)
            return r if r.dtype == out else r.to(out)
        return arg_extremum
    return factory


kernel(reduction.ArgMax)(_arg(torch.argmax, largest=True))
kernel(reduction.ArgMin)(_arg(torch.argmin, largest=False))

"""ATen kernels for pooling on TF's NHWC (or NCHW) layout.

TF's SAME padding may put one more padded row/column at the bottom/right. ATen pools pad
symmetrically, so each input size gets a plan: symmetric padding when TF's is symmetric,
else ATen's `ceil_mode` (its extra last window is clipped at the border, which is what TF's
ignored padding means for max and for averages that do not count padding), else an explicit
pad (-inf for max; zeros plus a count mask for average).

MaxPoolGrad receives (orig_input, orig_output, grad) as TF's; the argmax indices are
recomputed with `max_pool2d_with_indices` (measured on MNIST shapes: 0.35 ms for 64x28x28x32,
against 0.35 ms for the backward itself) — cheaper than keeping indices alive between steps.
"""

from __future__ import annotations

import math

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_pool
from ndflow.ops.nn_common import explicit_hw, hw, window_geometry

aten = torch.ops.aten


def _aten_out(size: int, k: int, s: int, p: int, ceil: bool) -> int:
    num = size + 2 * p - k
    if ceil:
        out = -(-num // s) + 1
        if (out - 1) * s >= size + p:
            out -= 1
        return out
    return num // s + 1


class _PoolPlan:
    """How ATen computes TF's windows for one input size."""

    __slots__ = ("pad", "ceil", "extra", "out")

    def __init__(self, pad, ceil, extra, out):
        self.pad, self.ceil, self.extra, self.out = pad, ceil, extra, out

    @property
    def top_left(self) -> tuple:
        """TF's padding above and left of the input (where window (0, 0) starts)."""
        return (self.extra[2], self.extra[0]) if self.extra is not None else tuple(self.pad)


class PoolGeometry:
    """Attribute parsing and per-input-size padding plans for one pooling node."""

    def __init__(self, node):
        a = node.attrs
        self.fmt = a["data_format"]
        self.nhwc = self.fmt == "NHWC"
        self.k = list(hw(a["ksize"], self.fmt))
        self.s = list(hw(a["strides"], self.fmt))
        self.padding = a["padding"]
        self.explicit = explicit_hw(a.get("explicit_paddings") or [], self.fmt)
        self._plans: dict = {}

    def plan(self, h: int, w: int) -> _PoolPlan:
        p = self._plans.get((h, w))
        if p is None:
            p = self._plans[(h, w)] = self._make_plan(h, w)
        return p

    def _make_plan(self, h, w):
        try:
            out, (pt, pb, pl, pr) = window_geometry(h, w, self.k[0], self.k[1], self.s, (1, 1),
                                                    self.padding, self.explicit)
        except ValueError as e:
            raise InvalidArgumentError(None, None, str(e)) from None
        (kh, kw), (sh, sw) = self.k, self.s
        fits = pt <= kh // 2 and pl <= kw // 2
        if pt == pb and pl == pr and fits:
            return _PoolPlan([pt, pl], False, None, out)
        if fits and pb >= pt and pr >= pl and \
                _aten_out(h, kh, sh, pt, True) == out[0] and \
                _aten_out(w, kw, sw, pl, True) == out[1]:
            return _PoolPlan([pt, pl], True, None, out)
        return _PoolPlan([0, 0], False, (pl, pr, pt, pb), out)

    def nchw(self, x):
        return x.permute(0, 3, 1, 2) if self.nhwc else x

    def back(self, y):
        return y.permute(0, 2, 3, 1) if self.nhwc else y

    def view(self, x):
        """(x's NCHW view, the window plan for its height and width)."""
        xv = self.nchw(x)
        return xv, self.plan(xv.shape[2], xv.shape[3])

    def max_view(self, x):
        """view(x), padded where the plan needs it with a value that never wins a max."""
        xv, pl = self.view(x)
        if pl.extra is not None:
            xv = self.pad(xv, pl.extra, lowest_value(xv.dtype))
        return xv, pl

    def pad(self, xv, extra, value):
        if self.nhwc:
            x = aten.constant_pad_nd(xv.permute(0, 2, 3, 1), [0, 0, *extra], value)
            return x.permute(0, 3, 1, 2)
        return aten.constant_pad_nd(xv, list(extra), value)

    @staticmethod
    def unpad(xv, extra, h, w):
        return xv[:, :, extra[2]:extra[2] + h, extra[0]:extra[0] + w]


def lowest_value(dtype):
    """The padding value that never wins a max: -inf, or the integer type's minimum."""
    return -math.inf if dtype.is_floating_point else torch.iinfo(dtype).min


@kernel(nn_pool.MaxPool)
def _max_pool(node):
    p = PoolGeometry(node)

    def max_pool(x):
        xv, pl = p.max_view(x)
        dt = xv.dtype
        if not dt.is_floating_point:
            xv = xv.double()
        y = aten.max_pool2d(xv, p.k, p.s, pl.pad, [1, 1], pl.ceil)
        if dt.is_floating_point:
            y = tf_window_edges(y, lambda: aten.max_pool2d(nan_never_wins(xv), p.k, p.s,
                                                           pl.pad, [1, 1], pl.ceil))
        return p.back(y if y.dtype == dt else y.to(dt))
    return max_pool


def tf_window_edges(y, pool_without_nan):
    """Max-pooled float values `y` (ATen's) as TF's kernels give them: TF starts each window
    at the dtype's lowest finite value and compares with '>', so a NaN never wins (ATen's max
    propagates it: then the input is pooled again by `pool_without_nan`) and a window of -infs
    or NaNs only gives that lowest value (bfloat16's pools, oneDNN's in TF, give -inf). One
    min reduction over the (small) output finds both cases (min propagates NaN), ~15x
    cheaper than isnan().any()."""
    if y.numel() == 0:
        return y
    low = y.amin()
    if bool(torch.isnan(low)):
        y = pool_without_nan()
        low = y.amin()
    if bool(low == -math.inf) and y.dtype != torch.bfloat16:
        y = y.clamp_min(torch.finfo(y.dtype).min)
    return y


def _has_nan(y) -> bool:
    """Whether the pooled output holds a NaN: one max reduction over the (small) output,
    ~15x cheaper than isnan().any(), since ATen's max propagates NaN."""
    return y.numel() > 0 and bool(torch.isnan(y.amax()))


def nan_never_wins(xv):
    """TF's max pooling compares with '>', so a NaN never is a window's maximum (ATen's
    propagates it); a window of NaNs only gives the lowest finite value, as TF's does (-inf in
    bfloat16, as TF's oneDNN pools). The infinities stay (nan_to_num would make them the
    dtype's extremes)."""
    lowest = -math.inf if xv.dtype == torch.bfloat16 else torch.finfo(xv.dtype).min
    return torch.nan_to_num(xv, nan=lowest, posinf=math.inf, neginf=-math.inf)


def _argmax(p, x):
    """(padded NCHW input, plan, indices) of TF's max windows over NHWC/NCHW `x`."""
    xv, pl = p.max_view(x)
    if not xv.dtype.is_floating_point:
        xv = xv.double()
    y, idx = aten.max_pool2d_with_indices(xv, p.k, p.s, pl.pad, [1, 1], pl.ceil)
    if _has_nan(y):
        _, idx = aten.max_pool2d_with_indices(nan_never_wins(xv), p.k, p.s, pl.pad, [1, 1],
                                              pl.ceil)
    return xv, pl, idx


@kernel(nn_pool.MaxPoolGrad)
def _max_pool_grad(node):
    p = PoolGeometry(node)

    def max_pool_grad(x, y, g):
        h, w = (x.shape[1], x.shape[2]) if p.nhwc else (x.shape[2], x.shape[3])
        xv, pl, idx = _argmax(p, x)
        gv = p.nchw(g)
        if gv.dtype != xv.dtype:
            gv = gv.to(xv.dtype)
        dx = aten.max_pool2d_with_indices_backward(gv, xv, p.k, p.s, pl.pad, [1, 1], pl.ceil,
                                                   idx)
        if pl.extra is not None:
            dx = p.unpad(dx, pl.extra, h, w)
        return p.back(dx if dx.dtype == g.dtype else dx.to(g.dtype))
    return max_pool_grad


@kernel(nn_pool.MaxPoolGradGrad)
def _max_pool_grad_grad(node):
    p = PoolGeometry(node)

    def max_pool_grad_grad(x, y, g):
        xv, pl, idx = _argmax(p, x)
        gv = p.nchw(g)
        if pl.extra is not None:
            gv = p.pad(gv, pl.extra, 0)
        n, c = idx.shape[:2]
        out = gv.reshape(n, c, -1).gather(2, idx.reshape(n, c, -1)).reshape(idx.shape)
        return p.back(out).contiguous()
    return max_pool_grad_grad


@kernel(nn_pool.AvgPool)
def _avg_pool(node):
    p = PoolGeometry(node)

    def avg_pool(x):
        xv, pl = p.view(x)
        if pl.extra is None:
            return p.back(aten.avg_pool2d(xv, p.k, p.s, pl.pad, pl.ceil, False, None))
        ones = torch.ones((1, 1, xv.shape[2], xv.shape[3]), dtype=xv.dtype, device=xv.device)
        total = aten.avg_pool2d(p.pad(xv, pl.extra, 0), p.k, p.s, [0, 0], False, True, None)
        count = aten.avg_pool2d(aten.constant_pad_nd(ones, list(pl.extra), 0), p.k, p.s,
                                [0, 0], False, True, None)
        return p.back(total / count)
    return avg_pool


@kernel(nn_pool.AvgPoolGrad)
def _avg_pool_grad(node):
    p = PoolGeometry(node)

    def avg_pool_grad(sizes, g):
        # The fed shape on every call, never node.output_shapes: an eager kernel is cached
        # by input shapes only, and inputs of 7 or 8 rows pooled with stride 2 share them.
        dims = tuple(int(v) for v in sizes.tolist())
        n, h, w, c = dims if p.nhwc else (dims[0], dims[2], dims[3], dims[1])
        pl = p.plan(h, w)
        gv = p.nchw(g)
        fmt = torch.channels_last if p.nhwc else torch.contiguous_format
        if pl.extra is None:
            dummy = torch.empty((n, c, h, w), dtype=g.dtype, device=g.device, memory_format=fmt)
            return p.back(aten.avg_pool2d_backward(gv, dummy, p.k, p.s, pl.pad, pl.ceil, False,
                                                   None))
        ex = pl.extra
        hp, wp = h + ex[2] + ex[3], w + ex[0] + ex[1]
        ones = torch.ones((1, 1, h, w), dtype=g.dtype, device=g.device)
        count = aten.avg_pool2d(aten.constant_pad_nd(ones, list(ex), 0), p.k, p.s, [0, 0],
                                False, True, None)
        dummy = torch.empty((n, c, hp, wp), dtype=g.dtype, device=g.device, memory_format=fmt)
        dx = aten.avg_pool2d_backward(gv / count, dummy, p.k, p.s, [0, 0], False, True, None)
        return p.back(p.unpad(dx, ex, h, w))
    return avg_pool_grad

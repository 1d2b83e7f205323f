"""ATen kernels for Conv3D, MaxPool3D, AvgPool3D and their backprop ops on NDHWC / NCDHW.

An NDHWC tensor viewed through `permute(0, 4, 1, 2, 3)` is an NCDHW tensor with
channels_last_3d strides (no copy); DHWIO filters become OIDHW through
`permute(4, 3, 0, 1, 2)`. TF's SAME padding may be one larger after than before: the
symmetric part goes to ATen, the rest is padded explicitly (zeros for convolutions and
averages, -inf for max), and gradients are cropped back. Averages divide by the number of
real (unpadded) elements in each window, as TF's.
"""

from __future__ import annotations

import math

import torch

from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.kernels import max_pool3d_grad_numba
from ndflow.kernels.nn_pool import nan_never_wins, tf_window_edges
from ndflow.kernels.padding import constant_pad
from ndflow.kernels.permute import permute_copy
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_conv3d, nn_pool3d
from ndflow.ops.nn_common import windowed_output_size

aten = torch.ops.aten


class Geometry3D:
    """Attrs and TF padding of one 3-D window node, in spatial (D, H, W) order."""

    def __init__(self, node, window_attr: str | None = None):
        a = node.attrs
        self.ndhwc = a["data_format"] == "NDHWC"
        sp = [1, 2, 3] if self.ndhwc else [2, 3, 4]
        c = 4 if self.ndhwc else 1
        self.stride = [int(a["strides"][d]) for d in sp]
        self.dilation = [int(a.get("dilations", [1] * 5)[d]) for d in sp]
        self.padding = a["padding"]
        self.ksize = None
        if window_attr is not None:
            k = a[window_attr]
            for v in (k, a["strides"]):
                if v[0] != 1:
                    raise UnimplementedError(None, None, "Pooling is not yet supported on the "
                                             "batch dimension.")
                if v[c] != 1:
                    raise UnimplementedError(None, None, "Pooling is not yet supported on the "
                                             "depth dimension.")
            self.ksize = [int(k[d]) for d in sp]

    def to_ncdhw(self, x):
        return x.permute(0, 4, 1, 2, 3) if self.ndhwc else x

    def back(self, y):
        return y.permute(0, 2, 3, 4, 1) if self.ndhwc else y

    def pads(self, sizes, ksize):
        """[(before, after)] per spatial dim for input `sizes` and window `ksize`."""
        out = []
        for n, k, s, d in zip(sizes, ksize, self.stride, self.dilation):
            try:
                _, b, a = windowed_output_size(int(n), int(k), s, d, self.padding)
            except ValueError as e:
                raise InvalidArgumentError(None, None, str(e)) from None
            out.append((b, a))
        return out

    def check_out(self, prefix: str, sizes, ksize, g) -> None:
        """TF's check that out_backprop `g` has the forward output's spatial sizes (the
        message names the dim in the data format's layout)."""
        layout = [1, 2, 3] if self.ndhwc else [2, 3, 4]
        for dim, n, k, s, d in zip(layout, sizes, ksize, self.stride, self.dilation):
            out = windowed_output_size(int(n), int(k), s, d, self.padding)[0]
            if g.shape[dim] != out:
                raise InvalidArgumentError(
                    None, None, f"{prefix}: Size of out_backprop doesn't match computed: "
                    f"actual = {g.shape[dim]}, computed = {out} spatial_dim: {dim} input: {n} "
                    f"filter: {k} output: {g.shape[dim]} stride: {s} dilation: {d}")

    @staticmethod
    def split(pads):
        """(symmetric pads for ATen, explicit extra pads in constant_pad_nd order)."""
        sym = [min(b, a) for b, a in pads]
        extra = []
        for (b, a), m in reversed(list(zip(pads, sym))):
            extra += [b - m, a - m]
        return sym, (extra if any(extra) else None)

    @staticmethod
    def crop(xv, pads, sizes):
        return xv[:, :, pads[0][0]:pads[0][0] + sizes[0], pads[1][0]:pads[1][0] + sizes[1],
                  pads[2][0]:pads[2][0] + sizes[2]]


def _check_rank(x, what="input"):
    if x.dim() != 5:
        raise InvalidArgumentError(None, None, f"{what} must be 5-dimensional")


def _groups(in_depth: int, f_in: int) -> int:
    if f_in == 0 or in_depth % f_in:
        raise InvalidArgumentError(None, None, f"Input depth must be evenly divisible by filter "
                                   f"depth: {in_depth} vs {f_in}")
    return in_depth // f_in


def _oidhw(w, channels_last: bool):
    """The DHWIO filter as ATen's OIDHW: a view, or for channels-last data (NDHWC) a
    channels-last copy (ODHWI memory) by the blocked transpose, which ATen would otherwise
    make element by element (as nn_conv.py's filters)."""
    if channels_last and w.shape[3] >= 4:
        return permute_copy(w, (4, 0, 1, 2, 3)).permute(0, 4, 1, 2, 3)
    return w.permute(4, 3, 0, 1, 2)


def conv3d_forward(node):
    """`conv3d(x, w, bias=None)` of a Conv3D or `_FusedConv3D` node: the bias (or None) is
    added by ATen's convolution as it writes the output."""
    g3 = Geometry3D(node)

    def conv3d(x, w, bias=None):
        _check_rank(x)
        _check_rank(w, "filter")
        xv = g3.to_ncdhw(x)
        groups = _groups(xv.shape[1], w.shape[3])
        sym, extra = g3.split(g3.pads(xv.shape[2:], w.shape[:3]))
        if extra is not None:
            xv = constant_pad(xv, extra)
        y = aten.convolution(xv, _oidhw(w, g3.ndhwc), bias, g3.stride, sym, g3.dilation, False,
                             [0, 0, 0], groups)
        return g3.back(y)
    return conv3d


kernel(nn_conv3d.Conv3D)(conv3d_forward)


def _sizes(node, sizes):
    # Always the fed value: an eager kernel is cached by input shapes, and two calls may
    # share them with different sizes, so the static output shape of the first is not safe.
    return tuple(int(v) for v in sizes.tolist())


@kernel(nn_conv3d.Conv3DBackpropInputV2)
def _conv3d_backprop_input(node):
    g3 = Geometry3D(node)

    def backprop_input(sizes, w, g):
        dims = _sizes(node, sizes)
        n, c, sp = (dims[0], dims[4], dims[1:4]) if g3.ndhwc else (dims[0], dims[1], dims[2:])
        pads = g3.pads(sp, w.shape[:3])
        g3.check_out("Conv3DBackpropInputOp", sp, w.shape[:3], g)
        sym, _ = g3.split(pads)
        padded = [s + b + a - 2 * m for s, (b, a), m in zip(sp, pads, sym)]
        # NDHWC in memory, as the input's other consumers read it (an NCDHW gradient made
        # MaxPool3DGrad's ATen kernel mix layouts: 1.33 against 0.17 ms)
        memory = torch.channels_last_3d if g3.ndhwc else torch.contiguous_format
        dummy = torch.empty((n, c, *padded), dtype=g.dtype, device=g.device,
                            memory_format=memory)
        dx = aten.convolution_backward(g3.to_ncdhw(g), dummy, _oidhw(w, g3.ndhwc), None,
                                       g3.stride, sym, g3.dilation, False, [0, 0, 0],
                                       _groups(c, w.shape[3]), [True, False, False])[0]
        if padded != list(sp):
            dx = g3.crop(dx, [(b - m, a - m) for (b, a), m in zip(pads, sym)], sp)
        return g3.back(dx)
    return backprop_input


@kernel(nn_conv3d.Conv3DBackpropFilterV2)
def _conv3d_backprop_filter(node):
    g3 = Geometry3D(node)

    def backprop_filter(x, sizes, g):
        kd, kh, kw, cin, cout = _sizes(node, sizes)
        xv = g3.to_ncdhw(x)
        sym, extra = g3.split(g3.pads(xv.shape[2:], (kd, kh, kw)))
        g3.check_out("Conv3DBackpropFilterOp", xv.shape[2:], (kd, kh, kw), g)
        if extra is not None:
            xv = constant_pad(xv, extra)
        # the stand-in weight in the data's memory format, as nn_conv.py's (a copy less each)
        memory = torch.channels_last_3d if g3.ndhwc else torch.contiguous_format
        dummy = torch.empty((cout, cin, kd, kh, kw), dtype=g.dtype, device=g.device,
                            memory_format=memory)
        dw = aten.convolution_backward(g3.to_ncdhw(g), xv, dummy, None, g3.stride, sym,
                                       g3.dilation, False, [0, 0, 0], _groups(xv.shape[1], cin),
                                       [False, True, False])[1]
        if g3.ndhwc:   # ODHWI memory -> DHWIO
            return permute_copy(dw.permute(0, 2, 3, 4, 1), (1, 2, 3, 4, 0))
        return dw.permute(2, 3, 4, 1, 0).contiguous()
    return backprop_filter


# -- pooling ---------------------------------------------------------------------------------------


def _padded(g3, xv, value):
    """(padded input, per-dim pads) for TF's windows; no copy when nothing is padded."""
    pads = g3.pads(xv.shape[2:], g3.ksize)
    extra = [p for b, a in reversed(pads) for p in (b, a)]
    if any(extra):
        xv = constant_pad(xv, extra, value)
    return xv, pads


def _max_indices(g3, x):
    _check_rank(x)
    xv, pads = _padded(g3, g3.to_ncdhw(x), -math.inf)
    y, idx = aten.max_pool3d_with_indices(xv, g3.ksize, g3.stride, [0, 0, 0], [1, 1, 1], False)
    return xv, pads, y, idx


@kernel(nn_pool3d.MaxPool3D)
def _max_pool3d(node):
    g3 = Geometry3D(node, "ksize")

    def max_pool3d(x):
        _check_rank(x)
        xv, _ = _padded(g3, g3.to_ncdhw(x), -math.inf)
        y = aten.max_pool3d(xv, g3.ksize, g3.stride, [0, 0, 0], [1, 1, 1], False)
        if y.is_floating_point():
            y = tf_window_edges(y, lambda: aten.max_pool3d(
                nan_never_wins(xv), g3.ksize, g3.stride, [0, 0, 0], [1, 1, 1], False))
        return g3.back(y)
    return max_pool3d


@kernel(nn_pool3d.MaxPool3DGrad)
def _max_pool3d_grad(node):
    g3 = Geometry3D(node, "ksize")

    def max_pool3d_grad(x, y, g):
        if g3.ndhwc and max_pool3d_grad_numba.applies(x, y, g, g3.ksize, g3.stride):
            pads = g3.pads(x.shape[1:4], g3.ksize)
            return max_pool3d_grad_numba.gradient(x, y, g, g3.ksize, g3.stride,
                                                  [b for b, _ in pads])
        xv, pads, _, idx = _max_indices(g3, x)
        gv = g3.to_ncdhw(g).to(xv.dtype)
        if xv.is_contiguous(memory_format=torch.channels_last_3d):   # one layout for both
            gv = gv.contiguous(memory_format=torch.channels_last_3d)
        dx = aten.max_pool3d_with_indices_backward(gv, xv, g3.ksize, g3.stride, [0, 0, 0],
                                                   [1, 1, 1], False, idx)
        return g3.back(g3.crop(dx, pads, x.shape[1:4] if g3.ndhwc else x.shape[2:]))
    return max_pool3d_grad


@kernel(nn_pool3d.MaxPool3DGradGrad)
def _max_pool3d_grad_grad(node):
    g3 = Geometry3D(node, "ksize")

    def max_pool3d_grad_grad(x, _y, g):
        xv, _, y, idx = _max_indices(g3, x)
        gv, _ = _padded(g3, g3.to_ncdhw(g), 0.0)
        n, c = y.shape[:2]
        out = gv.reshape(n, c, -1).gather(2, idx.reshape(n, c, -1)).reshape(y.shape)
        return g3.back(out)
    return max_pool3d_grad_grad


class _AvgCounts:
    """The number of real elements in each window, per input size (cached)."""

    def __init__(self, g3):
        self.g3 = g3
        self.cache: dict = {}

    def __call__(self, sizes, dtype, device):
        key = (tuple(sizes), dtype, device)
        c = self.cache.get(key)
        if c is None:
            ones = torch.ones((1, 1, *sizes), dtype=dtype, device=device)
            padded, _ = _padded(self.g3, ones, 0.0)
            c = aten.avg_pool3d(padded, self.g3.ksize, self.g3.stride, [0, 0, 0], False, True, 1)
            self.cache[key] = c
        return c


def _upcast(x):
    # ATen's CPU avg_pool3d has no float16 kernel: half precision runs in float32.
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


@kernel(nn_pool3d.AvgPool3D)
def _avg_pool3d(node):
    g3 = Geometry3D(node, "ksize")
    counts = _AvgCounts(g3)

    def avg_pool3d(x):
        _check_rank(x)
        xv = _upcast(g3.to_ncdhw(x))
        sizes = xv.shape[2:]
        xv, _ = _padded(g3, xv, 0.0)
        s = aten.avg_pool3d(xv, g3.ksize, g3.stride, [0, 0, 0], False, True, 1)
        return g3.back((s / counts(sizes, xv.dtype, x.device)).to(x.dtype))
    return avg_pool3d


@kernel(nn_pool3d.AvgPool3DGrad)
def _avg_pool3d_grad(node):
    g3 = Geometry3D(node, "ksize")
    counts = _AvgCounts(g3)

    def avg_pool3d_grad(shape, g):
        dims = _sizes(node, shape)
        n, c, sp = (dims[0], dims[4], dims[1:4]) if g3.ndhwc else (dims[0], dims[1], dims[2:])
        pads = g3.pads(sp, g3.ksize)
        padded = [s + b + a for s, (b, a) in zip(sp, pads)]
        gv = _upcast(g3.to_ncdhw(g))
        gv = gv / counts(sp, gv.dtype, g.device)
        dummy = torch.empty((n, c, *padded), dtype=gv.dtype, device=g.device)
        dx = aten.avg_pool3d_backward(gv, dummy, g3.ksize, g3.stride, [0, 0, 0], False, True, 1)
        return g3.back(g3.crop(dx, pads, sp)).to(g.dtype)
    return avg_pool3d_grad

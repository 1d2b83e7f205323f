"""ATen kernels for Dilation2D and its backprop ops (NHWC).

The (-inf padded) input is unfolded by im2col into [N, C, fh*fw, L] windows; the filter is
added per window position and the max taken. The backprop ops route each out_backprop value
to the first maximising window element (TF's rule for ties): a one-hot over the window, then
col2im sums it into the input, or a sum over batch and positions gives the filter's.
"""

from __future__ import annotations

import math

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_morphology
from ndflow.ops.nn_common import windowed_output_size

aten = torch.ops.aten


class _Geometry:
    def __init__(self, node):
        a = node.attrs
        self.stride = [int(a["strides"][1]), int(a["strides"][2])]
        self.rate = [int(a["rates"][1]), int(a["rates"][2])]
        self.padding = a["padding"]

    def windows(self, x, f):
        """(windows [N, C, K, L] of the padded input plus the filter, out size, pads)."""
        if x.dim() != 4:
            raise InvalidArgumentError(None, None, "input must be 4-dimensional")
        if f.dim() != 3:
            raise InvalidArgumentError(None, None, "filter must be 3-dimensional")
        n, h, w, c = x.shape
        fh, fw, fc = f.shape
        if fc != c:
            raise InvalidArgumentError(None, None, "input and filter must have the same depth")
        out, pads = [], []
        for size, k, s, r in ((h, fh, self.stride[0], self.rate[0]),
                              (w, fw, self.stride[1], self.rate[1])):
            try:
                o, b, e = windowed_output_size(size, (k - 1) * r + 1, s, 1, self.padding)
            except ValueError as err:
                raise InvalidArgumentError(None, None, str(err)) from None
            out.append(o)
            pads.append((b, e))
        xv = x.permute(0, 3, 1, 2)
        if not x.dtype.is_floating_point:
            xv = xv.double()
        padded = aten.constant_pad_nd(xv, [pads[1][0], pads[1][1], pads[0][0], pads[0][1]],
                                      -math.inf)
        cols = aten.im2col(padded, [fh, fw], self.rate, [0, 0], self.stride)
        cols = cols.view(n, c, fh * fw, -1)
        fv = f.permute(2, 0, 1).reshape(1, c, fh * fw, 1).to(cols.dtype)
        return cols + fv, out, pads, padded.shape[2:]


@kernel(nn_morphology.Dilation2D)
def _dilation2d(node):
    g = _Geometry(node)

    def dilation2d(x, f):
        win, (oh, ow), _, _ = g.windows(x, f)
        y = win.amax(2).view(x.shape[0], x.shape[3], oh, ow)
        return y.permute(0, 2, 3, 1).to(x.dtype)
    return dilation2d


def _routed(g, x, f, dy):
    """out_backprop routed to each window's first maximum: [N, C, K, L]."""
    win, (oh, ow), pads, padded_hw = g.windows(x, f)
    arg = win.argmax(2, keepdim=True)
    gv = dy.permute(0, 3, 1, 2).reshape(dy.shape[0], dy.shape[3], 1, oh * ow).to(win.dtype)
    routed = torch.zeros_like(win).scatter(2, arg, gv)
    return routed, pads, padded_hw


@kernel(nn_morphology.Dilation2DBackpropInput)
def _dilation2d_backprop_input(node):
    g = _Geometry(node)

    def backprop_input(x, f, dy):
        routed, pads, padded_hw = _routed(g, x, f, dy)
        n, c, k, cols = routed.shape
        dx = aten.col2im(routed.view(n, c * k, cols), list(padded_hw), list(f.shape[:2]),
                         g.rate, [0, 0], g.stride)
        h, w = x.shape[1], x.shape[2]
        dx = dx[:, :, pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + w]
        return dx.permute(0, 2, 3, 1).to(x.dtype).contiguous()
    return backprop_input


@kernel(nn_morphology.Dilation2DBackpropFilter)
def _dilation2d_backprop_filter(node):
    g = _Geometry(node)

    def backprop_filter(x, f, dy):
        routed, _, _ = _routed(g, x, f, dy)
        df = routed.sum((0, 3))  # [C, K]
        return df.t().reshape(f.shape).to(f.dtype)
    return backprop_filter

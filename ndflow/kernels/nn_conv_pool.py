"""Kernels of the remapper's `_Conv2DBiasReluMaxPool` and `_Conv2DBiasReluMaxPoolGrad`
(ndflow/ops/nn_fused.py; passes/conv_pool_fusion.py builds them).

NHWC float32 CPU tensors whose output channels are a multiple of 16 take the numba pass of
kernels/conv_pool_numba.py; bfloat16 CPU tensors are widened to float32 for either path and
the results rounded (one rounding where oneDNN's bfloat16 convolution rounds once too, and
relu and max commute with rounding). Elsewhere (numba or ATen's OpenMP launcher missing, a
GPU tensor, other channel counts) the same results come from ATen: the convolution over the
input padded to cover every window position, relu, a 2x2 max pool with indices (ATen's
scan: the same winner, ties and NaN included, as the numba pass for the same conv values),
and the indices turned into window codes; the backward builds the dense conv-sized gradient
from the codes and calls ATen's convolution backward for the filter (also the backward's
path for an input holding an inf or NaN, whose products with zero gradients the numba pass
skips but the unfused ops sum as NaN). The geometry (padding, conv and pooled sizes, padded
image) is one `Geometry` per input shape for both paths.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import conv_pool_numba
from ndflow.kernels.conv_pool_numba import INACTIVE, Geometry
from ndflow.kernels.padding import constant_pad
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_fused
from ndflow.ops.nn_common import hw, windowed_output_size

aten = torch.ops.aten


class _Plan:
    """The node's attrs and one `Geometry` per (input shape, filter shape)."""

    def __init__(self, node):
        a = node.attrs
        if hw(a["strides"], "NHWC") != (1, 1) or hw(a["dilations"], "NHWC") != (1, 1):
            raise InvalidArgumentError(None, None, f"{node.type} supports strides and "
                                       "dilations of 1 only")
        self.name = node.type
        self.padding = a["padding"]
        self.pool_padding = a["pool_padding"]
        self._geometries: dict = {}

    def geometry(self, x_shape, filter_shape) -> Geometry:
        key = (tuple(x_shape), tuple(filter_shape))
        geo = self._geometries.get(key)
        if geo is None:
            _, h, w, _ = x_shape
            kh, kw = filter_shape[0], filter_shape[1]
            try:
                hc, top, _ = windowed_output_size(h, kh, 1, 1, self.padding)
                wc, left, _ = windowed_output_size(w, kw, 1, 1, self.padding)
                ho, _, _ = windowed_output_size(hc, 2, 2, 1, self.pool_padding)
                wo, _, _ = windowed_output_size(wc, 2, 2, 1, self.pool_padding)
            except ValueError as e:
                raise InvalidArgumentError(None, None, f"{e} for {self.name}") from None
            geo = Geometry(x_shape, filter_shape, (top, left), (hc, wc), (ho, wo))
            self._geometries[key] = geo
        return geo


def _padded_nchw(x: torch.Tensor, geo: Geometry) -> torch.Tensor:
    """x zero-padded to the (hp, wp) image every window position reads, as an NCHW view."""
    bottom, right = geo.hp - geo.top - geo.h, geo.wp - geo.left - geo.w
    xp = x[:, :geo.hp - geo.top if bottom < 0 else None, :geo.wp - geo.left if right < 0
           else None]
    xp = constant_pad(xp, [0, 0, geo.left, max(right, 0), geo.top, max(bottom, 0)])
    return xp.permute(0, 3, 1, 2)


def _aten_forward(x, w, b, geo: Geometry):
    conv = aten.convolution(_padded_nchw(x, geo), w.permute(3, 2, 0, 1), b, [1, 1], [0, 0],
                            [1, 1], False, [0, 0], 1)
    conv = aten.relu(conv)
    if geo.hc % 2 or geo.wc % 2:   # positions outside the conv output never win
        conv = conv.clone()
        conv[:, :, geo.hc:] = float("-inf")
        conv[:, :, :, geo.wc:] = float("-inf")
    y, idx = aten.max_pool2d_with_indices(conv, [2, 2], [2, 2], [0, 0], [1, 1], False)
    row, col = idx // (2 * geo.wo), idx % (2 * geo.wo)
    codes = (row % 2) * 2 + col % 2
    codes = torch.where(y > 0, codes, INACTIVE).to(torch.uint8)
    return y.permute(0, 2, 3, 1).contiguous(), codes.permute(0, 2, 3, 1).contiguous()


def _aten_backward(x, g, codes, geo: Geometry):
    codes = codes.long()
    dense = g.new_zeros((g.shape[0], 2 * geo.ho, 2 * geo.wo, geo.c))
    for k in range(4):
        dense[:, k // 2::2, k % 2::2] = torch.where(codes == k, g, 0.0)
    w = g.new_empty((geo.c, geo.cin, geo.kh, geo.kw))
    dw = aten.convolution_backward(dense.permute(0, 3, 1, 2), _padded_nchw(x, geo), w, None,
                                   [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                   [False, True, False])[1]
    db = torch.where(codes < INACTIVE, g, 0.0).sum((0, 1, 2))
    return dw.permute(2, 3, 1, 0).contiguous(), db


def _wide(t: torch.Tensor) -> torch.Tensor:
    """A bfloat16 CPU tensor as float32 (exactly: the numba pass computes the mixed-precision
    rewrite's bfloat16 ops in float32 and rounds the results once)."""
    return t.float() if t.dtype == torch.bfloat16 and t.device.type == "cpu" else t


@kernel(nn_fused.Conv2DBiasReluMaxPool)
def _conv_bias_relu_pool(node):
    plan = _Plan(node)

    def conv_bias_relu_pool(x, w, b):
        geo = plan.geometry(x.shape, w.shape)
        if x.shape[3] != geo.cin or tuple(b.shape) != (geo.c,):
            raise InvalidArgumentError(None, None, f"{node.type}: input {list(x.shape)}, "
                                       f"filter {list(w.shape)} and bias {list(b.shape)} "
                                       "do not match")
        xw, ww, bw = _wide(x), _wide(w), _wide(b)
        if conv_pool_numba.applies(xw, geo.c):
            y, codes = conv_pool_numba.forward(xw, ww, bw, geo)
        else:
            y, codes = _aten_forward(xw, ww, bw, geo)
        return y.to(x.dtype), codes
    return conv_bias_relu_pool


@kernel(nn_fused.Conv2DBiasReluMaxPoolGrad)
def _conv_bias_relu_pool_grad(node):
    plan = _Plan(node)
    filter_shape = tuple(int(d) for d in node.attrs["filter_shape"])

    def conv_bias_relu_pool_grad(x, g, codes):
        geo = plan.geometry(x.shape, filter_shape)
        pooled = (x.shape[0], geo.ho, geo.wo, geo.c)
        if x.shape[3] != geo.cin or tuple(g.shape) != pooled or tuple(codes.shape) != pooled:
            raise InvalidArgumentError(None, None, f"{node.type}: input {list(x.shape)}, "
                                       f"grad {list(g.shape)} and codes {list(codes.shape)} "
                                       f"do not match the filter {list(filter_shape)}")
        xw, gw = _wide(x), _wide(g)
        grads = None
        if conv_pool_numba.applies(xw, geo.c):
            grads = conv_pool_numba.backward(xw, gw, codes, geo)
        if grads is None:    # no numba path, or an inf or NaN in x (see the module doc)
            grads = _aten_backward(xw, gw, codes, geo)
        return tuple(t.to(x.dtype) for t in grads)
    return conv_bias_relu_pool_grad

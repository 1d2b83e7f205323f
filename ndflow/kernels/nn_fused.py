"""ATen kernels for the remapper's fused ops (ndflow/ops/nn_fused.py).

`_FusedConv2D`: on a float32 CPU conv, oneDNN's convolution with the bias and the activation
as post-ops (`torch.ops.mkldnn._convolution_pointwise`; Elu has no oneDNN post-op there);
otherwise one `aten.convolution` call with the bias, then the activation in place on that
fresh output. `_FusedMatMul`: `addmm` (bias
folded into the GEMM) then the activation in place. `_MatMulAddScaled`: `mm` then
`addcmul_` of `y * scale` into the product. In-place activations only ever touch the
buffer the kernel itself just allocated, never an input.

`_FusedBatchNormEx`: FusedBatchNormV3's kernel (kernels/nn_norm.py) with the side input and
the ReLU taken as it writes y where it runs in numba, else applied in place to ATen's fresh
output (one allocation and one pass less than separate Add/Relu kernels).

`_MaxPoolWithIndices` keeps ATen's argmax indices from the forward pool so
`_MaxPoolGradWithIndices` scatters the gradient directly instead of recomputing the argmax
from (orig_input, orig_output) as MaxPoolGrad must. Both use the same window plan
(symmetric pad / ceil_mode / explicit -inf pad) as the MaxPool kernels, so the chosen
maxima, ties included, are exactly MaxPoolGrad's. On NHWC float32 CPU tensors both run as
one-pass numba kernels on ATen's OpenMP team instead (kernels/max_pool_numba.py: the same
values, indices and gradients, bit for bit), and bfloat16 ones in 2x2 windows tiling the
input.
"""

from __future__ import annotations

import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.kernels import conv_fft, gemm, max_pool_numba
from ndflow.kernels.autotune import FFT, NCHW, VECTOR
from ndflow.kernels.nn_conv import ConvGeometry
from ndflow.kernels.nn_conv3d import conv3d_forward
from ndflow.kernels.nn_norm import fused_batch_norm_kernel
from ndflow.kernels.nn_pool import PoolGeometry
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_fused

aten = torch.ops.aten


def _inplace_activation(fused_ops: list, attrs: dict):
    """The in-place ATen activation for `fused_ops[1:]` (None for no activation)."""
    rest = list(fused_ops[1:])
    if not rest:
        return None
    if len(rest) > 1 or rest[0] not in nn_fused.ACTIVATIONS:
        raise UnimplementedError(None, None, f"Fusion is not implemented: [{', '.join(fused_ops)}]")
    act = rest[0]
    if act == "Relu":
        return aten.relu_
    if act == "Relu6":
        return lambda y: aten.hardtanh_(y, 0.0, 6.0)
    if act == "Elu":
        return aten.elu_
    alpha = float(attrs.get("leakyrelu_alpha", 0.2))
    return lambda y: aten.leaky_relu_(y, alpha)


def _check_fused_ops(node, expected_args: int) -> None:
    fused = list(node.attrs.get("fused_ops") or [])
    if not fused or fused[0] != "BiasAdd" or int(node.attrs["num_args"]) != expected_args:
        raise UnimplementedError(None, None, f"Fusion is not implemented: [{', '.join(fused)}]")


# oneDNN post-ops through ATen's mkldnn pointwise convolution: the activation is applied
# while the output is written (measured on MNIST's convolutions, one AVX2 core, CPU time:
# 5x5x1x32 2.59 -> 2.27 ms, 5x5x32x64 19.7 -> 18.3 ms against convolution + relu_).
_ONEDNN_POST_OPS = {None: ("none", []), "Relu": ("relu", []), "Relu6": ("hardtanh", [0.0, 6.0])}
_ONEDNN = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn,
                                                           "_convolution_pointwise")


def _onednn_post_op(node, device):
    """(attr, scalars) of the oneDNN post-op computing the fused activation, or None when
    the plain path must run (not a float32 CPU conv or product, or an activation oneDNN
    lacks here)."""
    if not _ONEDNN or device.type != "cpu" or node.attrs["T"] is not dtypes.float32:
        return None
    rest = list(node.attrs["fused_ops"][1:])
    act = rest[0] if rest else None
    if act == "LeakyRelu":
        return "leaky_relu", [float(node.attrs.get("leakyrelu_alpha", 0.2))]
    return _ONEDNN_POST_OPS.get(act)


@kernel(nn_fused.FusedConv2D)
def _fused_conv2d(node):
    _check_fused_ops(node, 1)
    c = ConvGeometry(node)
    act = _inplace_activation(node.attrs["fused_ops"], node.attrs)
    post_op = _onednn_post_op(node, node.device)
    leave = node.read_by(0, "Conv2DBackpropFilter")   # the FFT's spectrum of x, for it

    def fused_conv2d(x, w, b):
        def run(algorithm):
            if algorithm == VECTOR:
                y = c.narrow_forward(x, w, b)
                if act is not None:
                    act(y)
                return y
            if algorithm == FFT:
                pads = c.pads(x.shape[1], x.shape[2], w.shape[0], w.shape[1])
                y = conv_fft.forward(x, w, pads, b, act is aten.relu_, leave)
                if conv_fft.all_finite(y):
                    if act is not None and act is not aten.relu_:
                        act(y)
                    return y
            plain = algorithm == NCHW
            xv, wv, pad, groups = c.forward_operands(x, w, plain)
            if post_op is not None:
                y = torch.ops.mkldnn._convolution_pointwise(
                    xv, wv, b, pad, c.stride, c.dilation, groups, post_op[0], post_op[1], "")
                return c.from_nchw(y, plain)
            y = aten.convolution(xv, wv, b, c.stride, pad, c.dilation, False, [0, 0], groups)
            if act is not None:
                act(y)
            return c.from_nchw(y, plain)
        return c.tuned("forward", x.shape, w.shape, x, run, c.narrow(x, w.shape))
    return fused_conv2d


@kernel(nn_fused.FusedConv3D)
def _fused_conv3d(node):
    """The convolution with its bias added by ATen's (oneDNN's) kernel as it writes the
    output, the activation in place after."""
    _check_fused_ops(node, 1)
    act = _inplace_activation(node.attrs["fused_ops"], node.attrs)
    forward = conv3d_forward(node)

    def fused_conv3d(x, w, b):
        if b.dim() != 1 or b.shape[0] != w.shape[-1]:
            raise InvalidArgumentError(None, None, f"Must provide as many biases as the last "
                                       f"dimension of the filter: [{','.join(map(str, b.shape))}]"
                                       f" vs. [{','.join(map(str, w.shape))}]")
        y = forward(x, w, b)
        if act is not None:
            act(y)
        return y
    return fused_conv3d


@kernel(nn_fused.FusedMatMul)
def _fused_matmul(node):
    _check_fused_ops(node, 1)
    ta, tb = bool(node.attrs["transpose_a"]), bool(node.attrs["transpose_b"])
    act = _inplace_activation(node.attrs["fused_ops"], node.attrs)
    # oneDNN's product applies the activation as it writes the output, where it has it
    return gemm.Linear(None if act is None else (
        *(_onednn_post_op(node, node.device) or ("none", [])), act), ta, not tb)


@kernel(nn_fused.MatMulAddScaled)
def _matmul_add_scaled(node):
    ta, tb = bool(node.attrs["transpose_a"]), bool(node.attrs["transpose_b"])

    def matmul_add_scaled(a, b, y, scale):
        out = gemm.linear(a.t() if ta else a, b if tb else b.t())
        return out.addcmul_(y, scale)  # the product is this kernel's own fresh buffer
    return matmul_add_scaled


@kernel(nn_fused.MaxPoolWithIndices)
def _max_pool_with_indices(node):
    p = PoolGeometry(node)

    def max_pool_with_indices(x):
        if p.nhwc and x.dim() == 4:
            pl = p.plan(x.shape[1], x.shape[2])
            if max_pool_numba.applies(x, p.k, p.s, pl.top_left, pl.out):
                return max_pool_numba.forward(x, p.k, p.s, pl.top_left, pl.out)
        xv, pl = p.max_view(x)
        y, idx = aten.max_pool2d_with_indices(xv, p.k, p.s, pl.pad, [1, 1], pl.ceil)
        return p.back(y), p.back(idx)
    return max_pool_with_indices


@kernel(nn_fused.MaxPoolGradWithIndices)
def _max_pool_grad_with_indices(node):
    p = PoolGeometry(node)
    fmt = torch.channels_last if p.nhwc else torch.contiguous_format

    def max_pool_grad_with_indices(x, g, idx):
        if p.nhwc and x.dim() == 4:
            pl = p.plan(x.shape[1], x.shape[2])
            if max_pool_numba.applies(x, p.k, p.s, pl.top_left, pl.out):
                return max_pool_numba.backward(x.shape, g, idx, p.k, p.s, pl.top_left)
        xv = p.nchw(x)
        n, c, h, w = xv.shape
        pl = p.plan(h, w)
        if pl.extra is not None:  # the indices point into the padded plane
            ex = pl.extra
            xv = torch.empty((n, c, h + ex[2] + ex[3], w + ex[0] + ex[1]), dtype=x.dtype,
                             device=x.device, memory_format=fmt)
        dx = aten.max_pool2d_with_indices_backward(p.nchw(g), xv, p.k, p.s, pl.pad, [1, 1],
                                                   pl.ceil, p.nchw(idx))
        if pl.extra is not None:
            dx = p.unpad(dx, pl.extra, h, w)
        return p.back(dx)
    return max_pool_grad_with_indices


_BN_ACTIVATIONS = ("Identity", "Relu")


@kernel(nn_fused.FusedBatchNormEx)
def _fused_batch_norm_ex(node):
    mode = node.attrs["activation_mode"]
    if mode not in _BN_ACTIVATIONS:
        raise UnimplementedError(None, None, f"Unsupported activation mode: {mode}")
    bn = fused_batch_norm_kernel(node)
    relu = mode == "Relu"

    def fused_batch_norm_ex(x, scale, offset, mean, var, *side):
        return bn(x, scale, offset, mean, var, side[0] if side else None, relu)
    return fused_batch_norm_ex


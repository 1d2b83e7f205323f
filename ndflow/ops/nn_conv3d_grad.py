"""Gradients of the 3-D convolution and pooling ops, as TF's nn_grad.py defines them."""

from __future__ import annotations

from ndflow.ops import nn_conv3d as conv
from ndflow.ops import nn_pool3d as pool
from ndflow.ops.array_core import shape, stop_gradient
from ndflow.ops.array_fill import zeros_like


def _conv_attrs(op) -> tuple:
    a = op.attrs
    return a["strides"], a["padding"], a["data_format"], a["dilations"]


@conv.Conv3D.def_grad
def _conv3d_grad(op, grad):
    s, p, f, d = _conv_attrs(op)
    x, w = op.inputs
    return [conv.conv3d_backprop_input(shape(x), w, grad, s, p, f, d),
            conv.conv3d_backprop_filter(x, shape(w), grad, s, p, f, d)]


@conv.Conv3DBackpropInputV2.def_grad
def _conv3d_backprop_input_grad(op, grad):
    s, p, f, d = _conv_attrs(op)
    _, w, dy = op.inputs
    return [None, conv.conv3d_backprop_filter(grad, shape(w), dy, s, p, f, d),
            conv.conv3d(grad, w, s, p, f, d)]


@conv.Conv3DBackpropFilterV2.def_grad
def _conv3d_backprop_filter_grad(op, grad):
    s, p, f, d = _conv_attrs(op)
    x, _, dy = op.inputs
    return [conv.conv3d_backprop_input(shape(x), grad, dy, s, p, f, d), None,
            conv.conv3d(x, grad, s, p, f, d)]


def _pool_attrs(op) -> tuple:
    a = op.attrs
    return a["ksize"], a["strides"], a["padding"], a["data_format"]


@pool.AvgPool3D.def_grad
def _avg_pool3d_grad(op, grad):
    return [pool.avg_pool3d_grad(shape(op.inputs[0]), grad, *_pool_attrs(op))]


@pool.AvgPool3DGrad.def_grad
def _avg_pool3d_grad_grad(op, grad):
    k, s, p, f = _pool_attrs(op)
    return [stop_gradient(op.inputs[0]), pool.avg_pool3d(grad, k, s, p, f)]


@pool.MaxPool3D.def_grad
def _max_pool3d_grad(op, grad):
    return [pool.max_pool3d_grad(op.inputs[0], op.outputs[0], grad, *_pool_attrs(op))]


@pool.MaxPool3DGrad.def_grad
def _max_pool3d_grad_grad(op, grad):
    x, y = op.inputs[0], op.inputs[1]
    return [zeros_like(x), zeros_like(y),
            pool.max_pool3d_grad_grad(x, y, grad, *_pool_attrs(op))]


@pool.MaxPool3DGradGrad.def_grad
def _max_pool3d_grad_grad_grad(op, grad):
    x, y = op.inputs[0], op.inputs[1]
    return [zeros_like(x), zeros_like(y), pool.max_pool3d_grad(x, y, grad, *_pool_attrs(op))]

"""ATen kernels for activations and their gradient ops."""

from __future__ import annotations

import torch

from ndflow.kernels.registry import kernel
from ndflow.ops import nn_activation as act

aten = torch.ops.aten
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@kernel(act.Relu)
def _relu(node):
    return torch.relu


@kernel(act.ReluGrad)
def _relu_grad(node):
    if node.input_dtypes[0].is_floating:
        return lambda g, y: aten.threshold_backward(g, y, 0)
    return lambda g, y: torch.where(y > 0, g, torch.zeros((), dtype=g.dtype, device=g.device))


@kernel(act.Relu6)
def _relu6(node):
    if node.input_dtypes[0].is_floating:
        return lambda x: aten.hardtanh(x, 0.0, 6.0)
    return lambda x: torch.clamp(x, 0, 6)


@kernel(act.Relu6Grad)
def _relu6_grad(node):
    # ATen's CUDA hardtanh_backward passes the gradient at a NaN feature, its CPU one does not
    # (nor do the JIT's kernels): on GPUs the select, so that both devices agree.
    if node.input_dtypes[0].is_floating and node.device.type == "cpu":
        return lambda g, x: aten.hardtanh_backward(g, x, 0.0, 6.0)
    return lambda g, x: torch.where((x > 0) & (x < 6), g, torch.zeros_like(g))


@kernel(act.Elu)
def _elu(node):
    return aten.elu


@kernel(act.EluGrad)
def _elu_grad(node):
    # TF: y < 0 ? g * (y + 1) : g  (ATen's is_result form: y <= 0 ? g * (y + alpha) : g).
    return lambda g, y: aten.elu_backward(g, 1.0, 1.0, 1.0, True, y)


@kernel(act.Selu)
def _selu(node):
    return torch.selu


@kernel(act.SeluGrad)
def _selu_grad(node):
    def selu_grad(g, y):
        return torch.where(y < 0, g * (y + _SELU_ALPHA * _SELU_SCALE), g * _SELU_SCALE)
    return selu_grad


@kernel(act.LeakyRelu)
def _leaky_relu(node):
    alpha = float(node.attrs["alpha"])
    return lambda x: aten.leaky_relu(x, alpha)


@kernel(act.LeakyReluGrad)
def _leaky_relu_grad(node):
    alpha = float(node.attrs["alpha"])
    return lambda g, x: aten.leaky_relu_backward(g, x, alpha, False)


@kernel(act.Softplus)
def _softplus(node):
    return lambda x: aten.softplus(x, 1, 20)


@kernel(act.SoftplusGrad)
def _softplus_grad(node):
    return lambda g, x: g * torch.sigmoid(x)


@kernel(act.Softmax)
def _softmax(node):
    return lambda x: torch.softmax(x, -1)


@kernel(act.LogSoftmax)
def _log_softmax(node):
    return lambda x: torch.log_softmax(x, -1)

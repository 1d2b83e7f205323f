"""Activations TensorFlow builds from other ops: `tf.nn.gelu` (exact with Erfc, or the tanh
approximation), `tf.nn.silu` / `swish` (x * sigmoid(beta * x)), `tf.nn.crelu`, and v1's
`xw_plus_b` / `relu_layer`."""

from __future__ import annotations

import math as _pymath

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import add, multiply, negative
from ndflow.ops.array_slicing import concat
from ndflow.ops.comparison import composite_name
from ndflow.ops.linalg import matmul
from ndflow.ops.math import sigmoid, tanh
from ndflow.ops.math_special import erfc
from ndflow.ops.nn_activation import relu
from ndflow.ops.nn_conv import bias_add


@tf_export("nn.gelu", v1=[])
def gelu(features, approximate: bool = False, name: str | None = None) -> Tensor:
    """`tf.nn.gelu`: x * Phi(x), Phi the standard normal CDF (exact: 0.5 * erfc(-x / sqrt 2);
    approximate: 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))))."""
    with composite_name(name, "Gelu") as final:
        x = convert_to_tensor(features, name="features")
        half_x = multiply(x, 0.5)
        if approximate:
            cube = multiply(multiply(multiply(x, x), x), 0.044715)
            inner = multiply(add(x, cube), _pymath.sqrt(2.0 / _pymath.pi))
            phi2 = add(tanh(inner), 1.0)
        else:
            phi2 = erfc(multiply(negative(x), 1.0 / _pymath.sqrt(2.0)))
    return multiply(half_x, phi2, name=final)


@tf_export("nn.silu", "nn.swish")
def silu(features, beta=1.0) -> Tensor:
    """`tf.nn.silu` (alias `swish`): x * sigmoid(beta * x)."""
    x = convert_to_tensor(features, name="features")
    return multiply(x, sigmoid(multiply(x, convert_to_tensor(beta, dtype=x.dtype))))


@tf_export("nn.crelu", v1=[])
def crelu(features, axis: int = -1, name: str | None = None) -> Tensor:
    """`tf.nn.crelu`: Relu of [features, -features] concatenated along `axis`."""
    with composite_name(name, "CRelu") as final:
        x = convert_to_tensor(features, name="features")
        c = concat([x, negative(x)], axis, name=final)
    return relu(c)


@tf_export(v1=["nn.crelu"])
def crelu_v1(features, name: str | None = None, axis: int = -1) -> Tensor:
    """`tf.compat.v1.nn.crelu`."""
    return crelu(features, axis, name)


def _layer_inputs(x, weights, biases):
    return (convert_to_tensor(x, name="x"), convert_to_tensor(weights, name="weights"),
            convert_to_tensor(biases, name="biases"))


@tf_export(v1=["nn.xw_plus_b"])
def xw_plus_b(x, weights, biases, name: str | None = None) -> Tensor:
    """`tf.compat.v1.nn.xw_plus_b`: matmul(x, weights) + biases (BiasAdd)."""
    with composite_name(name, "xw_plus_b") as final:
        x, weights, biases = _layer_inputs(x, weights, biases)
        mm = matmul(x, weights)
    return bias_add(mm, biases, name=final)


@tf_export(v1=["nn.relu_layer"])
def relu_layer(x, weights, biases, name: str | None = None) -> Tensor:
    """`tf.compat.v1.nn.relu_layer`: Relu(matmul(x, weights) + biases)."""
    with composite_name(name, "relu_layer") as final:
        x, weights, biases = _layer_inputs(x, weights, biases)
        pre = bias_add(matmul(x, weights), biases)
    return relu(pre, name=final)

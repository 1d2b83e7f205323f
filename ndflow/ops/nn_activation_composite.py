"""Activations TensorFlow builds from other ops: `tf.nn.gelu` (exact with Erfc, or the tanh
approximation) and `tf.nn.silu` / `swish` (x * sigmoid(beta * x))."""

from __future__ import annotations

import math as _pymath

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import add, multiply, negative
from ndflow.ops.comparison import composite_name
from ndflow.ops.math import sigmoid, tanh
from ndflow.ops.math_special import erfc


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

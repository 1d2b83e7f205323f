"""The kernel and bias options of a layer with weights (Dense, EinsumDense, the attention
layers): each constructor argument read through its `get` (an identifier, a config or an
object) and kept under the argument's name."""

from __future__ import annotations

from ndflow.keras import constraint_functions as constraints
from ndflow.keras import regularizer_functions as regularizers
from ndflow.ops import init_ops


def set_kernel_and_bias_options(layer, kernel_initializer, bias_initializer, kernel_regularizer,
                                bias_regularizer, kernel_constraint, bias_constraint) -> None:
    """Sets layer.kernel_initializer ... layer.bias_constraint."""
    layer.kernel_initializer = init_ops.get(kernel_initializer)
    layer.bias_initializer = init_ops.get(bias_initializer)
    layer.kernel_regularizer = regularizers.get(kernel_regularizer)
    layer.bias_regularizer = regularizers.get(bias_regularizer)
    layer.kernel_constraint = constraints.get(kernel_constraint)
    layer.bias_constraint = constraints.get(bias_constraint)

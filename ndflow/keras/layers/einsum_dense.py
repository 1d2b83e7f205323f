"""`keras.layers.EinsumDense`: a dense layer whose product is an einsum equation between the
inputs and a kernel of any rank (the projections inside MultiHeadAttention). Kernel and bias
shapes follow Keras 3's analysis of the equation, so weight files interoperate."""

from __future__ import annotations

import re

from ndflow.core.api_export import keras_export
from ndflow.keras import activation_functions as activations
from ndflow.keras import constraint_functions as constraints
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.keras.layers.weight_options import set_kernel_and_bias_options
from ndflow.ops import init_ops
from ndflow.ops.einsum import einsum


def analyze_einsum_string(equation, bias_axes, input_shape, output_shape):
    """(kernel shape, bias shape or None, full output shape, kernel input axes, kernel
    output axes) for `equation` applied to inputs of `input_shape` (Keras 3's rules: the
    equation is "ab,bc->ac", "...ab,bc->...ac" or "ab...,bc->ac...")."""
    dotted = re.sub(r"\.\.\.", "0", equation)
    for pattern, left in (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", False),
                          ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", True),
                          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", False)):
        match = re.match(pattern, dotted)
        if match:
            return _analyze_split(match.groups(), bias_axes, tuple(input_shape),
                                  output_shape, left)
    raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form "
                     "[X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")


def _analyze_split(specs, bias_axes, input_shape, output_shape, left_elided):
    input_spec, weight_spec, output_spec = specs
    elided = len(input_shape) - len(input_spec)
    output_shape = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    output_shape.insert(0, input_shape[0])
    if elided > 0 and left_elided:
        for i in range(1, elided):   # the elided dims between the batch and the named ones
            output_shape.insert(1, input_shape[i])
    elif elided > 0:
        output_shape.extend(input_shape[len(input_shape) - elided:])
    if left_elided:
        input_dim_map = {d: i + elided - len(input_shape) for i, d in enumerate(input_spec)}
        output_dim_map = {d: i + elided for i, d in enumerate(output_spec)}
    else:
        input_dim_map = {d: i for i, d in enumerate(input_spec)}
        output_dim_map = {d: i for i, d in enumerate(output_spec)}
    for dim in input_spec:
        in_size = input_shape[input_dim_map[dim]]
        if dim in output_dim_map:
            out_size = output_shape[output_dim_map[dim]]
            if out_size is not None and out_size != in_size:
                raise ValueError("Input shape and output shape do not match at shared "
                                 f"dimension '{dim}'. Input shape is {in_size}, and output "
                                 f"shape is {out_size}.")
    for dim in output_spec:
        if dim not in input_spec and dim not in weight_spec:
            raise ValueError(f"Dimension '{dim}' was specified in the output '{output_spec}' "
                             f"but has no corresponding dim in the input spec '{input_spec}' "
                             f"or weight spec '{output_spec}'")
    weight_shape, input_axes, output_axes = [], [], []
    for i, dim in enumerate(weight_spec):
        if dim in output_dim_map:
            weight_shape.append(output_shape[output_dim_map[dim]])
            output_axes.append(i)
        elif dim in input_dim_map:
            weight_shape.append(input_shape[input_dim_map[dim]])
            input_axes.append(i)
        else:
            raise ValueError(f"Weight dimension '{dim}' did not have a match in either the "
                             f"input spec '{input_spec}' or the output spec '{output_spec}'. "
                             "For this layer, the weight must be fully specified.")
    bias_shape = None
    if bias_axes is not None:
        offset = elided if left_elided else 0
        sizes = {c: output_shape[i + offset] for i, c in enumerate(output_spec)}
        for c in bias_axes:
            if c not in output_spec:
                raise ValueError(f"Bias dimension '{c}' was requested, but is not part of "
                                 f"the output spec '{output_spec}'")
        first = min(output_spec.find(c) for c in bias_axes)
        bias_shape = [sizes[c] if c in bias_axes else 1 for c in output_spec[first:]]
        if not left_elided:
            bias_shape.extend([1] * elided)
    return weight_shape, bias_shape, output_shape, input_axes, output_axes


@keras_export("keras.layers.EinsumDense")
class EinsumDense(Layer):
    """A dense layer of any shape, described by an einsum equation:
    `activation(einsum(equation, inputs, kernel) + bias)`; the kernel's shape follows from
    the equation.

    Args:
      equation: the einsum equation "inputs,kernel->output", e.g. "ab,bc->ac" (a Dense)
        or "abc,cde->abde" (a projection to several axes).
      output_shape: the output's dimensions after the batch axis (an int or tuple; None
        entries come from the inputs).
      activation: the activation (a name, callable or None).
      bias_axes: the output letters the bias spans (None: no bias).
      kernel_initializer: the kernel's initializer (default "glorot_uniform").
      bias_initializer: the bias' initializer (default zeros).
      kernel_regularizer, bias_regularizer: optional penalties.
      kernel_constraint, bias_constraint: optional projections after each update.
      lora_rank: must be None (LoRA is not built in ndflow).
      lora_alpha: accepted for Keras' signature.
      gptq_unpacked_column_size: accepted for Keras' signature.
      quantization_config: must be None.
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      NotImplementedError: `lora_rank` or `quantization_config` given.

    Example:

    >>> layer = tf.keras.layers.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c")
    >>> layer(tf.zeros((2, 3))).shape
    TensorShape([2, 4])
    """

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, lora_rank=None, lora_alpha=None,
                 gptq_unpacked_column_size=None, quantization_config=None, **kwargs):
        super().__init__(**kwargs)
        if lora_rank or quantization_config:
            raise NotImplementedError("EinsumDense(lora_rank=...) and quantization are not "
                                      "built in ndflow yet")
        self.equation = equation
        self.partial_output_shape = ((output_shape,) if isinstance(output_shape, int)
                                     else tuple(output_shape))
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        set_kernel_and_bias_options(self, kernel_initializer, bias_initializer, kernel_regularizer,
                                    bias_regularizer, kernel_constraint, bias_constraint)
        self.kernel = self.bias = None

    def build(self, input_shape) -> None:
        kernel_shape, bias_shape, _, in_axes, out_axes = analyze_einsum_string(
            self.equation, self.bias_axes, input_shape, self.partial_output_shape)
        self.input_spec = InputSpec(ndim=len(input_shape))
        init = self.kernel_initializer
        # Keras 3 gives a variance-scaling kernel its fans along the contracted / produced
        # axes (a [d, heads, key_dim] kernel has fan_in d, fan_out heads * key_dim). The clone
        # keeps the initializer's concrete seed, as Keras' does: an unseeded one would draw a
        # second Python-random seed here, and weights made after keras.utils.set_random_seed
        # would no longer be TF's.
        if isinstance(init, init_ops.VarianceScaling) and (
                init.input_axes is None or init.output_axes is None):
            config = {**init.get_config(), "seed": init.seed, "input_axes": in_axes,
                      "output_axes": out_axes}
            init = type(init).from_config(config)
        self.kernel = self.add_weight(tuple(kernel_shape), init,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, name="kernel")
        if bias_shape is not None:
            self.bias = self.add_weight(tuple(bias_shape), self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint, name="bias")
        self.built = True

    def compute_output_shape(self, input_shape):
        return tuple(analyze_einsum_string(self.equation, self.bias_axes, input_shape,
                                           self.partial_output_shape)[2])

    def call(self, inputs):
        x = einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            x = x + self.bias
        return x if self.activation is None else self.activation(x)

    def get_config(self) -> dict:
        return {**super().get_config(), "output_shape": self.partial_output_shape,
                "equation": self.equation,
                "activation": activations.config_name(self.activation),
                "bias_axes": self.bias_axes,
                "kernel_initializer": init_ops.serialize(self.kernel_initializer),
                "bias_initializer": init_ops.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint),
                "quantization_config": None}

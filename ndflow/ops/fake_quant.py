"""`tf.quantization.fake_quant_with_min_max_*`: quantization-aware training's fake
quantization (FakeQuantWithMinMaxArgs, ...Vars, ...VarsPerChannel and their gradient ops).

Values are clamped to [min, max] nudged so that 0.0 is exactly representable, snapped to
the nearest of the 2^num_bits - 1 (narrow_range: - 2) steps between, and returned as float;
the gradient passes through where the input lies inside the nudged range, and (the Vars
forms) sums what falls below into d min and above into d max. Kernels in
kernels/fake_quant.py."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def

_BITS = ["num_bits: int = 8", "narrow_range: bool = false"]


def _same(ctx):
    return [ctx.shapes[0]]


def _vars_grad_shape(ctx):
    return [ctx.shapes[1], TensorShape([]), TensorShape([])]


def _per_channel_grad_shape(ctx):
    x = ctx.shapes[1]
    depth = x[-1] if x.rank else None
    return [x, TensorShape([depth]), TensorShape([depth])]


FakeQuantWithMinMaxArgs = op_def(
    "FakeQuantWithMinMaxArgs", inputs=["inputs: float"], outputs=["outputs: float"],
    attrs=["min: float = -6", "max: float = 6"] + _BITS, shape=_same)
FakeQuantWithMinMaxArgsGradient = op_def(
    "FakeQuantWithMinMaxArgsGradient", inputs=["gradients: float", "inputs: float"],
    outputs=["backprops: float"], attrs=["min: float = -6", "max: float = 6"] + _BITS,
    shape=lambda ctx: [ctx.shapes[1]], not_differentiable=True)
def _vars_ops(name, grad_shape):
    """Op `name` (range from tensors `min`, `max`) and its `<name>Gradient`: the scalar and
    the per-channel forms differ only in their names and the gradient's min/max shapes."""
    forward = op_def(name, inputs=["inputs: float", "min: float", "max: float"],
                     outputs=["outputs: float"], attrs=_BITS, shape=_same)
    gradient = op_def(
        name + "Gradient", inputs=["gradients: float", "inputs: float", "min: float", "max: float"],
        outputs=["backprops_wrt_input: float", "backprop_wrt_min: float",
                 "backprop_wrt_max: float"], attrs=_BITS, shape=grad_shape,
        not_differentiable=True)
    return forward, gradient


FakeQuantWithMinMaxVars, FakeQuantWithMinMaxVarsGradient = _vars_ops(
    "FakeQuantWithMinMaxVars", _vars_grad_shape)
FakeQuantWithMinMaxVarsPerChannel, FakeQuantWithMinMaxVarsPerChannelGradient = _vars_ops(
    "FakeQuantWithMinMaxVarsPerChannel", _per_channel_grad_shape)


def _f(x):
    return convert_to_tensor(x, "float32")


@tf_export("quantization.fake_quant_with_min_max_args",
           v1=["quantization.fake_quant_with_min_max_args", "fake_quant_with_min_max_args"])
def fake_quant_with_min_max_args(inputs, min=-6, max=6, num_bits=8,  # noqa: A002
                                 narrow_range=False, name=None):
    """Fake-quantizes `inputs` into [min, max] given as attributes."""
    return apply_op(FakeQuantWithMinMaxArgs, [_f(inputs)], {
        "min": float(min), "max": float(max), "num_bits": int(num_bits),
        "narrow_range": bool(narrow_range)}, name=name).outputs[0]


@tf_export("quantization.fake_quant_with_min_max_args_gradient",
           v1=["quantization.fake_quant_with_min_max_args_gradient",
               "fake_quant_with_min_max_args_gradient"])
def fake_quant_with_min_max_args_gradient(gradients, inputs, min=-6, max=6,  # noqa: A002
                                          num_bits=8, narrow_range=False, name=None):
    """The gradient of `fake_quant_with_min_max_args`: `gradients` inside the range, 0 outside.

    Args:
      gradients: float32 gradients arriving at the fake-quant op's output, shaped as `inputs`.
      inputs: the float32 inputs the fake-quant op was applied to.
      min: the lower end of the quantization range (a Python float).
      max: the upper end.
      num_bits: the quantization bit width (2 to 16).
      narrow_range: if True, the quantized range is [1, 2^num_bits - 1] instead of from 0.
      name: optional name for the operation.

    Returns:
      A float32 tensor of inputs' shape.

    Example:
      >>> tf.quantization.fake_quant_with_min_max_args_gradient(
      ...     [1., 1., 1.], [-10., 0., 10.], -6, 6).numpy()
      array([0., 1., 0.], dtype=float32)
    """
    return apply_op(FakeQuantWithMinMaxArgsGradient, [_f(gradients), _f(inputs)], {
        "min": float(min), "max": float(max), "num_bits": int(num_bits),
        "narrow_range": bool(narrow_range)}, name=name).outputs[0]


def _vars(op, tensors, num_bits, narrow_range, name):
    out = apply_op(op, [_f(t) for t in tensors],
                   {"num_bits": int(num_bits), "narrow_range": bool(narrow_range)},
                   name=name).outputs
    return out[0] if len(out) == 1 else tuple(out)


@tf_export("quantization.fake_quant_with_min_max_vars",
           v1=["quantization.fake_quant_with_min_max_vars", "fake_quant_with_min_max_vars"])
def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8,  # noqa: A002
                                 narrow_range=False, name=None):
    """Fake-quantizes `inputs` into [min, max] given as scalar tensors (trainable)."""
    return _vars(FakeQuantWithMinMaxVars, [inputs, min, max], num_bits, narrow_range, name)


@tf_export("quantization.fake_quant_with_min_max_vars_gradient",
           v1=["quantization.fake_quant_with_min_max_vars_gradient",
               "fake_quant_with_min_max_vars_gradient"])
def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max,  # noqa: A002
                                          num_bits=8, narrow_range=False, name=None):
    """The gradients of `fake_quant_with_min_max_vars` for its input, min and max.

    Args:
      gradients: float32 gradients arriving at the fake-quant op's output, shaped as `inputs`.
      inputs: the float32 inputs the fake-quant op was applied to.
      min: scalar float32 tensor, the lower end of the range.
      max: scalar float32 tensor, the upper end.
      num_bits: the quantization bit width (2 to 16).
      narrow_range: if True, the quantized range is [1, 2^num_bits - 1] instead of from 0.
      name: optional name for the operation.

    Returns:
      A tuple `(d_inputs, d_min, d_max)`: `gradients` where the input was in range (0
      elsewhere), and the sums of `gradients` below and above the range.

    Example:
      >>> d_in, d_min, d_max = tf.quantization.fake_quant_with_min_max_vars_gradient(
      ...     [1., 1., 1.], [-10., 0., 10.], -6., 6.)
      >>> d_in.numpy(), float(d_min), float(d_max)
      (array([0., 1., 0.], dtype=float32), 1.0, 1.0)
    """
    return _vars(FakeQuantWithMinMaxVarsGradient, [gradients, inputs, min, max], num_bits,
                 narrow_range, name)


@tf_export("quantization.fake_quant_with_min_max_vars_per_channel",
           v1=["quantization.fake_quant_with_min_max_vars_per_channel",
               "fake_quant_with_min_max_vars_per_channel"])
def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8,  # noqa: A002
                                             narrow_range=False, name=None):
    """Fake-quantizes each channel (the last axis) of `inputs` into its own [min, max]."""
    return _vars(FakeQuantWithMinMaxVarsPerChannel, [inputs, min, max], num_bits,
                 narrow_range, name)


@tf_export("quantization.fake_quant_with_min_max_vars_per_channel_gradient",
           v1=["quantization.fake_quant_with_min_max_vars_per_channel_gradient",
               "fake_quant_with_min_max_vars_per_channel_gradient"])
def fake_quant_with_min_max_vars_per_channel_gradient(gradients, inputs, min, max,  # noqa: A002
                                                      num_bits=8, narrow_range=False,
                                                      name=None):
    """The gradients of `fake_quant_with_min_max_vars_per_channel`, one range per last-axis channel.

    Args:
      gradients: float32 gradients arriving at the fake-quant op's output, shaped as `inputs`.
      inputs: the float32 inputs the fake-quant op was applied to.
      min: float32 tensor of shape [d], each channel's lower end.
      max: float32 tensor of shape [d], each channel's upper end.
      num_bits: the quantization bit width (2 to 16).
      narrow_range: if True, the quantized range is [1, 2^num_bits - 1] instead of from 0.
      name: optional name for the operation.

    Returns:
      A tuple `(d_inputs, d_min, d_max)`: `gradients` where the input was in its channel's
      range (0 elsewhere), and per channel the sums of `gradients` below and above the range.

    Example:
      >>> d_in, d_min, d_max = tf.quantization.fake_quant_with_min_max_vars_per_channel_gradient(
      ...     [[1., 1.]], [[-10., 10.]], [-6., -6.], [6., 6.])
      >>> d_min.numpy(), d_max.numpy()
      (array([1., 0.], dtype=float32), array([0., 1.], dtype=float32))
    """
    return _vars(FakeQuantWithMinMaxVarsPerChannelGradient, [gradients, inputs, min, max],
                 num_bits, narrow_range, name)


def _bits(op) -> tuple:
    return op.get_attr("num_bits"), op.get_attr("narrow_range")


@FakeQuantWithMinMaxArgs.def_grad
def _args_grad(op, grad):
    return [fake_quant_with_min_max_args_gradient(grad, op.inputs[0], op.get_attr("min"),
                                                  op.get_attr("max"), *_bits(op))]


@FakeQuantWithMinMaxVars.def_grad
def _vars_grad(op, grad):
    return list(fake_quant_with_min_max_vars_gradient(grad, *op.inputs, *_bits(op)))


@FakeQuantWithMinMaxVarsPerChannel.def_grad
def _per_channel_grad(op, grad):
    return list(fake_quant_with_min_max_vars_per_channel_gradient(grad, *op.inputs,
                                                                  *_bits(op)))

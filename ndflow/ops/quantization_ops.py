"""`tf.quantization`'s quantize / dequantize family: QuantizeV2, Dequantize,
QuantizeAndDequantizeV2/V3/V4 (with V4's gradient op) and QuantizedConcat.

A quantized tensor (qint8, quint8, qint16, quint16, qint32) holds integers; the reals they
stand for come from a (min, max) range that travels beside them as float tensors. The
fake-quantization ops (quantization-aware training) are ops/fake_quant.py. Kernels in
kernels/quantization_ops.py.
"""

from __future__ import annotations

import collections

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def

QuantizeV2Result = collections.namedtuple("QuantizeV2", ["output", "output_min", "output_max"])
QuantizedConcatResult = collections.namedtuple("QuantizedConcat",
                                               ["output", "output_min", "output_max"])
QuantizeAndDequantizeV4GradResult = collections.namedtuple(
    "QuantizeAndDequantizeV4Grad", ["input_backprop", "input_min_backprop",
                                    "input_max_backprop"])

_MODE = "mode: {'MIN_COMBINED', 'MIN_FIRST', 'SCALED'} = 'MIN_COMBINED'"
_QDQ_T = "T: {bfloat16, half, float, double}"


def _range_shape(ctx):
    """QuantizeV2's output_min/max: a scalar, or one per slice along `axis`."""
    x, axis = ctx.shapes[0], ctx.attrs.get("axis", -1)
    if axis < 0:
        return TensorShape([])
    depth = x[axis] if x.rank is not None and axis < x.rank else None
    return TensorShape([depth])


QuantizeV2 = op_def(
    "QuantizeV2", inputs=["input: float", "min_range: float", "max_range: float"],
    outputs=["output: T", "output_min: float", "output_max: float"],
    attrs=["T: quantizedtype", _MODE,
           "round_mode: {'HALF_AWAY_FROM_ZERO', 'HALF_TO_EVEN'} = 'HALF_AWAY_FROM_ZERO'",
           "narrow_range: bool = false", "axis: int = -1",
           "ensure_minimum_range: float = 0.01"],
    shape=lambda ctx: [ctx.shapes[0], _range_shape(ctx), _range_shape(ctx)],
    gradient_undefined=True)
Dequantize = op_def(
    "Dequantize", inputs=["input: T", "min_range: float", "max_range: float"],
    outputs=["output: dtype"],
    attrs=["T: quantizedtype", _MODE, "narrow_range: bool = false", "axis: int = -1",
           "dtype: {bfloat16, float} = DT_FLOAT"],
    shape=lambda ctx: [ctx.shapes[0]], gradient_undefined=True)
_QDQ_ATTRS = ["signed_input: bool = true", "num_bits: int = 8", "range_given: bool = false",
              _QDQ_T, "round_mode: {'HALF_TO_EVEN', 'HALF_UP'} = 'HALF_TO_EVEN'",
              "narrow_range: bool = false", "axis: int = -1"]


def _qdq(name):
    """QuantizeAndDequantizeV2 and V4 have one signature (V4 only adds a gradient)."""
    return op_def(name, inputs=["input: T", "input_min: T", "input_max: T"],
                  outputs=["output: T"], attrs=_QDQ_ATTRS, shape=lambda ctx: [ctx.shapes[0]])


QuantizeAndDequantizeV2 = _qdq("QuantizeAndDequantizeV2")
QuantizeAndDequantizeV3 = op_def(
    "QuantizeAndDequantizeV3",
    inputs=["input: T", "input_min: T", "input_max: T", "num_bits: int32"],
    outputs=["output: T"],
    attrs=["signed_input: bool = true", "range_given: bool = true", _QDQ_T,
           "narrow_range: bool = false", "axis: int = -1"],
    shape=lambda ctx: [ctx.shapes[0]])
QuantizeAndDequantizeV4 = _qdq("QuantizeAndDequantizeV4")
QuantizeAndDequantizeV4Grad = op_def(
    "QuantizeAndDequantizeV4Grad",
    inputs=["gradients: T", "input: T", "input_min: T", "input_max: T"],
    outputs=["input_backprop: T", "input_min_backprop: T", "input_max_backprop: T"],
    attrs=[_QDQ_T, "axis: int = -1"],
    shape=lambda ctx: [ctx.shapes[1], ctx.shapes[2], ctx.shapes[3]])


def _quantized_concat_shape(ctx):
    n = ctx.attrs["N"]
    shapes = ctx.shapes[1:1 + n]
    known = [s for s in shapes if s.rank is not None]
    if not known:
        return [TensorShape(None), TensorShape([]), TensorShape([])]
    dim = ctx.value(0)
    rank = known[0].rank
    # (a bad dimension is the kernel's error)
    if dim is None or np.ndim(dim) or not 0 <= int(dim) < rank:
        return [TensorShape([None] * rank), TensorShape([]), TensorShape([])]
    dim = int(dim)
    dims = list(known[0].as_list())
    sizes = [s.as_list()[dim] if s.rank == rank else None for s in shapes]
    dims[dim] = None if None in sizes else sum(sizes)
    return [TensorShape(dims), TensorShape([]), TensorShape([])]


QuantizedConcat = op_def(
    "QuantizedConcat",
    inputs=["concat_dim: int32", "values: N * T", "input_mins: N * float",
            "input_maxes: N * float"],
    outputs=["output: T", "output_min: float", "output_max: float"],
    attrs=["N: int >= 2", "T: type"], shape=_quantized_concat_shape,
    gradient_undefined=True)


# -- gradients (TF's array_grad.py) -------------------------------------------------------------


@QuantizeAndDequantizeV2.def_grad
def _qdq_v2_grad(op, grad):
    return [grad, None, None]   # straight through, TF's V2 gradient


@QuantizeAndDequantizeV3.def_grad
def _qdq_v3_grad(op, grad):
    return [grad, None, None, None]


@QuantizeAndDequantizeV4.def_grad
def _qdq_v4_grad(op, grad):
    return list(quantize_and_dequantize_v4_grad(grad, op.inputs[0], op.inputs[1],
                                                op.inputs[2], axis=op.attrs["axis"]))


@QuantizeAndDequantizeV4Grad.def_grad
def _qdq_v4_grad_grad(op, grad, *_):
    return list(quantize_and_dequantize_v4_grad(grad, op.inputs[1], op.inputs[2],
                                                op.inputs[3], axis=op.attrs["axis"])) + [None]


def quantize_and_dequantize_v4_grad(gradients, input, input_min, input_max,  # noqa: A002
                                    axis=-1, name=None):
    """The QuantizeAndDequantizeV4Grad op: `gradients` where `input` lies in
    [input_min, input_max] (per slice along `axis`), zero elsewhere; zero range gradients."""
    op = apply_op(QuantizeAndDequantizeV4Grad, [gradients, input, input_min, input_max],
                  {"axis": axis}, name=name)
    return QuantizeAndDequantizeV4GradResult(*op.outputs)


# -- public functions --------------------------------------------------------------------------


def _axis(x, axis):
    """TF's Python-side axis: None is -1 (whole tensor); negative counts from the end."""
    if axis is None:
        return -1
    if axis < 0:
        if x.shape.rank is None:
            raise ValueError("input should have known rank to use negative axis.")
        axis %= x.shape.rank
    return axis


@tf_export(v1=["quantize_v2"])
def quantize_v2(input, min_range, max_range, T, mode="MIN_COMBINED",  # noqa: A002, N803
                name=None, round_mode="HALF_AWAY_FROM_ZERO", narrow_range=False, axis=None,
                ensure_minimum_range=0.01):
    """`tf.compat.v1.quantize_v2`: `tf.quantization.quantize` with `name` before
    `round_mode`."""
    x = convert_to_tensor(input, name="input")
    op = apply_op(QuantizeV2, [x, min_range, max_range],
                  {"T": dtypes.as_dtype(T), "mode": mode, "round_mode": round_mode,
                   "narrow_range": narrow_range, "axis": _axis(x, axis),
                   "ensure_minimum_range": ensure_minimum_range}, name=name)
    return QuantizeV2Result(*op.outputs)


@tf_export("quantization.quantize", v1=["quantization.quantize", "quantize"])
def quantize(input, min_range, max_range, T, mode="MIN_COMBINED",  # noqa: A002, N803
             round_mode="HALF_AWAY_FROM_ZERO", name=None, narrow_range=False, axis=None,
             ensure_minimum_range=0.01):
    """`tf.quantization.quantize` (QuantizeV2): floats to `T` by the range [min_range,
    max_range] (widened to hold 0 and at least `ensure_minimum_range` wide); returns
    (output, output_min, output_max), the range the output stands for."""
    return quantize_v2(input, min_range, max_range, T, mode=mode, name=name,
                       round_mode=round_mode, narrow_range=narrow_range, axis=axis,
                       ensure_minimum_range=ensure_minimum_range)


@tf_export("quantization.dequantize", v1=["quantization.dequantize", "dequantize"])
def dequantize(input, min_range, max_range, mode="MIN_COMBINED",  # noqa: A002
               name=None, axis=None, narrow_range=False, dtype=dtypes.float32):
    """`tf.quantization.dequantize`: a quantized tensor back to `dtype` (float32 or
    bfloat16) by its range."""
    x = convert_to_tensor(input, name="input")
    op = apply_op(Dequantize, [x, min_range, max_range],
                  {"mode": mode, "narrow_range": narrow_range, "axis": _axis(x, axis),
                   "dtype": dtypes.as_dtype(dtype)}, name=name)
    return op.outputs[0]


def _qdq(op_def_, input, input_min, input_max, signed_input, num_bits,  # noqa: A002
         range_given, round_mode, name, narrow_range, axis):
    x = convert_to_tensor(input, name="input")
    op = apply_op(op_def_, [x, input_min, input_max],
                  {"signed_input": signed_input, "num_bits": num_bits,
                   "range_given": range_given, "round_mode": round_mode,
                   "narrow_range": narrow_range, "axis": _axis(x, axis)}, name=name)
    return op.outputs[0]


@tf_export("quantization.quantize_and_dequantize")
def quantize_and_dequantize(input, input_min, input_max, signed_input=True,  # noqa: A002
                            num_bits=8, range_given=False, round_mode="HALF_TO_EVEN",
                            name=None, narrow_range=False, axis=None):
    """`tf.quantization.quantize_and_dequantize` (QuantizeAndDequantizeV2): values rounded
    to `num_bits` steps of their range, as floats; the gradient passes straight through."""
    return _qdq(QuantizeAndDequantizeV2, input, input_min, input_max, signed_input, num_bits,
                range_given, round_mode, name, narrow_range, axis)


@tf_export("quantization.quantize_and_dequantize_v2")
def quantize_and_dequantize_v2(input, input_min, input_max, signed_input=True,  # noqa: A002
                               num_bits=8, range_given=False, round_mode="HALF_TO_EVEN",
                               name=None, narrow_range=False, axis=None):
    """`tf.quantization.quantize_and_dequantize_v2` (QuantizeAndDequantizeV4): as
    `quantize_and_dequantize`, with a gradient that is zero outside [input_min, input_max]."""
    return _qdq(QuantizeAndDequantizeV4, input, input_min, input_max, signed_input, num_bits,
                range_given, round_mode, name, narrow_range, axis)


@tf_export("quantization.quantized_concat", v1=["quantization.quantized_concat",
                                                "quantized_concat"])
def quantized_concat(concat_dim, values, input_mins, input_maxes, name=None):
    """`tf.quantization.quantized_concat`: quantized tensors joined along `concat_dim`, each
    requantized into the output's range (the inputs' union, with 0; symmetric for signed
    types)."""
    values, input_mins, input_maxes = list(values), list(input_mins), list(input_maxes)
    if not len(values) == len(input_mins) == len(input_maxes):
        raise InvalidArgumentError(
            None, None, f"QuantizedConcat expects as many input_mins ({len(input_mins)}) and "
                        f"input_maxes ({len(input_maxes)}) as values ({len(values)})")
    op = apply_op(QuantizedConcat, [concat_dim, values, input_mins, input_maxes], {},
                  name=name)
    return QuantizedConcatResult(*op.outputs)


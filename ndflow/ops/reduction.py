"""Reductions (Mean, Max, Min, Prod, All, Any; Sum lives in arithmetic) and ArgMax/ArgMin.

Axis handling is TF's: `axis=None` reduces every axis, negative axes count from the end,
an empty axis list is the identity; `keepdims` maps to the `keep_dims` attr, and the axes
are the `reduction_indices` input of type `Tidx`. Gradients follow TF's `math_grad.py`.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import array
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import (
    NUMERIC,
    cast,
    floor_div,
    maximum,
    multiply,
    normalize_axes,
    real_div,
    reduce,
    reduce_sum,
    reduction_grad_to_input,
    reduction_op,
    restore_reduced_dims,
    select_v2,
)
from ndflow.ops.comparison import equal, logical_and
from ndflow.ops.op_def import NOT_DIFFERENTIABLE, op_def

Mean = reduction_op("Mean")


@Mean.def_grad
def _mean_grad(op, grad):
    sum_grad = reduction_grad_to_input(op, grad)
    in_shape, out_shape = op.inputs[0].shape, op.outputs[0].shape
    if in_shape.is_fully_defined() and out_shape.is_fully_defined():
        factor = in_shape.num_elements() // max(out_shape.num_elements(), 1)
        return [real_div(sum_grad, cast(factor, sum_grad.dtype)), None]
    in_size = reduce_prod(array.shape(op.inputs[0]))
    out_size = maximum(reduce_prod(array.shape(op.outputs[0])), 1)
    return [real_div(sum_grad, cast(floor_div(in_size, out_size), sum_grad.dtype)), None]


def _min_or_max_grad(op, grad):
    """TF's `_MinOrMaxGrad`: the gradient is split evenly between tied extrema."""
    x = op.inputs[0]
    y = restore_reduced_dims(op.outputs[0], op)
    grad = restore_reduced_dims(grad, op)
    indicators = cast(equal(y, x), grad.dtype)
    num_selected = reduce_sum(indicators, op.inputs[1], keepdims=True)
    return [multiply(real_div(indicators, num_selected), grad), None]


Max = reduction_op("Max", grad=_min_or_max_grad)
Min = reduction_op("Min", grad=_min_or_max_grad)
Prod = reduction_op("Prod")


@Prod.def_grad
def _prod_grad(op, grad):
    """d prod / d x_i = product of the other entries, exact also when entries are zero."""
    x, axes = op.inputs
    grad = reduction_grad_to_input(op, grad)
    is_zero = equal(x, 0)
    ones = array.ones_like(x)
    safe_x = select_v2(is_zero, ones, x)
    num_zeros = reduce_sum(cast(is_zero, x.dtype), axes, keepdims=True)
    prod_nonzero = reduce_prod(safe_x, axes, keepdims=True)
    no_zero = equal(num_zeros, 0)
    one_zero = logical_and(equal(num_zeros, 1), is_zero)
    others = select_v2(no_zero, real_div(prod_nonzero, safe_x),
                       select_v2(one_zero, multiply(prod_nonzero, ones),
                                 array.zeros_like(x)))
    return [multiply(grad, others), None]


All = reduction_op("All", type_attr="bool", grad=NOT_DIFFERENTIABLE)
Any = reduction_op("Any", type_attr="bool", grad=NOT_DIFFERENTIABLE)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """`tf.math.reduce_mean` (integer inputs give the truncated integer mean, as TF)."""
    return reduce(Mean, input_tensor, axis, keepdims, name)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """`tf.math.reduce_max`."""
    return reduce(Max, input_tensor, axis, keepdims, name)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """`tf.math.reduce_min`."""
    return reduce(Min, input_tensor, axis, keepdims, name)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """`tf.math.reduce_prod`."""
    return reduce(Prod, input_tensor, axis, keepdims, name)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """`tf.math.reduce_all`: logical and over the axes."""
    return reduce(All, input_tensor, axis, keepdims, name)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """`tf.math.reduce_any`: logical or over the axes."""
    return reduce(Any, input_tensor, axis, keepdims, name)


# -- ArgMax / ArgMin ------------------------------------------------------------------------------

def _arg_shape(ctx):
    shape = ctx.shapes[0]
    dim = ctx.value(1)
    if shape.rank is None:
        return [TensorShape(None)]
    if dim is None:
        return [TensorShape([None] * (shape.rank - 1))] if shape.rank else [TensorShape(None)]
    d = int(np.asarray(dim).reshape(()))
    rank = shape.rank
    if not -rank <= d < rank:
        raise ValueError(f"Expected dimension in the range [{-rank}, {rank}), but got {d}")
    d %= rank
    return [TensorShape([s for i, s in enumerate(shape.as_list()) if i != d])]


def _arg_op(name):
    return op_def(name, inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                  attrs=[NUMERIC[:-1] + ", bool}", "Tidx: {int16, int32, int64} = DT_INT32",
                         "output_type: {int16, int32, int64} = DT_INT64"],
                  shape=_arg_shape, grad=NOT_DIFFERENTIABLE)


ArgMax = _arg_op("ArgMax")
ArgMin = _arg_op("ArgMin")


def _arg(op, input, axis, output_type, name):  # noqa: A002 - TF's name
    if axis is None:
        axis = 0
    if not isinstance(axis, Tensor):
        axis = convert_to_tensor(axis, dtype_hint=dtypes.int32)
    return apply_op(op, [input, axis], {"output_type": dtypes.as_dtype(output_type)},
                    name=name).outputs[0]


def argmax(input, axis=None, output_type=dtypes.int64, name=None) -> Tensor:  # noqa: A002
    """`tf.math.argmax`: index of the largest value along `axis` (default 0)."""
    return _arg(ArgMax, input, axis, output_type, name)


def argmin(input, axis=None, output_type=dtypes.int64, name=None) -> Tensor:  # noqa: A002
    """`tf.math.argmin`: index of the smallest value along `axis` (default 0)."""
    return _arg(ArgMin, input, axis, output_type, name)


__all__ = ["Mean", "Max", "Min", "Prod", "All", "Any", "ArgMax", "ArgMin", "reduce_mean",
           "reduce_max", "reduce_min", "reduce_prod", "reduce_all", "reduce_any", "argmax",
           "argmin", "normalize_axes"]

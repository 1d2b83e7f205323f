"""Reductions (Sum, Mean, Max, Min, Prod, All, Any) and ArgMax/ArgMin.

Axis handling is TF's: `axis=None` reduces every axis, negative axes count from the end,
an empty axis list is the identity; `keepdims` maps to the `keep_dims` attr, and the axes
are the `reduction_indices` input of type `Tidx`. Gradients are in `math_grad.py`.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.shapes import TensorShape, unknown_shape
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_fill, composite_dispatch
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import NUMERIC, WITH_COMPLEX
from ndflow.ops.op_def import REDUCTION, op_def


def normalize_axes(axes, rank: int) -> list:
    """Reduction indices as sorted non-negative ints; TF's error for out-of-range ones."""
    out = set()
    for a in np.asarray(axes).reshape(-1).tolist():
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} "
                             "dimensions.")
        out.add(a % rank if rank else a)
    return sorted(out)


def reduction_shape(ctx) -> list:
    """Shape rule of Sum/Mean/Max/Min/Prod/All/Any (TF's `ReductionShape`)."""
    shape, keep = ctx.shapes[0], ctx.attrs["keep_dims"]
    axes = ctx.value(1)
    if shape.rank is None:
        return [TensorShape(None)]
    if axes is None:
        if keep:
            return [unknown_shape(shape.rank)]
        n = ctx.shapes[1].num_elements()
        return [unknown_shape(shape.rank - n) if n is not None and ctx.shapes[1].rank == 1
                and n <= shape.rank else TensorShape(None)]
    red = set(normalize_axes(axes, shape.rank))
    dims = shape.as_list()
    if keep:
        return [TensorShape([1 if i in red else d for i, d in enumerate(dims)])]
    return [TensorShape([d for i, d in enumerate(dims) if i not in red])]


def _reduction_op(name: str, type_attr: str = NUMERIC):
    attrs = ["keep_dims: bool = false", "Tidx: {int32, int64} = DT_INT32"]
    if type_attr == "bool":  # All, Any: TF registers no gradient
        return op_def(name, inputs=["input: bool", "reduction_indices: Tidx"],
                      outputs=["output: bool"], attrs=attrs, shape=reduction_shape,
                      gradient_undefined=True, tags=[REDUCTION])
    return op_def(name, inputs=["input: T", "reduction_indices: Tidx"], outputs=["output: T"],
                  attrs=[type_attr] + attrs, shape=reduction_shape, tags=[REDUCTION])


Sum = _reduction_op("Sum", WITH_COMPLEX)
Mean = _reduction_op("Mean", WITH_COMPLEX)
Max = _reduction_op("Max")
Min = _reduction_op("Min")
Prod = _reduction_op("Prod", WITH_COMPLEX)
All = _reduction_op("All", type_attr="bool")
Any = _reduction_op("Any", type_attr="bool")


def reduce(op, x, axis, keepdims, name):
    """Applies reduction `op`: axis None = all axes (for unknown rank, via a flat view)."""
    if isinstance(x, CompositeTensor):  # a RaggedTensor: ops/ragged_math.py
        return composite_dispatch.call("reduce", op.name, x, axis, keepdims, name)
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x)
    keepdims = bool(keepdims)
    if axis is None:
        rank = x.shape.rank
        if rank is None:
            flat = apply_op(op, [array_core.reshape(x, [-1]), 0],
                            {"keep_dims": False}).outputs[0]
            if not keepdims:
                return array_core.identity(flat, name=name)
            return array_core.reshape(flat, array_fill.ones_like(array_core.shape(x)),
                                      name=name)
        axis = convert_to_tensor(np.arange(rank, dtype=np.int32))
    return apply_op(op, [x, axis], {"keep_dims": keepdims}, name=name).outputs[0]


@tf_export("math.reduce_sum", "reduce_sum", v1=[])
def reduce_sum(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """The sum of the elements over the given axes.

    Args:
      input_tensor: a numeric tensor.
      axis: an int or list of ints (negative counts from the end), or an int tensor; None reduces
        every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.
      name: optional name for the operation.

    Returns:
      A tensor of input_tensor's dtype, its shape without the reduced axes (or with them as 1).

    Raises:
      InvalidArgumentError: if an axis is out of range.

    Example:
      >>> x = tf.constant([[1, 2], [3, 4]])
      >>> tf.reduce_sum(x, axis=0).numpy()
      array([4, 6], dtype=int32)
    """
    return reduce(Sum, input_tensor, axis, keepdims, name)


@tf_export("math.reduce_mean", "reduce_mean", v1=[])
def reduce_mean(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """The mean of the elements over the given axes.

    For integer input the mean is computed in the integer dtype, so it is truncated.

    Args:
      input_tensor: a numeric tensor.
      axis: an int or list of ints (negative counts from the end), or an int tensor; None reduces
        every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.
      name: optional name for the operation.

    Returns:
      A tensor of input_tensor's dtype, its shape without the reduced axes (or with them as 1).

    Raises:
      InvalidArgumentError: if an axis is out of range.

    Example:
      >>> float(tf.reduce_mean([1.0, 2.0, 4.0]))
      2.3333332538604736
    """
    return reduce(Mean, input_tensor, axis, keepdims, name)


@tf_export("math.reduce_max", "reduce_max", v1=[])
def reduce_max(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """The maximum of the elements over the given axes.

    Args:
      input_tensor: a numeric tensor.
      axis: an int or list of ints (negative counts from the end), or an int tensor; None reduces
        every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.
      name: optional name for the operation.

    Returns:
      A tensor of input_tensor's dtype, its shape without the reduced axes (or with them as 1).

    Raises:
      InvalidArgumentError: if an axis is out of range.

    Example:
      >>> x = tf.constant([[1, 2], [3, 4]])
      >>> tf.reduce_max(x, axis=1, keepdims=True).numpy()
      array([[2],
             [4]], dtype=int32)
    """
    return reduce(Max, input_tensor, axis, keepdims, name)


@tf_export("math.reduce_min", "reduce_min", v1=[])
def reduce_min(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """The minimum of the elements over the given axes.

    Args:
      input_tensor: a numeric tensor.
      axis: an int or list of ints (negative counts from the end), or an int tensor; None reduces
        every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.
      name: optional name for the operation.

    Returns:
      A tensor of input_tensor's dtype, its shape without the reduced axes (or with them as 1).

    Raises:
      InvalidArgumentError: if an axis is out of range.

    Example:
      >>> x = tf.constant([[1, 2], [3, 4]])
      >>> tf.reduce_min(x, axis=1).numpy()
      array([1, 3], dtype=int32)
    """
    return reduce(Min, input_tensor, axis, keepdims, name)


@tf_export("math.reduce_prod", "reduce_prod", v1=[])
def reduce_prod(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """The product of the elements over the given axes.

    Args:
      input_tensor: a numeric tensor.
      axis: an int or list of ints (negative counts from the end), or an int tensor; None reduces
        every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.
      name: optional name for the operation.

    Returns:
      A tensor of input_tensor's dtype, its shape without the reduced axes (or with them as 1).

    Raises:
      InvalidArgumentError: if an axis is out of range.

    Example:
      >>> x = tf.constant([[1, 2], [3, 4]])
      >>> int(tf.reduce_prod(x))
      24
    """
    return reduce(Prod, input_tensor, axis, keepdims, name)


@tf_export("math.reduce_all", "reduce_all", v1=[])
def reduce_all(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """The logical and of the elements over the given axes.

    Args:
      input_tensor: a boolean tensor.
      axis: an int or list of ints (negative counts from the end), or an int tensor; None reduces
        every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.
      name: optional name for the operation.

    Returns:
      A tensor of input_tensor's dtype, its shape without the reduced axes (or with them as 1).

    Raises:
      InvalidArgumentError: if an axis is out of range.

    Example:
      >>> tf.reduce_all([[True, False], [True, True]], axis=1).numpy()
      array([False,  True])
    """
    return reduce(All, input_tensor, axis, keepdims, name)


@tf_export("math.reduce_any", "reduce_any", v1=[])
def reduce_any(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """The logical or of the elements over the given axes.

    Args:
      input_tensor: a boolean tensor.
      axis: an int or list of ints (negative counts from the end), or an int tensor; None reduces
        every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.
      name: optional name for the operation.

    Returns:
      A tensor of input_tensor's dtype, its shape without the reduced axes (or with them as 1).

    Raises:
      InvalidArgumentError: if an axis is out of range.

    Example:
      >>> tf.reduce_any([[True, False], [False, False]], axis=1).numpy()
      array([ True, False])
    """
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
                  shape=_arg_shape, tags=[REDUCTION])


ArgMax = _arg_op("ArgMax")
ArgMin = _arg_op("ArgMin")


def _arg(op, input, axis, output_type, name):  # noqa: A002 - TF's name
    if axis is None:
        axis = 0
    return apply_op(op, [input, array_core.int_input(axis)],
                    {"output_type": dtypes.as_dtype(output_type)},
                    name=name).outputs[0]


@tf_export("argmax", "math.argmax", v1=[])
def argmax(input, axis=None, output_type=dtypes.int64, name=None) -> Tensor:  # noqa: A002
    """The index of the largest value along an axis (the first one on ties).

    Args:
      input: a numeric tensor.
      axis: the axis to search (an int or scalar int tensor); None means 0.
      output_type: the index dtype, int32 or int64.
      name: optional name for the operation.

    Returns:
      A tensor of `output_type`: input's shape without `axis`.

    Raises:
      ValueError: if `axis` is out of range for a known rank.

    Example:
      >>> tf.math.argmax([[1, 5], [7, 2]], axis=1).numpy()
      array([1, 0])
    """
    return _arg(ArgMax, input, axis, output_type, name)


@tf_export("argmin", "math.argmin", v1=[])
def argmin(input, axis=None, output_type=dtypes.int64, name=None) -> Tensor:  # noqa: A002
    """The index of the smallest value along an axis (the first one on ties).

    Args:
      input: a numeric tensor.
      axis: the axis to search (an int or scalar int tensor); None means 0.
      output_type: the index dtype, int32 or int64.
      name: optional name for the operation.

    Returns:
      A tensor of `output_type`: input's shape without `axis`.

    Raises:
      ValueError: if `axis` is out of range for a known rank.

    Example:
      >>> tf.math.argmin([[1, 5], [7, 2]], axis=1).numpy()
      array([0, 1])
    """
    return _arg(ArgMin, input, axis, output_type, name)


# -- TF1 spellings (tf.compat.v1): `reduction_indices` and `keep_dims` -----------------------------

def _reduce_v1(op, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return reduce(op, input_tensor, axis, bool(keepdims), name)


@tf_export(v1=["math.reduce_sum", "reduce_sum"])
def reduce_sum_v1(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                  keep_dims=None) -> Tensor:
    """The sum of the elements over the given axes (TF1 signature).

    The arguments and result are those of `tf.math.reduce_sum`, plus two deprecated aliases:
    `reduction_indices` for `axis` and `keep_dims` for `keepdims`.

    Example:
      >>> x = [[1, 2], [3, 4]]
      >>> tf.compat.v1.reduce_sum(x, reduction_indices=1, keep_dims=True).shape
      TensorShape([2, 1])
    """
    return _reduce_v1(Sum, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export(v1=["math.reduce_mean", "reduce_mean"])
def reduce_mean_v1(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                   keep_dims=None) -> Tensor:
    """The mean of the elements over the given axes (TF1 signature).

    The arguments and result are those of `tf.math.reduce_mean`, plus two deprecated aliases:
    `reduction_indices` for `axis` and `keep_dims` for `keepdims`.

    Example:
      >>> x = [[1, 2], [3, 4]]
      >>> tf.compat.v1.reduce_mean(x, reduction_indices=1, keep_dims=True).shape
      TensorShape([2, 1])
    """
    return _reduce_v1(Mean, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export(v1=["math.reduce_max", "reduce_max"])
def reduce_max_v1(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                  keep_dims=None) -> Tensor:
    """The maximum of the elements over the given axes (TF1 signature).

    The arguments and result are those of `tf.math.reduce_max`, plus two deprecated aliases:
    `reduction_indices` for `axis` and `keep_dims` for `keepdims`.

    Example:
      >>> x = [[1, 2], [3, 4]]
      >>> tf.compat.v1.reduce_max(x, reduction_indices=1, keep_dims=True).shape
      TensorShape([2, 1])
    """
    return _reduce_v1(Max, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export(v1=["math.reduce_min", "reduce_min"])
def reduce_min_v1(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                  keep_dims=None) -> Tensor:
    """The minimum of the elements over the given axes (TF1 signature).

    The arguments and result are those of `tf.math.reduce_min`, plus two deprecated aliases:
    `reduction_indices` for `axis` and `keep_dims` for `keepdims`.

    Example:
      >>> x = [[1, 2], [3, 4]]
      >>> tf.compat.v1.reduce_min(x, reduction_indices=1, keep_dims=True).shape
      TensorShape([2, 1])
    """
    return _reduce_v1(Min, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export(v1=["math.reduce_prod", "reduce_prod"])
def reduce_prod_v1(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                   keep_dims=None) -> Tensor:
    """The product of the elements over the given axes (TF1 signature).

    The arguments and result are those of `tf.math.reduce_prod`, plus two deprecated aliases:
    `reduction_indices` for `axis` and `keep_dims` for `keepdims`.

    Example:
      >>> x = [[1, 2], [3, 4]]
      >>> tf.compat.v1.reduce_prod(x, reduction_indices=1, keep_dims=True).shape
      TensorShape([2, 1])
    """
    return _reduce_v1(Prod, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export(v1=["math.reduce_all", "reduce_all"])
def reduce_all_v1(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                  keep_dims=None) -> Tensor:
    """The logical and of the elements over the given axes (TF1 signature).

    The arguments and result are those of `tf.math.reduce_all`, plus two deprecated aliases:
    `reduction_indices` for `axis` and `keep_dims` for `keepdims`.

    Example:
      >>> x = [[True, False], [True, True]]
      >>> tf.compat.v1.reduce_all(x, reduction_indices=1, keep_dims=True).shape
      TensorShape([2, 1])
    """
    return _reduce_v1(All, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export(v1=["math.reduce_any", "reduce_any"])
def reduce_any_v1(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                  keep_dims=None) -> Tensor:
    """The logical or of the elements over the given axes (TF1 signature).

    The arguments and result are those of `tf.math.reduce_any`, plus two deprecated aliases:
    `reduction_indices` for `axis` and `keep_dims` for `keepdims`.

    Example:
      >>> x = [[True, False], [True, True]]
      >>> tf.compat.v1.reduce_any(x, reduction_indices=1, keep_dims=True).shape
      TensorShape([2, 1])
    """
    return _reduce_v1(Any, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export(v1=["arg_max", "argmax", "math.argmax"])
def argmax_v1(input, axis=None, name=None, dimension=None,  # noqa: A002
              output_type=dtypes.int64) -> Tensor:
    """The index of the largest value along an axis (the first one on ties).

    Args:
      input: a numeric tensor.
      axis: the axis to search (an int or scalar int tensor); None means 0.
      name: optional name for the operation.
      dimension: deprecated alias of `axis`.
      output_type: the index dtype, int32 or int64.

    Returns:
      A tensor of `output_type`: input's shape without `axis`.

    Raises:
      ValueError: if `axis` is out of range for a known rank.

    Example:
      >>> tf.compat.v1.argmax([[1, 5], [7, 2]], axis=1).numpy()
      array([1, 0])
    """
    axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return _arg(ArgMax, input, axis, output_type, name)


@tf_export(v1=["arg_min", "argmin", "math.argmin"])
def argmin_v1(input, axis=None, name=None, dimension=None,  # noqa: A002
              output_type=dtypes.int64) -> Tensor:
    """The index of the smallest value along an axis (the first one on ties).

    Args:
      input: a numeric tensor.
      axis: the axis to search (an int or scalar int tensor); None means 0.
      name: optional name for the operation.
      dimension: deprecated alias of `axis`.
      output_type: the index dtype, int32 or int64.

    Returns:
      A tensor of `output_type`: input's shape without `axis`.

    Raises:
      ValueError: if `axis` is out of range for a known rank.

    Example:
      >>> tf.compat.v1.argmin([[1, 5], [7, 2]], axis=1).numpy()
      array([0, 1])
    """
    axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return _arg(ArgMin, input, axis, output_type, name)

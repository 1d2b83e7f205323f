"""TopKV2 (`tf.math.top_k`) and TF's sort_ops built on it: `tf.sort`, `tf.argsort`.

TopKV2 is stable (equal values: lower index first), so `argsort` is stable in both directions:
ascending sorts negate the values (`-x - 1` for signed integers, `max - x` for unsigned ones,
as TF's `_ascending_sort`) and take the top k = the whole axis.
"""

from __future__ import annotations

import collections

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import sort_docs
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.arithmetic import negative, subtract
from ndflow.ops.array_core import int_input, shape, static_value
from ndflow.ops.array_transpose import transpose
from ndflow.ops.op_def import op_def


def _top_k_shape(ctx):
    x, k_shape = ctx.shapes
    if x.rank is not None and x.rank < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {x.rank}")
    if k_shape.rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {k_shape.rank}")
    k = static_value(ctx, 1)
    if k is not None:
        k = int(k)
        if k < 0:
            raise ValueError(f"Dimension size, given by scalar input 1, must be non-negative "
                             f"but is {k}")
    if x.rank is None:
        return [TensorShape(None)] * 2
    dims = x.as_list()
    if k is not None and dims[-1] is not None and dims[-1] < k:
        raise ValueError(f"input must have last dimension >= k = {k} but is {dims[-1]}")
    out = TensorShape(dims[:-1] + [k])
    return [out, out]


TopKV2 = op_def("TopKV2", inputs=["input: T", "k: Tk"],
                outputs=["values: T", "indices: index_type"],
                attrs=["sorted: bool = true", "T: realnumbertype",
                       "Tk: {int16, int32, int64} = DT_INT32",
                       "index_type: {int16, int32, int64} = DT_INT32"],
                shape=_top_k_shape)


@tf_export("math.top_k", "nn.top_k")
def top_k(input, k=1, sorted: bool = True, index_type=dtypes.int32,  # noqa: A002
          name: str | None = None) -> tuple:
    """`tf.math.top_k`: the `k` largest entries of the last axis and their indices (ties:
    the lower index first)."""
    out = apply_op(TopKV2, [input, int_input(k)],
                   {"sorted": bool(sorted), "index_type": dtypes.as_dtype(index_type)},
                   name=name or "TopKV2").outputs
    return TopKV2Result(out[0], out[1])


def _approx_top_k_shape(ctx):
    x = ctx.shapes[0]
    if x.rank is None:
        return [TensorShape(None)] * 2
    if x.rank < 1:
        raise ValueError("ApproxTopK: the input must have rank >= 1")
    dim = ctx.attrs["reduction_dimension"]
    if not -x.rank <= dim < x.rank:
        raise ValueError(f"Invalid reduction dimension {dim} for an input of rank {x.rank}")
    dims = x.as_list()
    dims[dim] = ctx.attrs["k"]
    return [TensorShape(dims)] * 2


ApproxTopK = op_def(
    "ApproxTopK", inputs=["input: T"], outputs=["values: T", "indices: int32"],
    attrs=["k: int >= 0", "reduction_dimension: int = -1", "recall_target: float = 0.95",
           "is_max_k: bool = true", "reduction_input_size_override: int = -1",
           "aggregate_to_topk: bool = true", "T: {half, bfloat16, float}"],
    shape=_approx_top_k_shape,
    doc="The k largest (or smallest) entries along a dimension. TPUs approximate them; "
        "ndflow, as TF's CPU kernel, gives the exact ones (recall 1).")


@tf_export("approx_top_k")
def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95,  # noqa: A002
                 is_max_k=True, reduction_input_size_override=-1, aggregate_to_topk=True,
                 name=None):
    """`tf.approx_top_k`: (values, indices) of the `k` largest (`is_max_k`) or smallest
    entries along `reduction_dimension`, exactly, sorted; ties take the lower index first."""
    out = apply_op(ApproxTopK, [input], {
        "k": int(k), "reduction_dimension": int(reduction_dimension),
        "recall_target": float(recall_target), "is_max_k": bool(is_max_k),
        "reduction_input_size_override": int(reduction_input_size_override),
        "aggregate_to_topk": bool(aggregate_to_topk)}, name=name or "ApproxTopK").outputs
    return ApproxTopKResult(out[0], out[1])


@tf_export("math.approx_max_k", "nn.approx_max_k")
def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """`tf.math.approx_max_k`: the `k` largest entries along `reduction_dimension`."""
    return approx_top_k(operand, k, reduction_dimension, recall_target, True,
                        reduction_input_size_override, aggregate_to_topk, name)


@tf_export("math.approx_min_k", "nn.approx_min_k")
def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """`tf.math.approx_min_k`: the `k` smallest entries along `reduction_dimension` (on any
    dimension; TF's CPU kernel has only max_k of the last one)."""
    return approx_top_k(operand, k, reduction_dimension, recall_target, False,
                        reduction_input_size_override, aggregate_to_topk, name)


# The (values, indices) namedtuples TF's wrappers return (`tf.function` outputs keep them).
TopKV2Result = collections.namedtuple("TopKV2", ["values", "indices"])
ApproxTopKResult = collections.namedtuple("ApproxTopK", ["values", "indices"])


# -- sort / argsort (TF's sort_ops) --------------------------------------------------------------

def _descending_sort(values, axis: int, return_argsort: bool):
    k = shape(values)[axis]
    static_rank = values.shape.rank
    if axis == -1 or (static_rank is not None and axis + 1 == static_rank):
        top_k_input, transposition = values, None
    else:
        if static_rank is None:
            raise NotImplementedError("tf.sort along a non-last axis needs a known rank")
        if axis < 0:
            axis += static_rank
        perm = np.r_[np.arange(axis), [static_rank - 1], np.arange(axis + 1, static_rank - 1),
                     [axis]].astype(np.int32)
        transposition = convert_to_tensor(perm, name="transposition")
        top_k_input = transpose(values, transposition)
    vals, indices = top_k(top_k_input, k)
    out = indices if return_argsort else vals
    if transposition is not None:
        out = transpose(out, transposition)
    return out


def _ascending_sort(values, axis: int, return_argsort: bool):
    dt = values.dtype
    if dt.is_unsigned:
        offset = convert_to_tensor(np.iinfo(dt.np_dtype).max, dt)
        out = _descending_sort(subtract(offset, values), axis, return_argsort)
        return out if return_argsort else subtract(offset, out)
    if dt.is_integer:
        one = convert_to_tensor(1, dt)
        out = _descending_sort(subtract(negative(values), one), axis, return_argsort)
        return out if return_argsort else subtract(negative(out), one)
    out = _descending_sort(negative(values), axis, return_argsort)
    return out if return_argsort else negative(out)


_SORT_IMPL = {"ASCENDING": _ascending_sort, "DESCENDING": _descending_sort}


def _sort_or_argsort(values, axis, direction: str, return_argsort: bool):
    if direction not in _SORT_IMPL:
        raise ValueError(f"Argument `direction` should be one of "
                         f"{', '.join(sorted(_SORT_IMPL))}. Received: direction={direction}")
    axis_t = convert_to_tensor(axis, dtype_hint=dtypes.int32, name="axis")
    axis_static = constant_value(axis_t)
    if axis_t.shape.rank not in (None, 0) or axis_static is None:
        raise ValueError(f"Argument `axis` must be a constant scalar. Received: axis={axis}.")
    values = convert_to_tensor(values, name="values")
    return _SORT_IMPL[direction](values, int(axis_static), return_argsort)


@tf_export("sort")
def sort(values, axis=-1, direction: str = "ASCENDING", name: str | None = None) -> Tensor:
    """`tf.sort`: `values` sorted along `axis`."""
    with name_scope(name or "sort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=False)


@tf_export("argsort")
def argsort(values, axis=-1, direction: str = "ASCENDING", stable: bool = False,
            name: str | None = None) -> Tensor:
    """`tf.argsort`: the int32 indices that sort `values` along `axis` (always stable)."""
    del stable  # TopKV2 is stable
    with name_scope(name or "argsort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=True)


__all__ = ["TopKV2", "top_k", "sort", "argsort", "ApproxTopK", "approx_top_k", "approx_max_k",
           "approx_min_k"]


# -- InTopKV2 --------------------------------------------------------------------------------------

def _in_top_k_shape(ctx):
    predictions, targets, k = ctx.shapes
    if predictions.rank not in (None, 2):
        raise ValueError(f"Shape must be rank 2 but is rank {predictions.rank}")
    if targets.rank not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {targets.rank}")
    if k.rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {k.rank}")
    rows = predictions.dims[0] if predictions.rank else None
    length = targets.dims[0] if targets.rank else None
    if rows is not None and length is not None and rows != length:
        if context.executing_eagerly():
            return [TensorShape([length])]  # the kernel reports it in TF's eager words
        raise ValueError(f"Dimensions must be equal, but are {rows} and {length}")
    return [TensorShape([rows if rows is not None else length])]


InTopKV2 = op_def("InTopKV2", inputs=["predictions: float", "targets: T", "k: T"],
                  outputs=["precision: bool"], attrs=["T: {int32, int64} = DT_INT32"],
                  shape=_in_top_k_shape, gradient_undefined=True)


@tf_export("math.in_top_k", "nn.in_top_k", v1=[])
def in_top_k(targets, predictions, k, name: str | None = None) -> Tensor:
    """`tf.math.in_top_k`: whether each target's prediction is among the row's `k` largest
    (ties count for the target; a non-finite prediction in the row or a target out of range
    gives False)."""
    targets = convert_to_tensor(targets, dtype_hint=dtypes.int32)
    k = convert_to_tensor(k, dtype=targets.dtype)
    return apply_op(InTopKV2, [convert_to_tensor(predictions, dtype=dtypes.float32), targets, k],
                    name=name).outputs[0]


@tf_export(v1=["math.in_top_k", "nn.in_top_k"])
def in_top_k_v1(predictions, targets, k, name: str | None = None) -> Tensor:
    """`tf.compat.v1.nn.in_top_k`: TF 1.x's argument order (predictions first)."""
    return in_top_k(targets, predictions, k, name=name)


attach(globals(), sort_docs.DOCS)

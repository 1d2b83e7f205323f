"""Array ops, part 4: GatherV2 (`tf.gather`), UnsortedSegmentSum, OneHot, Where."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.array_core import int_input, static_value
from ndflow.ops.op_def import op_def

# -- GatherV2 ------------------------------------------------------------------------------------


def _gather_shape(ctx):
    p, ind, ax = ctx.shapes
    batch_dims = ctx.attrs["batch_dims"]
    if p.rank is not None and p.rank < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {p.rank}")
    if ax.rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {ax.rank}")
    axis = static_value(ctx, 2)
    if axis is None:
        if p.rank is None or ind.rank is None:
            return [TensorShape(None)]
        return [TensorShape([None] * (p.rank + ind.rank - 1 - batch_dims))]
    axis = int(axis)
    if p.rank is None:
        return [TensorShape(None)]
    min_rank = -axis if axis < 0 else axis + 1
    if p.rank < min_rank:
        raise ValueError(f"Shape must be at least rank {min_rank} but is rank {p.rank}")
    axis += p.rank if axis < 0 else 0
    if ind.rank is None:
        return [TensorShape(None)]
    if batch_dims:
        if batch_dims > axis:
            raise ValueError(f"batch_dims ({batch_dims}) must be less than or equal to axis "
                             f"({axis}).")
        if batch_dims > ind.rank:
            raise ValueError(f"batch_dims ({batch_dims}) must be less than or equal to rank "
                             f"(indices) ({ind.rank}).")
    dims = p.as_list()
    return [TensorShape(dims[:axis] + ind.as_list()[batch_dims:] + dims[axis + 1:])]


GatherV2 = op_def("GatherV2", inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
                  outputs=["output: Tparams"],
                  attrs=["batch_dims: int = 0", "Tparams: type", "Tindices: {int16, int32, int64}",
                         "Taxis: {int32, int64}"], shape=_gather_shape)


def _gather_value(t):
    p, i, a = (constant_value(x) for x in t.op.inputs)
    if p is None or i is None or a is None or t.op.attrs["batch_dims"]:
        return None
    n = np.shape(p)[int(a)]
    if np.any((i < 0) | (i >= n)):
        return None
    return np.take(p, i, axis=int(a))


GatherV2.constant_value = _gather_value


def gather(params, indices, validate_indices=None, axis=None, batch_dims: int = 0,
           name: str | None = None) -> Tensor:
    """GatherV2 without batch dimensions (`tf.gather`, with them, is ops/gather_batch.py)."""
    if axis is None:
        axis = batch_dims
    if batch_dims:
        raise ValueError("array_gather.gather takes no batch_dims; use tf.gather")
    params = convert_to_tensor(params)
    return apply_op(GatherV2, [params, int_input(indices), int_input(axis)],
                    {"batch_dims": batch_dims}, name=name).outputs[0]


# -- UnsortedSegmentSum --------------------------------------------------------------------------

def _segment_sum_shape(ctx):
    d, ids, n = ctx.shapes
    if n.rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {n.rank}")
    num = static_value(ctx, 2)
    num = None if num is None else int(num)
    if d.rank is None or ids.rank is None:
        return [TensorShape(None)]
    if ids.rank > d.rank or not TensorShape(d.as_list()[:ids.rank]).is_compatible_with(ids):
        raise ValueError(f"Dimensions must be equal, but are {fmt(ids)} and {fmt(d)}: "
                         f"data.shape = {fmt(d)} does not start with segment_ids.shape = "
                         f"{fmt(ids)}")
    return [TensorShape([num] + d.as_list()[ids.rank:])]


UnsortedSegmentSum = op_def(
    "UnsortedSegmentSum", inputs=["data: T", "segment_ids: Tindices",
                                  "num_segments: Tnumsegments"],
    outputs=["output: T"],
    attrs=["T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, complex64, "
           "complex128}",
           "Tindices: {int16, int32, int64}", "Tnumsegments: {int32, int64} = DT_INT32"],
    shape=_segment_sum_shape)


def unsorted_segment_sum(data, segment_ids, num_segments, name: str | None = None) -> Tensor:
    """`tf.math.unsorted_segment_sum`: sums rows of `data` into `num_segments` buckets."""
    return apply_op(UnsortedSegmentSum, [data, segment_ids,
                                         convert_to_tensor(num_segments, dtype_hint=dtypes.int32)],
                    name=name).outputs[0]


# -- OneHot --------------------------------------------------------------------------------------

def _one_hot_shape(ctx):
    ind = ctx.shapes[0]
    axis = ctx.attrs["axis"]
    if axis < -1:
        raise ValueError("axis must be >= -1")
    for s in ctx.shapes[1:]:
        if s.rank not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {s.rank}")
    depth = static_value(ctx, 1)
    if depth is not None and int(depth) < 0:
        raise ValueError("Dimension size, given by scalar input 1, must be non-negative but "
                         f"is {int(depth)}")
    if ind.rank is None:
        return [TensorShape(None)]
    dims = ind.as_list()
    dims.insert(len(dims) if axis == -1 or axis > len(dims) else axis,
                None if depth is None else int(depth))
    return [TensorShape(dims)]


OneHot = op_def("OneHot", inputs=["indices: TI", "depth: int32", "on_value: T",
                                  "off_value: T"],
                outputs=["output: T"],
                attrs=["axis: int = -1", "T: type", "TI: {uint8, int8, int32, int64} = DT_INT64"],
                shape=_one_hot_shape, not_differentiable=True)


@tf_export("one_hot")
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None,
            name: str | None = None) -> Tensor:
    """`tf.one_hot`: `on_value` where the last (or `axis`) index equals `indices`."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    # TF's scope: the op is `one_hot`, its values `one_hot/on_value`, `one_hot/depth`, ...
    with name_scope(name, "one_hot") as scope:
        on = None if on_value is None else convert_to_tensor(on_value, dtype_hint=dtype,
                                                             name="on_value")
        off = None if off_value is None else convert_to_tensor(off_value, dtype_hint=dtype,
                                                               name="off_value")
        given = [t for t in (on, off) if t is not None]
        if dtype is not None:
            for label, t in (("on_value", on), ("off_value", off)):
                if t is not None and t.dtype is not dtype:
                    raise TypeError(f"dtype {t.dtype!r} of {label} does not match dtype "
                                    f"parameter {dtype!r}")
        else:
            dtype = given[0].dtype if given else dtypes.float32
        on = convert_to_tensor(1, dtype, name="on_value") if on is None else on
        off = convert_to_tensor(0, dtype, name="off_value") if off is None else off
        if on.dtype is not off.dtype:
            raise TypeError(f"dtype {on.dtype!r} of on_value does not match dtype "
                            f"{off.dtype!r} of off_value")
        return apply_op(OneHot, [indices, int_input(depth), on, off],
                        {"axis": -1 if axis is None else axis}, name=scope).outputs[0]


# -- Where (one-argument tf.where) ---------------------------------------------------------------

Where = op_def("Where", inputs=["input: T"], outputs=["index: int64"],
               attrs=["T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, "
                      "bool} = DT_BOOL"],
               shape=lambda ctx: [TensorShape([None, ctx.shapes[0].rank])
                                  if ctx.shapes[0].rank is not None else TensorShape(None)],
               gradient_undefined=True)


def where(condition, name: str | None = None) -> Tensor:
    """`tf.where(condition)`: the coordinates of the true (non-zero) elements, int64."""
    return apply_op(Where, [condition], name=name).outputs[0]

"""Array ops: Split and SplitV (`tf.split`), with TF's shape rules (gradients: array_grad.py)."""

from __future__ import annotations

import numbers

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import int_input, static_value
from ndflow.ops.op_def import op_def


def _split_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"Dimension size, given by scalar input {axis} must be in range "
                         f"[-{rank}, {rank})")
    return axis + rank if axis < 0 else axis


def _axis_and_dims(ctx, axis_input: int, value):
    """(the split axis, value's dims) where both are known; else (None, the shape of every
    output: unknown, or of value's rank)."""
    axis = static_value(ctx, axis_input)
    if value.rank is None:
        return None, TensorShape(None)
    if axis is None:
        return None, TensorShape([None] * value.rank)
    return _split_axis(int(axis), value.rank), value.as_list()


def _split_shape(ctx):
    dim_shape, value = ctx.shapes
    n = ctx.attrs["num_split"]
    if dim_shape.rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {dim_shape.rank}")
    axis, dims = _axis_and_dims(ctx, 0, value)
    if axis is None:
        return [dims] * n
    size = dims[axis]
    if size is not None:
        if size % n:
            raise ValueError(f"Dimension size must be evenly divisible by {n} but is {size}\n\t"
                             "Number of ways to split should evenly divide the split dimension")
        size //= n
    return [TensorShape(dims[:axis] + [size] + dims[axis + 1:])] * n


Split = op_def("Split", inputs=["split_dim: int32", "value: T"], outputs=["output: num_split * T"],
               attrs=["num_split: int >= 1", "T: type"], shape=_split_shape)


def _split_v_sizes(sizes: list, total: int | None) -> list:
    """TF's SplitV shape rule for the constant `size_splits` (one -1 inferred)."""
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) > 1:
        raise ValueError("size_splits can only have one -1")
    if total is None:
        return [None if s == -1 else s for s in sizes]
    known = sum(s for s in sizes if s != -1)
    if unknown:
        sizes = list(sizes)
        sizes[unknown[0]] = total - known
    for i, s in enumerate(sizes):
        if s < 0:
            raise ValueError(f"Split size at index {i} must be >= 0. Got: {s}")
    if sum(sizes) != total:
        raise ValueError(f"can't split axis of size {total} into pieces of size "
                         f"[{','.join(map(str, sizes))}]")
    return sizes


def _split_v_shape(ctx):
    value, sizes_shape, dim_shape = ctx.shapes
    n = ctx.attrs["num_split"]
    if dim_shape.rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {dim_shape.rank}")
    if sizes_shape.rank not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {sizes_shape.rank}")
    if sizes_shape.rank == 1 and sizes_shape[0] not in (None, n):
        raise ValueError(f"Length of size_splits should be equal to num_outputs: "
                         f"{sizes_shape[0]} vs. {n}")
    axis, dims = _axis_and_dims(ctx, 2, value)
    if axis is None:
        return [dims] * n
    sizes = static_value(ctx, 1)
    if sizes is None:
        return [TensorShape(dims[:axis] + [None] + dims[axis + 1:])] * n
    sizes = _split_v_sizes([int(s) for s in np.asarray(sizes).reshape(-1)], dims[axis])
    return [TensorShape(dims[:axis] + [s] + dims[axis + 1:]) for s in sizes]


SplitV = op_def("SplitV", inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
                outputs=["output: num_split * T"],
                attrs=["num_split: int >= 1", "T: type", "Tlen: {int8, int32, int64} = DT_INT64"],
                shape=_split_v_shape)


@tf_export("split")
def split(value, num_or_size_splits, axis=0, num: int | None = None,
          name: str = "split") -> list:
    """`tf.split`: `num_or_size_splits` equal pieces (Split) or pieces of the given sizes, one
    of which may be -1 (SplitV), along `axis`."""
    if isinstance(num_or_size_splits, numbers.Integral) and \
            not isinstance(num_or_size_splits, bool):
        out = apply_op(Split, [int_input(axis), value],
                       {"num_split": int(num_or_size_splits)}, name=name).outputs
        return list(out)
    size_splits = convert_to_tensor(num_or_size_splits, dtype_hint=dtypes.int32)
    if size_splits.shape.rank == 0:
        raise ValueError("Rank-0 tensors are not supported as the num_or_size_splits argument "
                         f"to split. Argument provided: {num_or_size_splits}")
    if num is None:
        if size_splits.shape.rank is not None:
            num = size_splits.shape[0]
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {num_or_size_splits}")
    return list(apply_op(SplitV, [value, size_splits, int_input(axis)], {"num_split": num},
                         name=name).outputs)


__all__ = ["Split", "SplitV", "split"]

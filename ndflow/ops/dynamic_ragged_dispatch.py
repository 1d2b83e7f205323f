"""TensorFlow's dispatch of shape APIs to ragged shapes: `tf.shape(ragged)` is a
`tf.experimental.DynamicRaggedShape`, and `tf.ones`/`tf.zeros`/`tf.fill`/`tf.reshape`/
`tf.broadcast_to` given one build (ragged) tensors of that shape (TF's
ragged_array_ops.py overrides; here their public objects are replaced in the export
declarations before the namespaces are built, as ragged_dispatch.py does).

`broadcast_to(x, shape)` tiles a dense `x`, or a ragged `x` whose row partitions are the
shape's outer ones, across the shape's ragged and uniform dimensions: every value of the
result is looked up in `x` by its coordinates along each axis (0 where `x` has length 1).
"""

from __future__ import annotations

import functools

from ndflow.core import dtypes
from ndflow.core.api_export import EXPORTS
from ndflow.ops import check_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import reshape, stack
from ndflow.ops.array_fill import broadcast_to, fill, ones, zeros
from ndflow.ops.array_gather import gather
from ndflow.ops.array_nd import gather_nd
from ndflow.ops.array_range import range as range_op
from ndflow.ops.cast import cast
from ndflow.ops.dynamic_ragged_shape import DynamicRaggedShape
from ndflow.ops.ragged_factory import _checked
from ndflow.ops.ragged_tensor import RaggedTensor


def _arg(args, kwargs, i: int, name: str):
    return args[i] if len(args) > i else kwargs.get(name)


def _override(path: str, *params: tuple):
    """Decorator: the public object at `path` calls `target` instead when one of `params`
    ((position, name, type) of its arguments) is of that type. One isinstance check per
    parameter on the plain path: these APIs are hot."""
    api = next(e.obj for e in EXPORTS if path in e.v2)

    def decorate(target):
        @functools.wraps(api)
        def dispatching(*args, **kwargs):
            for i, name, t in params:
                if isinstance(_arg(args, kwargs, i, name), t):
                    return target(*args, **kwargs)
            return api(*args, **kwargs)

        for k, e in enumerate(EXPORTS):
            if e.obj is api:
                EXPORTS[k] = e.replaced(dispatching)
        return target
    return decorate


@_override("shape", (0, "input", RaggedTensor))
def ragged_shape(input, out_type=None, name=None):  # noqa: A002 - TF's parameter name
    """`tf.shape` of a RaggedTensor: its DynamicRaggedShape."""
    return DynamicRaggedShape.from_tensor(input, out_type or dtypes.int32)


@_override("ones", (0, "shape", DynamicRaggedShape))
def ragged_ones(shape, dtype=dtypes.float32, name=None, layout=None):
    return shape._add_row_partitions(ones(shape.inner_shape, dtype=dtype, name=name))


@_override("zeros", (0, "shape", DynamicRaggedShape))
def ragged_zeros(shape, dtype=dtypes.float32, name=None, layout=None):
    return shape._add_row_partitions(zeros(shape.inner_shape, dtype=dtype, name=name))


@_override("fill", (0, "dims", DynamicRaggedShape))
def ragged_fill(dims, value, name=None, layout=None):
    return dims._add_row_partitions(fill(dims.inner_shape, value, name=name))


@_override("reshape", (0, "tensor", RaggedTensor), (1, "shape", DynamicRaggedShape))
def ragged_reshape(tensor, shape, name=None):
    """The values of `tensor` (row-major) in `shape` (dense or ragged)."""
    flat = tensor.flat_values if isinstance(tensor, RaggedTensor) else tensor
    if isinstance(shape, DynamicRaggedShape):
        return shape._add_row_partitions(reshape(flat, shape.inner_shape, name=name))
    return reshape(flat, shape, name=name)


@_override("broadcast_to", (1, "shape", DynamicRaggedShape))
def ragged_broadcast_to(input, shape, name=None):  # noqa: A002 - TF's parameter name
    """`input` (dense, or ragged with `shape`'s outer row partitions) tiled to `shape`."""
    if not isinstance(shape, DynamicRaggedShape):
        return broadcast_to(input, shape, name=name)
    rps = shape.row_partitions
    if isinstance(input, RaggedTensor):
        start, x = _aligned_ragged(input, shape)
    else:
        start, x = 0, convert_to_tensor(input)
        rank = shape.rank
        if x.shape.rank is None or rank is None or x.shape.rank > rank:
            raise ValueError(f"Cannot broadcast a tensor of shape {x.shape} to "
                             f"{shape}")
        if x.shape.rank < rank:
            x = reshape(x, [1] * (rank - x.shape.rank) + x.shape.as_list())
    if not rps:
        return broadcast_to(x, shape.inner_shape, name=name)
    p = len(rps)
    if start == p:
        return shape._add_row_partitions(broadcast_to(x, shape.inner_shape))
    dims = x.shape.as_list()
    idx = range_op(rps[-1].nvals(), dtype=shape.dtype)
    coords = {}
    for level in range(p, start, -1):     # axis `level`: the position within its row
        coords[level] = gather(rps[level - 1].offsets_in_rows(), idx)
        idx = gather(rps[level - 1].value_rowids(), idx)
    coords[start] = idx
    for level in range(start, p + 1):
        if level == start and start > 0:
            continue    # the ragged operand's own values: already aligned
        if dims[level - start] == 1:
            coords[level] = coords[level] * 0
        elif level > 0 and not shape.is_uniform(level):
            raise ValueError(f"Cannot broadcast a tensor of shape {x.shape} to {shape}: "
                             f"axis {level} is ragged in the target")
    picked = gather_nd(x, stack([coords[a] for a in range(start, p + 1)], axis=-1))
    return shape._add_row_partitions(broadcast_to(picked, shape.inner_shape))


def _aligned_ragged(rt: RaggedTensor, shape: DynamicRaggedShape) -> tuple:
    """(how many of `shape`'s row partitions `rt` has, its flat values): its partitions must
    describe the same rows as those (checked at run time)."""
    k = rt.ragged_rank
    if rt.shape.rank != shape.rank or k > shape.num_row_partitions:
        raise ValueError(f"ndflow broadcasts a RaggedTensor (rank {rt.shape.rank}, "
                         f"ragged_rank {k}) only to a shape of the same rank and at least "
                         f"as many row partitions, not to {shape}")
    checks, level = [], rt
    for rp in shape.row_partitions[:k]:
        splits = level.row_splits
        splits = splits if splits.dtype is rp.dtype else cast(splits, rp.dtype)
        checks.append(check_ops.assert_equal(splits, rp.row_splits(),
                                             message="Cannot broadcast"))
        level = level.values
    return k, _checked(rt.flat_values, checks)

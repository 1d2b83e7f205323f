"""Moving data between space and depth/batch: DepthToSpace, SpaceToDepth (NHWC / NCHW),
SpaceToBatchND and BatchToSpaceND.

`tf.nn.depth_to_space` rearranges blocks of depth into block_size x block_size spatial
blocks; `tf.space_to_batch_nd` zero-pads the M spatial dims after the batch and moves
block_shape blocks of them into the batch. Each op's inverse is its gradient.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import array_space_docs
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.arithmetic import floormod
from ndflow.ops.array_core import stack
from ndflow.ops.array_fill import zeros, zeros_like
from ndflow.ops.nn_common import check_rank, spatial_dims
from ndflow.ops.op_def import op_def

_SPACE_ATTRS = ["T: type", "block_size: int >= 2",
                "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"]


def _divisible(d, by: int):
    if d is None:
        return None
    if d % by:
        raise ValueError(f"Dimension size must be evenly divisible by {by} but is {d}")
    return d // by


def _mul(d, by: int):
    return None if d is None else d * by


def _block_shape(spatial, channels):
    """The shape function of SpaceToDepth (spatial sizes divided by the block size, channels
    multiplied by its square) or DepthToSpace (the other way), by the two size maps."""
    def shape(ctx):
        x = check_rank(ctx.shapes[0], 4)
        bs = ctx.attrs["block_size"]
        h, w, c = spatial_dims(ctx.attrs["data_format"])
        dims = [None] * 4
        dims[0], dims[h], dims[w], dims[c] = x[0], spatial(x[h], bs), spatial(x[w], bs), \
            channels(x[c], bs * bs)
        return [dims]
    return shape


SpaceToDepth = op_def("SpaceToDepth", inputs=["input: T"], outputs=["output: T"],
                      attrs=_SPACE_ATTRS, shape=_block_shape(_divisible, _mul))
DepthToSpace = op_def("DepthToSpace", inputs=["input: T"], outputs=["output: T"],
                      attrs=_SPACE_ATTRS, shape=_block_shape(_mul, _divisible))


def _space_op(op_def_, input, block_size, data_format, name):  # noqa: A002
    x = convert_to_tensor(input, name="input")
    return apply_op(op_def_, [x], {"block_size": int(block_size),
                                   "data_format": data_format or "NHWC"},
                    name=name).outputs[0]


def _space_functions(op_def_, public: str):
    """tf.nn.<public> (space_to_depth, depth_to_space) and its TF1 spelling, whose argument
    order puts `name` before `data_format` (array_space_docs documents both)."""
    def space(input, block_size: int, data_format: str = "NHWC",  # noqa: A002
              name: str | None = None) -> Tensor:
        return _space_op(op_def_, input, block_size, data_format, name)

    def space_v1(input, block_size: int, name: str | None = None,  # noqa: A002
                 data_format: str = "NHWC") -> Tensor:
        return _space_op(op_def_, input, block_size, data_format, name)
    space.__name__ = space.__qualname__ = public
    space_v1.__name__ = space_v1.__qualname__ = f"{public}_v1"
    return (tf_export(f"nn.{public}", v1=[])(space),
            tf_export(v1=[public, f"nn.{public}"])(space_v1))


depth_to_space, depth_to_space_v1 = _space_functions(DepthToSpace, "depth_to_space")
space_to_depth, space_to_depth_v1 = _space_functions(SpaceToDepth, "space_to_depth")


# -- SpaceToBatchND / BatchToSpaceND ---------------------------------------------------------------


def _block_and_pads(ctx, pads_name: str):
    """(M, block values or None, paddings/crops values or None) with TF's static checks."""
    bshape, pshape = ctx.shapes[1], ctx.shapes[2]
    if bshape.rank is not None and bshape.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {bshape.rank}")
    if pshape.rank is not None and pshape.rank != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {pshape.rank}")
    m = bshape[0] if bshape.rank is not None else None
    if pshape.rank is not None:
        pm, two = pshape[0], pshape[1]
        if two is not None and two != 2:
            raise ValueError(f"Dimension must be 2 but is {two}")
        if m is not None and pm is not None and pm != m:
            raise ValueError(f"Dimension 0 in both shapes must be equal, but are {pm} and {m}. "
                             f"Shapes are [{pm},2] and [{m},2].")
        m = m if m is not None else pm
    block = ctx.value(1)
    pads = ctx.value(2)
    if block is not None:
        block = [int(b) for b in np.asarray(block).reshape(-1)]
        for i, b in enumerate(block):
            if b < 1:
                raise ValueError(f"block_shape must be positive, but is {b} at index {i}")
    if pads is not None:
        pads = np.asarray(pads).reshape(-1, 2).astype(np.int64).tolist()
        if any(p < 0 for pair in pads for p in pair):
            raise ValueError(f"{pads_name} cannot be negative")
    return m, block, pads


def _input_dims(ctx, m):
    x = ctx.shapes[0]
    if x.rank is None:
        return None
    if m is not None and x.rank < m + 1:
        raise ValueError(f"Shape must be at least rank {m + 1} but is rank {x.rank}")
    return x.as_list()


def _known_dims(ctx, pads_name: str):
    """(M, block, paddings/crops, input dims, output dims with the trailing ones set), or None
    where the input's rank or M is unknown."""
    m, block, pads = _block_and_pads(ctx, pads_name)
    dims = _input_dims(ctx, m)
    if dims is None or m is None:
        return None
    out = [None] * len(dims)
    out[m + 1:] = dims[m + 1:]
    return m, block, pads, dims, out


def _space_to_batch_shape(ctx):
    known = _known_dims(ctx, "paddings")
    if known is None:
        return [TensorShape(None)]
    m, block, pads, dims, out = known
    if block is not None:
        out[0] = None if dims[0] is None else dims[0] * int(np.prod(block))
        for i in range(m):
            d = dims[i + 1]
            if pads is not None and d is not None:
                out[i + 1] = _divisible(d + pads[i][0] + pads[i][1], block[i])
    return [TensorShape(out)]


def _batch_to_space_shape(ctx):
    known = _known_dims(ctx, "crops")
    if known is None:
        return [TensorShape(None)]
    m, block, crops, dims, out = known
    if block is not None:
        batch = dims[0]
        for b in block:  # TF divides by one block size at a time
            batch = _divisible(batch, b)
        out[0] = batch
        for i in range(m):
            d = dims[i + 1]
            if crops is not None and d is not None:
                size, crop = d * block[i], crops[i][0] + crops[i][1]
                if size < crop:
                    raise ValueError(f"Negative dimension size caused by subtracting {crop} "
                                     f"from {size}")
                out[i + 1] = size - crop
    return [TensorShape(out)]


_ND_ATTRS = ["T: type", "Tblock_shape: {int32, int64} = DT_INT32"]
SpaceToBatchND = op_def(
    "SpaceToBatchND", inputs=["input: T", "block_shape: Tblock_shape", "paddings: Tpaddings"],
    outputs=["output: T"], attrs=[*_ND_ATTRS, "Tpaddings: {int32, int64} = DT_INT32"],
    shape=_space_to_batch_shape)
BatchToSpaceND = op_def(
    "BatchToSpaceND", inputs=["input: T", "block_shape: Tblock_shape", "crops: Tcrops"],
    outputs=["output: T"], attrs=[*_ND_ATTRS, "Tcrops: {int32, int64} = DT_INT32"],
    shape=_batch_to_space_shape)


def _int_arg(v, name: str):
    if isinstance(v, Tensor):
        return v
    a = np.asarray(v)
    return convert_to_tensor(a if a.dtype.kind in "iu" else a.astype(np.int32),
                             dtypes.int64 if a.dtype == np.int64 else dtypes.int32, name=name)


@tf_export("space_to_batch_nd", v1=["space_to_batch_nd", "manip.space_to_batch_nd"])
def space_to_batch_nd(input, block_shape, paddings, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.space_to_batch_nd`: zero-pads the spatial dims, then moves block_shape blocks of
    them into the batch dim."""
    x = convert_to_tensor(input, name="input")
    return apply_op(SpaceToBatchND, [x, _int_arg(block_shape, "block_shape"),
                                     _int_arg(paddings, "paddings")], name=name).outputs[0]


@tf_export(v1=["batch_to_space_nd", "manip.batch_to_space_nd"])
def batch_to_space_nd(input, block_shape, crops, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.compat.v1.batch_to_space_nd`: the inverse of space_to_batch_nd, then crops."""
    x = convert_to_tensor(input, name="input")
    return apply_op(BatchToSpaceND, [x, _int_arg(block_shape, "block_shape"),
                                     _int_arg(crops, "crops")], name=name).outputs[0]


@tf_export("space_to_batch", "nn.space_to_batch", v1=[])
def space_to_batch(input, block_shape, paddings, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.space_to_batch` (TF2): SpaceToBatchND."""
    return space_to_batch_nd(input, block_shape, paddings, name)


@tf_export(v1=["space_to_batch", "nn.space_to_batch"])
def space_to_batch_v1(input, paddings, block_size=None, name: str | None = None,  # noqa: A002
                      block_shape=None) -> Tensor:
    """`tf.compat.v1.space_to_batch`: SpaceToBatchND over 2 spatial dims, square blocks."""
    block_size = deprecated_argument_lookup("block_shape", block_shape, "block_size",
                                            block_size)
    return space_to_batch_nd(input, np.array([block_size, block_size], np.int64), paddings,
                             name)


@tf_export("batch_to_space", v1=[])
def batch_to_space(input, block_shape, crops, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.batch_to_space` (TF2): BatchToSpaceND; an int block_shape means square blocks."""
    if isinstance(block_shape, (int, np.integer)):
        block_shape = np.array([block_shape, block_shape], np.int64)
    return batch_to_space_nd(input, block_shape, crops, name)


@tf_export(v1=["batch_to_space"])
def batch_to_space_v1(input, crops, block_size=None, name: str | None = None,  # noqa: A002
                      block_shape=None) -> Tensor:
    """`tf.compat.v1.batch_to_space`: BatchToSpaceND over 2 spatial dims, square blocks."""
    block_size = deprecated_argument_lookup("block_shape", block_shape, "block_size",
                                            block_size)
    return batch_to_space_nd(input, np.array([block_size, block_size], np.int64), crops, name)


@tf_export("required_space_to_batch_paddings")
def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None,
                                     name: str | None = None) -> tuple:
    """`tf.required_space_to_batch_paddings`: (paddings, crops) making each padded spatial
    dim a multiple of its block size (extra padding at the end, cropped back by crops)."""
    with name_scope(name, "required_space_to_batch_paddings"):
        input_shape = convert_to_tensor(input_shape, dtypes.int32, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtypes.int32, name="block_shape")
        if block_shape.shape.rank != 1 or block_shape.shape[0] is None:
            raise ValueError(f"Shape {block_shape.shape} must be fully defined with rank 1")
        m = block_shape.shape[0]
        if m == 0:
            return zeros([0, 2], dtypes.int32), zeros([0, 2], dtypes.int32)
        if not input_shape.shape.is_compatible_with([m]):
            raise ValueError(f"Shapes {input_shape.shape} and ({m},) are incompatible")
        if base_paddings is not None:
            base_paddings = convert_to_tensor(base_paddings, dtypes.int32, name="base_paddings")
            if not base_paddings.shape.is_compatible_with([m, 2]):
                raise ValueError(f"Shapes {base_paddings.shape} and ({m}, 2) are incompatible")
        else:
            base_paddings = zeros([m, 2], dtypes.int32)
        consts = [constant_value(t) for t in (block_shape, input_shape, base_paddings)]
        if all(c is not None for c in consts):
            block, size, base = (np.asarray(c, np.int32) for c in consts)
            extra = (block - (size + base[:, 0] + base[:, 1]) % block) % block
            paddings = np.stack([base[:, 0], base[:, 1] + extra], 1)
            crops = np.stack([np.zeros_like(extra), extra], 1)
            return (convert_to_tensor(paddings, dtypes.int32, name="paddings"),
                    convert_to_tensor(crops, dtypes.int32, name="crops"))
        start, end = base_paddings[:, 0], base_paddings[:, 1]
        full = input_shape + start + end
        extra = floormod(block_shape - floormod(full, block_shape), block_shape)
        paddings = stack([start, end + extra], axis=1, name="paddings")
        crops = stack([zeros_like(extra), extra], axis=1, name="crops")
        return paddings, crops


attach(globals(), array_space_docs.DOCS)

"""Moving data between space and depth/batch: DepthToSpace, SpaceToDepth (NHWC / NCHW).

`tf.nn.depth_to_space` rearranges blocks of depth into block_size x block_size spatial
blocks; SpaceToDepth is its inverse, and each op's gradient is the other one.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
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


def _space_to_depth_shape(ctx):
    x = check_rank(ctx.shapes[0], 4)
    bs = ctx.attrs["block_size"]
    h, w, c = spatial_dims(ctx.attrs["data_format"])
    dims = [None] * 4
    dims[0], dims[h], dims[w], dims[c] = x[0], _divisible(x[h], bs), _divisible(x[w], bs), \
        _mul(x[c], bs * bs)
    return [dims]


def _depth_to_space_shape(ctx):
    x = check_rank(ctx.shapes[0], 4)
    bs = ctx.attrs["block_size"]
    h, w, c = spatial_dims(ctx.attrs["data_format"])
    dims = [None] * 4
    dims[0], dims[h], dims[w], dims[c] = x[0], _mul(x[h], bs), _mul(x[w], bs), \
        _divisible(x[c], bs * bs)
    return [dims]


SpaceToDepth = op_def("SpaceToDepth", inputs=["input: T"], outputs=["output: T"],
                      attrs=_SPACE_ATTRS, shape=_space_to_depth_shape)
DepthToSpace = op_def("DepthToSpace", inputs=["input: T"], outputs=["output: T"],
                      attrs=_SPACE_ATTRS, shape=_depth_to_space_shape)


def _space_op(op_def_, input, block_size, data_format, name):  # noqa: A002
    x = convert_to_tensor(input, name="input")
    return apply_op(op_def_, [x], {"block_size": int(block_size),
                                   "data_format": data_format or "NHWC"},
                    name=name).outputs[0]


@tf_export("nn.depth_to_space", v1=[])
def depth_to_space(input, block_size: int, data_format: str = "NHWC",  # noqa: A002
                   name: str | None = None) -> Tensor:
    """`tf.nn.depth_to_space`: [b, h, w, c] -> [b, h * bs, w * bs, c / bs**2]."""
    return _space_op(DepthToSpace, input, block_size, data_format, name)


@tf_export(v1=["depth_to_space", "nn.depth_to_space"])
def depth_to_space_v1(input, block_size: int, name: str | None = None,  # noqa: A002
                      data_format: str = "NHWC") -> Tensor:
    """`tf.compat.v1.depth_to_space`."""
    return _space_op(DepthToSpace, input, block_size, data_format, name)


@tf_export("nn.space_to_depth", v1=[])
def space_to_depth(input, block_size: int, data_format: str = "NHWC",  # noqa: A002
                   name: str | None = None) -> Tensor:
    """`tf.nn.space_to_depth`: [b, h, w, c] -> [b, h / bs, w / bs, c * bs**2]."""
    return _space_op(SpaceToDepth, input, block_size, data_format, name)


@tf_export(v1=["space_to_depth", "nn.space_to_depth"])
def space_to_depth_v1(input, block_size: int, name: str | None = None,  # noqa: A002
                      data_format: str = "NHWC") -> Tensor:
    """`tf.compat.v1.space_to_depth`."""
    return _space_op(SpaceToDepth, input, block_size, data_format, name)

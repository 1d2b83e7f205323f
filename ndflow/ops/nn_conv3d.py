"""3-D convolution: Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2 (NDHWC / NCDHW).

Attrs are TF's (strides/dilations 5-lists in data_format order, padding SAME/VALID); the
gradients (nn_conv3d_grad.py) follow TF's nn_grad.py, so a backward graph holds the
backprop ops as TensorFlow's does. Deviation from TF: dilations > 1 run on the CPU too (TF's
CPU kernel refuses them).
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.nn_common import (
    check_rank,
    conv_transpose_v1,
    scoped_op_name,
    seq_attr,
    windowed_output_size,
)
from ndflow.ops.op_def import op_def

FLOAT_T = "T: {half, bfloat16, float, double}"
DATA_FORMAT_3D = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'"
PADDING_3D = "padding: {'SAME', 'VALID'}"
_ATTRS = CONV3D_ATTRS = [FLOAT_T, "strides: list(int)", PADDING_3D, DATA_FORMAT_3D,
                         "dilations: list(int) = [1, 1, 1, 1, 1]"]


def spatial_3d(data_format: str) -> tuple[list[int], int]:
    """([D, H, W] indices, C index) of a 5-D tensor in `data_format`."""
    return ([1, 2, 3], 4) if data_format == "NDHWC" else ([2, 3, 4], 1)


def check_list_attr(op: str, name: str, values, n: int = 5) -> None:
    if len(values) < n:
        raise ValueError(f"Attr '{name}' of '{op}' Op passed list of length {len(values)} less "
                         f"than minimum {n}.")


def window_shape_3d(ctx, x: TensorShape, ksize, strides, dilations, out_channels) -> TensorShape:
    """The 5-D output shape of a 3-D window op over `x`; dims may be None."""
    sp, c = spatial_3d(ctx.attrs["data_format"])
    dims = [None] * 5
    dims[0], dims[c] = x[0], out_channels
    for i, d in enumerate(sp):
        dims[d] = windowed_output_size(x[d], ksize[i], int(strides[d]), int(dilations[d]),
                                       ctx.attrs["padding"])[0]
    return TensorShape(dims)


def _conv3d_shape(ctx):
    x = check_rank(ctx.shapes[0], 5)
    f = check_rank(ctx.shapes[1], 5)
    for attr in ("strides", "dilations"):
        check_list_attr(ctx.op_type, attr, ctx.attrs[attr])
    _, c = spatial_3d(ctx.attrs["data_format"])
    depth, f_depth = x[c], f[3]
    if depth is not None and f_depth is not None:
        if f_depth == 0 or depth % f_depth:
            raise ValueError(f"Depth of input ({depth}) is not a multiple of input depth of "
                             f"filter ({f_depth})")
        if f[4] is not None and f[4] % (depth // f_depth):
            raise ValueError(f"Depth of output ({f[4]}) is not a multiple of the number of "
                             f"groups ({depth // f_depth})")
    return [window_shape_3d(ctx, x, [f[0], f[1], f[2]], ctx.attrs["strides"],
                            ctx.attrs["dilations"], f[4])]


def sizes_shape(index: int, rank: int = 5):
    """Shape fn of an op whose output shape is its `index` input's value."""
    def shape_fn(ctx):
        for attr in ("strides", "ksize", "dilations"):
            if attr in ctx.attrs:
                check_list_attr(ctx.op_type, attr, ctx.attrs[attr], rank)
        v = ctx.value(index)
        if v is not None:
            v = np.asarray(v).reshape(-1)
            if v.size != rank:
                raise ValueError(f"Shape must be rank {rank} but is rank {v.size}")
            return [TensorShape([int(d) for d in v])]
        return [TensorShape([None] * rank)]
    return shape_fn


Conv3D = op_def("Conv3D", inputs=["input: T", "filter: T"], outputs=["output: T"],
                attrs=_ATTRS, shape=_conv3d_shape)
Conv3DBackpropInputV2 = op_def(
    "Conv3DBackpropInputV2", inputs=["input_sizes: Tshape", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=[*_ATTRS, "Tshape: {int32, int64} = DT_INT32"],
    shape=sizes_shape(0))
Conv3DBackpropFilterV2 = op_def(
    "Conv3DBackpropFilterV2", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"], attrs=_ATTRS, shape=sizes_shape(1))


def conv3d_attrs(strides, padding, data_format, dilations) -> dict:
    return {"strides": [int(s) for s in strides], "padding": padding,
            "data_format": data_format or "NDHWC",
            "dilations": [int(d) for d in (dilations or [1, 1, 1, 1, 1])]}


def _list(value, what: str, op: str = "conv3d") -> list:
    if not isinstance(value, (list, tuple)) and not hasattr(value, "tolist"):
        raise TypeError(f"Expected list for '{what}' argument to '{op}' Op, not {value}.")
    return list(value.tolist() if hasattr(value, "tolist") else value)


@tf_export("nn.conv3d", v1=[])
def conv3d(input, filters, strides, padding, data_format: str = "NDHWC",  # noqa: A002
           dilations=None, name: str | None = None) -> Tensor:
    """`tf.nn.conv3d`: 3-D convolution of NDHWC/NCDHW `input` with DHWIO `filters`."""
    x = convert_to_tensor(input, name="input")
    f = convert_to_tensor(filters, dtype=x.dtype, name="filter")
    dil = None if dilations is None else _list(dilations, "dilations")
    attrs = conv3d_attrs(_list(strides, "strides"), padding, data_format, dil)
    return apply_op(Conv3D, [x, f], attrs, name=name or "Conv3D").outputs[0]


@tf_export(v1=["nn.conv3d"])
def conv3d_v1(input, filter=None, strides=None, padding=None,  # noqa: A002
              data_format: str = "NDHWC", dilations=(1, 1, 1, 1, 1), name: str | None = None,
              filters=None) -> Tensor:
    """`tf.compat.v1.nn.conv3d` (`filter=`; `filters` is TF2's name)."""
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)  # noqa: A001
    return conv3d(input, filter, strides, padding, data_format, dilations, name)


@tf_export(v1=["nn.conv3d_backprop_filter", "nn.conv3d_backprop_filter_v2"])
def conv3d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           data_format: str = "NDHWC", dilations=(1, 1, 1, 1, 1),
                           name: str | None = None) -> Tensor:
    """The raw Conv3DBackpropFilterV2 op."""
    sizes = convert_to_tensor(filter_sizes, dtypes.int32)
    return apply_op(Conv3DBackpropFilterV2, [input, sizes, out_backprop],
                    conv3d_attrs(strides, padding, data_format, dilations), name=name).outputs[0]


def conv3d_backprop_input(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                          data_format: str = "NDHWC", dilations=(1, 1, 1, 1, 1),
                          name: str | None = None) -> Tensor:
    """The raw Conv3DBackpropInputV2 op (`tf.raw_ops.Conv3DBackpropInputV2`)."""
    sizes = input_sizes if isinstance(input_sizes, Tensor) else \
        convert_to_tensor(input_sizes, dtypes.int32)
    return apply_op(Conv3DBackpropInputV2, [sizes, filter, out_backprop],
                    conv3d_attrs(strides, padding, data_format, dilations), name=name).outputs[0]


def _cidx(data_format: str) -> int:
    return 1 if data_format.startswith("NC") else 4


@tf_export("nn.conv3d_transpose", v1=[])
def conv3d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format: str = "NDHWC", dilations=None,
                     name: str | None = None) -> Tensor:
    """`tf.nn.conv3d_transpose`: Conv3DBackpropInputV2 with `output_shape` as input_sizes."""
    data_format = data_format or "NDHWC"
    attrs = conv3d_attrs(seq_attr(strides, 3, _cidx(data_format), "strides"), padding, data_format,
                         seq_attr(dilations, 3, _cidx(data_format), "dilations"))
    sizes = output_shape if isinstance(output_shape, Tensor) else \
        convert_to_tensor(output_shape, dtypes.int32)
    return apply_op(Conv3DBackpropInputV2, [sizes, filters, input], attrs,
                    name=scoped_op_name(name, "conv3d_transpose")).outputs[0]


conv3d_transpose_v1 = conv_transpose_v1(conv3d_transpose, "conv3d_transpose", "NDHWC")

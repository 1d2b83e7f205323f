"""Rank-generic convolution and pooling wrappers, as TF's nn_ops.py composes them:
`tf.nn.conv1d` / `conv1d_transpose` (the 2-D ops over an ExpandDims'd input, then Squeeze),
`tf.nn.convolution` and `tf.nn.pool` (dispatch on the number of spatial dims),
`tf.nn.atrous_conv2d` and `tf.nn.separable_conv2d`.

Dilated convolutions run the dilated op directly where TF wraps the undilated op in
SpaceToBatchND/BatchToSpaceND (the values are the same); dilated pooling uses TF's
SpaceToBatchND wrapping (ATen's average pool has no dilation).
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import array_space, nn_conv, nn_conv3d, nn_pool, nn_pool3d
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import floormod, subtract
from ndflow.ops.array_core import expand_dims, shape, squeeze, stack
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.array_slicing import concat
from ndflow.ops.nn_common import seq_attr

# -- 1-D convolution ---------------------------------------------------------------------------


def _conv1d_layout(data_format):
    """(2-D data format, spatial start dim, channel index) of a 1-D data format."""
    if data_format in (None, "NHWC", "NWC"):
        return "NHWC", 1, 2
    if data_format in ("NCHW", "NCW"):
        return "NCHW", 2, 1
    raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")


@tf_export(v1=["nn.conv1d"])
def conv1d_v1(value=None, filters=None, stride=None, padding=None,
              use_cudnn_on_gpu: bool | None = None, data_format: str | None = None,
              name: str | None = None, input=None, dilations=None) -> Tensor:  # noqa: A002
    """`tf.compat.v1.nn.conv1d`: Conv2D over [batch, 1, width, channels] (or NCW)."""
    value = deprecated_argument_lookup("input", input, "value", value)
    with name_scope(name, "conv1d"):
        fmt, start, cidx = _conv1d_layout(data_format)
        strides = [1] + seq_attr(stride, 1, cidx, "stride")
        dilations = [1] + seq_attr(dilations, 1, cidx, "dilations")
        x = expand_dims(convert_to_tensor(value, name="input"), start)
        f = expand_dims(convert_to_tensor(filters, dtype=x.dtype, name="filters"), 0)
        y = nn_conv.conv2d_v1(x, f, strides, padding,
                              True if use_cudnn_on_gpu is None else use_cudnn_on_gpu,
                              data_format=fmt, dilations=dilations, name="Conv2D")
        return squeeze(y, [start])


@tf_export("nn.conv1d", v1=[])
def conv1d(input, filters, stride, padding, data_format: str = "NWC",  # noqa: A002
           dilations=None, name: str | None = None) -> Tensor:
    """`tf.nn.conv1d`: 1-D convolution of [batch, width, in] `input` with [k, in, out]
    `filters` (TF's composition: ExpandDims, Conv2D, Squeeze)."""
    return conv1d_v1(input, filters, stride, padding, True, data_format, name,
                     dilations=dilations)


@tf_export("nn.conv1d_transpose")
def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format: str = "NWC", dilations=None,
                     name: str | None = None) -> Tensor:
    """`tf.nn.conv1d_transpose`: Conv2DBackpropInput over an ExpandDims'd input."""
    if data_format not in (None, "NWC", "NCW"):
        raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: "
                         f"data_format={data_format}")
    with name_scope(name, "conv1d_transpose"):
        fmt, start, cidx = _conv1d_layout(data_format)
        strides = [1] + seq_attr(strides, 1, cidx, "stride")
        dilations = [1] + seq_attr(dilations, 1, cidx, "dilations")
        x = expand_dims(convert_to_tensor(input, name="input"), start)
        f = expand_dims(convert_to_tensor(filters, dtype=x.dtype, name="filters"), 0)
        if isinstance(output_shape, Tensor):
            sizes = concat([output_shape[:start], [1], output_shape[start:]], 0)
        else:
            dims = [int(d) for d in output_shape]
            sizes = convert_to_tensor(dims[:start] + [1] + dims[start:], dtypes.int32)
        y = nn_conv.conv2d_backprop_input(sizes, f, x, strides, padding, data_format=fmt,
                                          dilations=dilations, name="conv1d_transpose")
        return squeeze(y, [start])


# -- N-D convolution ---------------------------------------------------------------------------


def _spatial_dims(input, filters, num_spatial_dims=None) -> int:  # noqa: A002
    if num_spatial_dims is not None:
        n = num_spatial_dims
    elif filters.shape.rank is not None:
        n = filters.shape.rank - 2
    elif input.shape.rank is not None:
        n = input.shape.rank - 2
    else:
        raise ValueError("When `num_spatial_dims` is not set, one of `input.shape.rank` or "
                         "`filters.shape.rank` must be known. Received: "
                         f"input.shape={input.shape} of rank {input.shape.rank} and "
                         f"filters.shape={filters.shape} of rank {filters.shape.rank}")
    if not 1 <= n <= 3:
        raise ValueError(f"`num_spatial_dims` must be 1, 2, or 3. Received: num_spatial_dims={n}.")
    return n


def _check_strides_and_dilations(strides, dilations) -> None:
    s, d = np.array(strides, np.int32), np.array(dilations, np.int32)
    if np.any(s > 1) and np.any(d > 1):
        raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                         f"Received: strides={s} and dilation_rate={d}")


def convolution_internal(input, filters, strides=None, padding="VALID",  # noqa: A002
                         data_format=None, dilations=None, name=None):
    """TF's convolution_internal: conv1d / Conv2D / Conv3D by the number of spatial dims."""
    filters = filters if isinstance(filters, Tensor) else convert_to_tensor(filters,
                                                                            name="filters")
    input = input if isinstance(input, Tensor) else convert_to_tensor(input, name="input")  # noqa: A001
    n = _spatial_dims(input, filters)
    cidx = n + 1 if data_format is None or not data_format.startswith("NC") else 1
    strides = seq_attr(strides, n, cidx, "strides")
    dilations = seq_attr(dilations, n, cidx, "dilations")
    spatial = slice(2, None) if cidx == 1 else slice(1, -1)
    if any(d != 1 for d in dilations):
        _check_strides_and_dilations(strides[spatial], dilations[spatial])
    if n == 1:
        return conv1d_v1(input, filters, strides, padding, data_format=data_format, name=name,
                         dilations=dilations)
    if n == 2:
        return nn_conv.conv2d_v1(input, filters, strides, padding,
                                 data_format=data_format or "NHWC", dilations=dilations,
                                 name=name)
    return nn_conv3d.conv3d(input, filters, strides, padding, data_format or "NDHWC",
                            dilations, name)


@tf_export("nn.convolution", v1=[])
def convolution(input, filters, strides=None, padding="VALID",  # noqa: A002
                data_format: str | None = None, dilations=None,
                name: str | None = None) -> Tensor:
    """`tf.nn.convolution`: the 1-, 2- or 3-D convolution by the filters' rank."""
    return convolution_internal(input, filters, strides, padding, data_format, dilations, name)


@tf_export(v1=["nn.convolution"])
def convolution_v1(input, filter=None, padding=None, strides=None,  # noqa: A002
                   dilation_rate=None, name: str | None = None,
                   data_format: str | None = None, filters=None, dilations=None) -> Tensor:
    """`tf.compat.v1.nn.convolution` (`filter`, `dilation_rate`: TF1's names)."""
    filter = deprecated_argument_lookup("filters", filters, "filter", filter)  # noqa: A001
    dilation_rate = deprecated_argument_lookup("dilations", dilations, "dilation_rate",
                                               dilation_rate)
    return convolution_internal(input, filter, strides, padding, data_format, dilation_rate,
                                name)


@tf_export("nn.atrous_conv2d")
def atrous_conv2d(value, filters, rate, padding, name: str | None = None) -> Tensor:
    """`tf.nn.atrous_conv2d`: a 2-D convolution with dilation `rate` in both dims."""
    return convolution_v1(value, filters, padding, dilation_rate=np.broadcast_to(rate, (2,)),
                          name=name)


@tf_export("nn.separable_conv2d", v1=[])
def separable_conv2d(input, depthwise_filter, pointwise_filter, strides,  # noqa: A002
                     padding, data_format: str | None = None, dilations=None,
                     name: str | None = None) -> Tensor:
    """`tf.nn.separable_conv2d`: a depthwise conv, then a 1x1 conv mixing channels."""
    with name_scope(name, "separable_conv2d"):
        x = convert_to_tensor(input, name="input")
        dw = convert_to_tensor(depthwise_filter, dtype=x.dtype, name="depthwise_filter")
        pw = convert_to_tensor(pointwise_filter, dtype=x.dtype, name="pointwise_filter")
        pshape = pw.shape
        if pshape.rank is not None:
            if pshape.rank != 4:
                raise ValueError(f"Shape {pshape} must have rank 4")
            for d in pshape.as_list()[:2]:
                if d is not None and d != 1:
                    raise ValueError(f"Dimensions {d} and 1 are not compatible")
        rate = [1, 1] if dilations is None else list(np.broadcast_to(dilations, (2,)))
        depthwise = nn_conv.depthwise_conv2d(x, dw, strides, padding, data_format,
                                             [int(r) for r in rate], name="depthwise")
        return nn_conv.conv2d(depthwise, pw, [1, 1, 1, 1], "VALID", data_format or "NHWC",
                              name="separable_conv2d")


@tf_export(v1=["nn.separable_conv2d"])
def separable_conv2d_v1(input, depthwise_filter, pointwise_filter, strides,  # noqa: A002
                        padding, rate=None, name: str | None = None,
                        data_format: str | None = None, dilations=None) -> Tensor:
    """`tf.compat.v1.nn.separable_conv2d` (`rate` is TF1's name for `dilations`)."""
    rate = deprecated_argument_lookup("dilations", dilations, "rate", rate)
    return separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,
                            data_format, rate, name)


# -- N-D pooling ---------------------------------------------------------------------------------


def _strides_and_dilation_rate(n: int, strides, dilation_rate):
    """TF's _get_strides_and_dilation_rate (its checks and messages)."""
    if dilation_rate is None:
        dilation_rate = [1] * n
    elif len(dilation_rate) != n:
        raise ValueError(f"`len(dilation_rate)` should be {n}. Received: "
                         f"dilation_rate={dilation_rate} of length {len(dilation_rate)}")
    dilation_rate = np.array(dilation_rate, dtype=np.int32)
    if np.any(dilation_rate < 1):
        raise ValueError(f"all values of `dilation_rate` must be positive. Received: "
                         f"dilation_rate={dilation_rate}")
    if strides is None:
        strides = [1] * n
    elif len(strides) != n:
        raise ValueError(f"`len(strides)` should be {n}. Received: strides={strides} of length "
                         f"{len(strides)}")
    strides = np.array(strides, dtype=np.int32)
    if np.any(strides < 1):
        raise ValueError(f"all values of `strides` must be positive. Received: strides={strides}")
    _check_strides_and_dilations(strides, dilation_rate)
    return strides, dilation_rate


_POOLS = {("MAX", 1): nn_pool.max_pool1d, ("MAX", 2): nn_pool.max_pool2d,
          ("MAX", 3): nn_pool3d.max_pool3d, ("AVG", 1): nn_pool.avg_pool1d,
          ("AVG", 2): nn_pool.avg_pool2d, ("AVG", 3): nn_pool3d.avg_pool3d}


@tf_export("nn.pool", v1=[])
def pool(input, window_shape, pooling_type, strides=None, padding="VALID",  # noqa: A002
         data_format: str | None = None, dilations=None, name: str | None = None) -> Tensor:
    """`tf.nn.pool`: N-D max or average pooling (`pooling_type` "MAX" / "AVG")."""
    x = convert_to_tensor(input, name="input")
    window_shape = [int(w) for w in window_shape]
    n = len(window_shape)
    if n < 1 or n > 3:
        raise ValueError(f"`len(window_shape)` must be 1, 2, or 3. Received: "
                         f"window_shape={window_shape} of length {n}")
    if x.shape.rank is not None and x.shape.rank != n + 2:
        raise ValueError(f"Shape {x.shape} must have rank {n + 2}")
    strides, rate = _strides_and_dilation_rate(n, strides, dilations)
    if padding == "SAME" and np.any(rate > 1):
        raise ValueError(f"pooling with 'SAME' padding is not implemented for `dilation_rate` "
                         f"> 1. Received: padding={padding} and dilation_rate={rate}")
    if np.any(strides > np.array(window_shape)):
        raise ValueError(f"`strides` > `window_shape` not supported due to inconsistency "
                         f"between CPU and GPU implementations. Received: strides={strides} "
                         f"and window_shape={window_shape}")
    key = (pooling_type, n)
    if key not in _POOLS:
        raise ValueError(f"{n}-D {pooling_type} pooling is not supported.")
    if n == 1 and data_format not in (None, "NWC", "NCW"):
        raise ValueError(f"data_format must be either 'NWC' or 'NCW'. Received: "
                         f"data_format={data_format}")
    fmt = data_format or {1: "NWC", 2: "NHWC", 3: "NDHWC"}[n]
    if np.any(rate > 1):
        return _dilated_pool(_POOLS[key], x, window_shape, rate, padding, fmt, name)
    return _POOLS[key](x, window_shape, [int(s) for s in strides], padding, fmt,
                       name=name or f"{pooling_type.lower()}_pool")


@tf_export(v1=["nn.pool"])
def pool_v1(input, window_shape, pooling_type, padding, dilation_rate=None,  # noqa: A002
            strides=None, name: str | None = None, data_format: str | None = None,
            dilations=None) -> Tensor:
    """`tf.compat.v1.nn.pool` (`dilation_rate` is TF1's name for `dilations`)."""
    dilation_rate = deprecated_argument_lookup("dilations", dilations, "dilation_rate",
                                               dilation_rate)
    return pool(input, window_shape, pooling_type, strides, padding, data_format,
                dilation_rate, name)


def _dilated_pool(fn, x, window_shape, rate, padding, fmt, name):
    """TF's with_space_to_batch for VALID padding: SpaceToBatchND by the dilation rate (the
    spatial dims padded at the end to a multiple of it), the undilated pool, BatchToSpaceND
    cropping the padding."""
    n = len(window_shape)
    first = 2 if fmt.startswith("NC") else 1
    lead = first - 1
    block = np.array([1] * lead + [int(r) for r in rate], np.int32)
    # Block dims run from dim 1 to the last spatial dim (the channel dim of NC formats gets
    # block 1 and no padding), as TF's _with_space_to_batch_adjust.
    dims = x.shape.as_list() if x.shape.rank is not None else None
    spatial = None if dims is None else dims[first:first + n]
    if spatial is not None and all(d is not None for d in spatial):
        extra = [(-d) % int(r) for d, r in zip(spatial, rate)]
        pads = np.array([[0, 0]] * lead + [[0, e] for e in extra], np.int32)
    else:  # TF's required_space_to_batch_paddings on the dynamic shape
        sizes = shape(x)[first:first + n]
        r = convert_to_tensor(np.asarray(rate, np.int32))
        extra = floormod(subtract(r, floormod(sizes, r)), r)
        ends = concat([np.zeros([lead], np.int32), extra], 0)
        pads = stack([zeros_like(ends), ends], axis=1)
    with name_scope(name, "dilated_pool"):
        y = array_space.space_to_batch_nd(x, block, pads)
        y = fn(y, window_shape, [1] * n, "VALID", fmt)
        # The crops are the end paddings: [0, extra] per dim.
        return array_space.batch_to_space_nd(y, block, pads)

"""Rank-generic convolution and pooling wrappers, as TF's nn_ops.py composes them:
`tf.nn.conv1d` / `conv1d_transpose` (the 2-D ops over an ExpandDims'd input, then Squeeze),
`tf.nn.convolution` and `tf.nn.pool` (dispatch on the number of spatial dims),
`tf.nn.atrous_conv2d`(`_transpose`), `tf.nn.separable_conv2d`, `tf.nn.conv_transpose` and the
raw depthwise backprop wrappers.

Dilated convolutions run the dilated op directly where TF wraps the undilated op in
SpaceToBatchND/BatchToSpaceND (the values are the same); dilated pooling uses TF's
SpaceToBatchND wrapping (ATen's average pool has no dilation).
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import array_space, nn_conv, nn_conv3d, nn_conv_nd_docs, nn_pool, nn_pool3d
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.array_core import expand_dims, shape, squeeze, stack
from ndflow.ops.array_slicing import concat
from ndflow.ops.nn_common import padding_attrs, seq_attr

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
    """TF's pool over dilated windows: the undilated pool inside with_space_to_batch."""
    n = len(window_shape)

    def op(converted, _, converted_padding):
        return fn(converted, window_shape, [1] * n, converted_padding, fmt)
    with name_scope(name, "dilated_pool"):
        return with_space_to_batch(x, rate, padding, op, window_shape,
                                   data_format=None if fmt in ("NWC", "NHWC", "NDHWC") else fmt)


def _adjust(rows, fill, spatial_dims):
    """TF's _with_space_to_batch_adjust: per-dim rows for dims 1..max(spatial_dims), `fill`
    where a dim is not spatial."""
    out = []
    for d in range(1, spatial_dims[-1] + 1):
        out.append(rows[spatial_dims.index(d)] if d in spatial_dims else fill)
    return out


@tf_export("nn.with_space_to_batch")
def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,  # noqa: A002
                        spatial_dims=None, data_format=None) -> Tensor:
    """`tf.nn.with_space_to_batch`: `op(converted_input, num_spatial_dims, "VALID")` on the
    input moved by SpaceToBatchND with block `dilation_rate` (SAME padding added as TF does
    for a filter of `filter_shape`), moved back by BatchToSpaceND. `dilation_rate` must be
    known statically here."""
    x = convert_to_tensor(input, name="input")
    rate = constant_value(dilation_rate) if isinstance(dilation_rate, Tensor) else dilation_rate
    if rate is None:
        raise NotImplementedError("ndflow's with_space_to_batch needs a constant dilation_rate")
    rate = np.asarray(rate, np.int32)
    if rate.ndim != 1:
        raise ValueError(f"`dilation_rate.shape.rank` must be 1. Received: "
                         f"dilation_rate={rate} of rank {rate.ndim}")
    n = rate.size
    start = 2 if data_format is not None and data_format.startswith("NC") else 1
    orig = list(range(start, start + n)) if spatial_dims is None else list(spatial_dims)
    dims = sorted({int(d) for d in orig})
    if dims != orig or any(d < 1 for d in dims):
        raise ValueError(f"`spatial_dims` must be a monotonically increasing sequence of "
                         f"positive integers. Received: spatial_dims={orig}")
    expected = dims[-1] if start == 2 else dims[-1] + 1
    if x.shape.rank is not None and x.shape.rank < expected:
        raise ValueError(f"`input.shape.rank` must be at least {expected}. Received: "
                         f"input.shape={x.shape} with rank {x.shape.rank}")
    if np.any(rate < 1):
        raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={rate}")
    if np.all(rate == 1):
        return op(x, n, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError(f"`filter_shape` must be specified for `padding='SAME'`. "
                             f"Received: filter_shape={filter_shape} and padding={padding}")
        fs = constant_value(filter_shape) if isinstance(filter_shape, Tensor) else filter_shape
        if fs is None:
            raise NotImplementedError("ndflow's with_space_to_batch needs a constant "
                                      "filter_shape for SAME padding")
        extra = (np.asarray(fs, np.int32)[:n] - 1) * rate
        base = np.stack([extra // 2, extra - extra // 2], 1)
    elif padding == "VALID":
        base = np.zeros([n, 2], np.int32)
    else:
        raise ValueError(f"`padding` must be one of 'SAME' or 'VALID'. Received: "
                         f"padding={padding}")
    known = x.shape.as_list() if x.shape.rank is not None else None
    if known is not None and all(known[d] is not None for d in dims):
        sizes = [known[d] for d in dims]
    else:
        full = shape(x)
        sizes = stack([full[d] for d in dims])
    paddings, crops = array_space.required_space_to_batch_paddings(sizes, rate, base)
    block = _adjust(list(rate), 1, dims)
    pad_rows = _adjust([paddings[i] for i in range(n)], [0, 0], dims)
    crop_rows = _adjust([crops[i] for i in range(n)], [0, 0], dims)
    y = array_space.space_to_batch_nd(x, np.array(block, np.int32), stack(pad_rows))
    y = op(y, n, "VALID")
    return array_space.batch_to_space_nd(y, np.array(block, np.int32), stack(crop_rows))


# -- transposed and raw depthwise convolutions --------------------------------------------------


@tf_export("nn.conv_transpose")
def conv_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                   data_format: str | None = None, dilations=None,
                   name: str | None = None) -> Tensor:
    """`tf.nn.conv_transpose`: conv1d/2d/3d_transpose by the length of `output_shape`."""
    if isinstance(output_shape, Tensor):
        n = output_shape.shape[0] - 2 if output_shape.shape.rank == 1 and \
            output_shape.shape[0] is not None else None
    elif hasattr(output_shape, "__len__"):
        n = len(output_shape) - 2
    else:
        raise ValueError(f"`output_shape` must be a tensor or sized collection. Received: "
                         f"output_shape={output_shape}")
    if n is None or not 1 <= n <= 3:
        raise ValueError(f"`output_shape` must be of length 3, 4 or 5. Received: "
                         f"output_shape={output_shape} of length {None if n is None else n + 2}.")
    fmt = data_format or {1: "NWC", 2: "NHWC", 3: "NDHWC"}[n]
    with name_scope(name, "conv_transpose"):
        if n == 1:
            return conv1d_transpose(input, filters, output_shape, strides, padding, fmt,
                                    dilations)
        if n == 2:
            return nn_conv.conv2d_transpose(input, filters, output_shape, strides, padding, fmt,
                                            dilations)
        return nn_conv3d.conv3d_transpose(input, filters, output_shape, strides, padding, fmt,
                                          dilations)


@tf_export("nn.atrous_conv2d_transpose")
def atrous_conv2d_transpose(value, filters, output_shape, rate, padding,
                            name: str | None = None) -> Tensor:
    """`tf.nn.atrous_conv2d_transpose`: the transpose of atrous_conv2d (Conv2DBackpropInput
    with dilation `rate`, where TF wraps the undilated op in SpaceToBatchND)."""
    value = convert_to_tensor(value, name="value")
    filters = convert_to_tensor(filters, dtype=value.dtype, name="filters")
    vc = value.shape[3] if value.shape.rank == 4 else None
    fc = filters.shape[3] if filters.shape.rank == 4 else None
    if vc is not None and fc is not None and vc != fc:
        raise ValueError(
            f"`value` channel count must be compatible with `filters` input channel count. "
            f"Received: value.shape={value.shape} with channel count {vc} and "
            f"filters.shape={filters.shape} with input channel count {fc}.")
    if rate < 1:
        raise ValueError(f"`rate` cannot be less than one. Received: rate={rate}")
    if not isinstance(output_shape, Tensor):
        dims = list(output_shape)
        if len(dims) != 4:
            raise ValueError(f"`output_shape` must have shape (4,). Received: "
                             f"output_shape=({len(dims)},)")
        oc = filters.shape[2] if filters.shape.rank == 4 else None
        if oc is not None and int(dims[3]) != oc:
            raise ValueError(
                f"`output_shape` channel count must be compatible with `filters` output "
                f"channel count. Received: output_shape={dims} with channel count {dims[3]} "
                f"and filters.shape={filters.shape} with output channel count {oc}.")
    return nn_conv.conv2d_transpose(value, filters, output_shape, [1, 1, 1, 1], padding,
                                    "NHWC", [1, int(rate), int(rate), 1],
                                    name=name or "atrous_conv2d_transpose")


def _depthwise_raw_attrs(strides, padding, data_format, dilations) -> dict:
    pad, explicit = padding_attrs(padding)
    return {"strides": [int(s) for s in strides], "padding": pad, "explicit_paddings": explicit,
            "data_format": data_format, "dilations": [int(d) for d in dilations]}


@tf_export("nn.depthwise_conv2d_backprop_input",
           v1=["nn.depthwise_conv2d_native_backprop_input",
               "nn.depthwise_conv2d_backprop_input"])
def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop,  # noqa: A002
                                           strides, padding, data_format="NHWC",
                                           dilations=(1, 1, 1, 1),
                                           name: str | None = None) -> Tensor:
    """The raw DepthwiseConv2dNativeBackpropInput op."""
    sizes = convert_to_tensor(input_sizes, dtypes.int32)
    return apply_op(nn_conv.DepthwiseConv2dNativeBackpropInput, [sizes, filter, out_backprop],
                    _depthwise_raw_attrs(strides, padding, data_format, dilations),
                    name=name).outputs[0]


@tf_export("nn.depthwise_conv2d_backprop_filter",
           v1=["nn.depthwise_conv2d_native_backprop_filter",
               "nn.depthwise_conv2d_backprop_filter"])
def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop,  # noqa: A002
                                            strides, padding, data_format="NHWC",
                                            dilations=(1, 1, 1, 1),
                                            name: str | None = None) -> Tensor:
    """The raw DepthwiseConv2dNativeBackpropFilter op."""
    sizes = convert_to_tensor(filter_sizes, dtypes.int32)
    return apply_op(nn_conv.DepthwiseConv2dNativeBackpropFilter, [input, sizes, out_backprop],
                    _depthwise_raw_attrs(strides, padding, data_format, dilations),
                    name=name).outputs[0]


attach(globals(), nn_conv_nd_docs.DOCS)

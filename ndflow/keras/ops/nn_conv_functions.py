"""`keras.ops.nn` convolutions and pooling (conv, depthwise_conv, separable_conv,
conv_transpose, max_pool, average_pool, adaptive pools, depth_to_space/space_to_depth,
unfold/fold, ctc_loss/ctc_decode) on ndflow's nn ops. `data_format` defaults to
keras.config.image_data_format(); channels_first inputs are transposed to channels_last and
back (as Keras does on CPU); kernels are laid out as Keras' (spatial..., in, out)."""

from __future__ import annotations

import numpy as np

from ndflow.keras import docstrings, global_config
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import nn_conv_docs
from ndflow.keras.ops import numpy_array as arr
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    array_core,
    array_fill,
    array_nd,
    array_slicing,
    array_space,
    ctc_ops,
    nn_conv,
    nn_conv_nd,
    reduction,
)
from ndflow.ops.cast import cast
from ndflow.ops.nn_common import keras_transpose_size


def _nn(name):
    return keras_op(name, "nn")


def _format(data_format):
    data_format = data_format or global_config.image_data_format()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return data_format


def _to_last(x, data_format):
    return arr.moveaxis(x, 1, -1) if data_format == "channels_first" else x


def _from_last(x, data_format):
    return arr.moveaxis(x, -1, 1) if data_format == "channels_first" else x


def _tuple(value, n, name):
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    if len(value) != n:
        raise ValueError(f"`{name}` must be an int or a tuple of {n} ints. Received: "
                         f"{name}={value}")
    return value


def _padding(padding):
    padding = padding.lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. "
                         f"Received: padding={padding}")
    return padding.upper()


@_nn("conv")
def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    data_format = _format(data_format)
    x, kernel = rules.to_tensor(inputs), rules.to_tensor(kernel)
    n = x.shape.rank - 2
    if kernel.shape.rank != n + 2:
        raise ValueError(f"The kernel of a {n}D convolution must have rank {n + 2}. "
                         f"Received: kernel.shape={kernel.shape}")
    dtype = rules.result_type(x.dtype.name, kernel.dtype.name)
    x, kernel = _to_last(cast(x, dtype), data_format), cast(kernel, dtype)
    channels = x.shape[-1]
    if channels is not None and kernel.shape[-2] is not None and \
            channels % kernel.shape[-2]:
        raise ValueError(f"The number of input channels must be evenly divisible by "
                         f"kernel.shape[-2]. Received: input channels {channels}, "
                         f"kernel.shape={tuple(kernel.shape.as_list())}")
    out = nn_conv_nd.convolution(x, kernel, strides=_tuple(strides, n, "strides"),
                                 padding=_padding(padding),
                                 dilations=_tuple(dilation_rate, n, "dilation_rate"))
    return _from_last(out, data_format)


@_nn("depthwise_conv")
def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None,
                   dilation_rate=1):
    data_format = _format(data_format)
    x, kernel = rules.to_tensor(inputs), rules.to_tensor(kernel)
    x = _to_last(x, data_format)
    n = x.shape.rank - 2
    if n not in (1, 2):
        raise ValueError(f"depthwise_conv takes 3D or 4D inputs. Received: {x.shape}")
    strides, dilations = _tuple(strides, n, "strides"), _tuple(dilation_rate, n,
                                                               "dilation_rate")
    if n == 1:
        x, kernel = array_core.expand_dims(x, 1), array_core.expand_dims(kernel, 0)
        strides, dilations = [1] + strides, [1] + dilations
    out = nn_conv.depthwise_conv2d(x, kernel, strides=[1, *strides, 1],
                                   padding=_padding(padding), dilations=dilations)
    if n == 1:
        out = array_core.squeeze(out, axis=[1])
    return _from_last(out, data_format)


@_nn("separable_conv")
def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid",
                   data_format=None, dilation_rate=1):
    data_format = _format(data_format)
    depthwise = depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format,
                               dilation_rate)
    return conv(depthwise, pointwise_kernel, 1, "valid", data_format, 1)


@_nn("conv_transpose")
def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None,
                   data_format=None, dilation_rate=1):
    data_format = _format(data_format)
    x, kernel = rules.to_tensor(inputs), rules.to_tensor(kernel)
    x = _to_last(x, data_format)
    n = x.shape.rank - 2
    strides = _tuple(strides, n, "strides")
    dilations = _tuple(dilation_rate, n, "dilation_rate")
    pads = [None] * n if output_padding is None else _tuple(output_padding, n,
                                                            "output_padding")
    padding = padding.lower()
    spatial = [keras_transpose_size(x.shape[1 + i], kernel.shape[i], strides[i], padding,
                                    pads[i], dilations[i]) for i in range(n)]
    batch = x.shape[0] if x.shape[0] is not None else array_core.shape(x)[0]
    output_shape = [batch, *spatial, kernel.shape[-2]]
    if isinstance(batch, int):
        output_shape = [int(v) for v in output_shape]
    else:
        output_shape = array_core.stack([cast(v, "int32") for v in output_shape])
    out = nn_conv_nd.conv_transpose(x, kernel, output_shape, strides=strides,
                                    padding=_padding(padding), dilations=dilations)
    return _from_last(out, data_format)


def _pool(kind, inputs, pool_size, strides, padding, data_format):
    data_format = _format(data_format)
    x = _to_last(rules.to_tensor(inputs), data_format)
    n = x.shape.rank - 2
    pool_size = _tuple(pool_size, n, "pool_size")
    strides = pool_size if strides is None else _tuple(strides, n, "strides")
    out = nn_conv_nd.pool(x, pool_size, kind, strides=strides, padding=_padding(padding))
    return _from_last(out, data_format)


@_nn("max_pool")
def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    return _pool("MAX", inputs, pool_size, strides, padding, data_format)


@_nn("average_pool")
def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    return _pool("AVG", inputs, pool_size, strides, padding, data_format)


def _adaptive_pool(reduce, inputs, output_size, data_format):
    """PyTorch's adaptive pooling: output cell i pools input [floor(i*L/n), ceil((i+1)*L/n))
    along each spatial axis (static sizes)."""
    data_format = _format(data_format)
    x = _to_last(rules.to_tensor(inputs), data_format)
    n = x.shape.rank - 2
    sizes = _tuple(output_size, n, "output_size")
    for axis, out in zip(range(1, n + 1), sizes):
        length = x.shape[axis]
        if length is None:
            raise ValueError("adaptive pooling needs static spatial dimensions")
        cells = []
        for i in range(out):
            start, end = (i * length) // out, -((-(i + 1) * length) // out)
            key = [slice(None)] * x.shape.rank
            key[axis] = slice(start, end)
            cells.append(reduce(array_slicing.slice_helper(x, tuple(key)), axis=axis,
                                keepdims=True))
        x = array_slicing.concat(cells, axis)
    return _from_last(x, data_format)


@_nn("adaptive_average_pool")
def adaptive_average_pool(inputs, output_size, data_format=None):
    return _adaptive_pool(reduction.reduce_mean, inputs, output_size, data_format)


@_nn("adaptive_max_pool")
def adaptive_max_pool(inputs, output_size, data_format=None):
    return _adaptive_pool(reduction.reduce_max, inputs, output_size, data_format)


@_nn("depth_to_space")
def depth_to_space(x, block_size, data_format="channels_last"):
    x = _to_last(rules.to_tensor(x), _format(data_format))
    return _from_last(array_space.depth_to_space(x, block_size), data_format)


@_nn("space_to_depth")
def space_to_depth(x, block_size, data_format="channels_last"):
    x = _to_last(rules.to_tensor(x), _format(data_format))
    return _from_last(array_space.space_to_depth(x, block_size), data_format)


def _patch_kernel(channels, kh, kw, dtype):
    """A conv kernel copying each (channel, i, j) of a patch to output channel
    c*kh*kw + i*kw + j (PyTorch's unfold order)."""
    k = np.zeros((kh, kw, channels, channels * kh * kw), dtype=np.float64)
    for c in range(channels):
        for i in range(kh):
            for j in range(kw):
                k[i, j, c, c * kh * kw + i * kw + j] = 1.0
    return cast(k, dtype)


def _fold_args(kernel_size, dilation, padding, stride):
    return (_tuple(kernel_size, 2, "kernel_size"), _tuple(dilation, 2, "dilation"),
            _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride"))


@_nn("unfold")
def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    x = rules.to_tensor(x)
    (kh, kw), dil, pad, st = _fold_args(kernel_size, dilation, padding, stride)
    channels = x.shape[1]
    x = array_fill.pad(x, [[0, 0], [0, 0], [pad[0], pad[0]], [pad[1], pad[1]]])
    patches = nn_conv_nd.convolution(arr.moveaxis(x, 1, -1),
                                     _patch_kernel(channels, kh, kw, x.dtype), strides=st,
                                     padding="VALID", dilations=dil)
    shape = array_core.shape(patches)
    flat = array_core.reshape(patches, array_core.stack([shape[0], shape[1] * shape[2],
                                                         shape[3]]))
    return arr.moveaxis(flat, 1, 2)


@_nn("fold")
def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    x = rules.to_tensor(x)
    (kh, kw), dil, pad, st = _fold_args(kernel_size, dilation, padding, stride)
    out_h, out_w = _tuple(output_size, 2, "output_size")
    channels = x.shape[1] // (kh * kw)
    ph, pw = out_h + 2 * pad[0], out_w + 2 * pad[1]
    bh = (ph - dil[0] * (kh - 1) - 1) // st[0] + 1
    bw = (pw - dil[1] * (kw - 1) - 1) // st[1] + 1
    batch = array_core.shape(x)[0]
    blocks = array_core.reshape(arr.moveaxis(x, 1, 2),
                                array_core.stack([batch, bh, bw, channels * kh * kw]))
    full = nn_conv_nd.conv_transpose(
        blocks, _patch_kernel(channels, kh, kw, x.dtype),
        array_core.stack([batch, ph, pw, channels]), strides=st, padding="VALID",
        dilations=dil)
    full = full[:, pad[0]:pad[0] + out_h, pad[1]:pad[1] + out_w, :]
    return arr.moveaxis(full, -1, 1)


# -- CTC -------------------------------------------------------------------------------------
@_nn("ctc_loss")
def ctc_loss(target, output, target_length, output_length, mask_index=0):
    target = rules.to_tensor(target, "int32")
    output = rules.to_tensor(output)
    result = rules.result_type(output.dtype.name, "float32")
    output = cast(output, "float32")
    loss = ctc_ops.ctc_loss_v2(labels=target, logits=output,
                               label_length=rules.to_tensor(target_length, "int32"),
                               logit_length=rules.to_tensor(output_length, "int32"),
                               logits_time_major=False, blank_index=mask_index)
    return cast(loss, result)


@_nn("ctc_decode")
def ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1,
               merge_repeated=True, mask_index=0):
    if strategy not in ("greedy", "beam_search"):
        raise ValueError(f"Invalid strategy {strategy}. Supported values are 'greedy' and "
                         "'beam_search'.")
    inputs = rules.to_tensor(inputs)
    dtype = rules.result_type(inputs.dtype.name, "float32")
    shape = array_core.shape(inputs)
    logits = arr.transpose(cast(inputs, dtype), [1, 0, 2])
    lengths = rules.to_tensor(sequence_lengths, "int32")
    if strategy == "greedy":
        decoded, scores = ctc_ops.ctc_greedy_decoder(
            logits, lengths, merge_repeated=merge_repeated, blank_index=mask_index)
    else:
        if mask_index is not None:
            logits = array_slicing.concat([logits[..., :mask_index],
                                           logits[..., mask_index + 1:],
                                           logits[..., mask_index:mask_index + 1]], axis=-1)
        decoded, scores = ctc_ops.ctc_beam_search_decoder_v2(
            logits, lengths, beam_width=beam_width, top_paths=top_paths)
    dense_shape = cast(shape[:2], "int64")
    dense = array_core.stack([array_nd.tensor_scatter_nd_update(
        array_fill.fill(dense_shape, cast(-1, "int32")), d.indices, cast(d.values, "int32"))
        for d in decoded])
    if strategy == "beam_search" and mask_index is not None:
        if mask_index < 0:
            mask_index = mask_index + shape[-1]
        dense = arr.where(dense >= mask_index, dense + 1, dense)
    return dense, scores


docstrings.attach(globals(), nn_conv_docs.DOCS)

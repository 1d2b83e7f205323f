"""`tf.keras.backend`'s Keras 1/2 neural-network functions: activations, dropout, the
cross-entropies (with `K.epsilon()` clipping, as Keras 2), convolutions and pooling taking
Keras' `data_format`/`padding` spellings, paddings and resizing, `switch`, functional loops
and `gradients`. As Keras 3.15's legacy backend computes them (keras/src/legacy/backend.py)."""

from __future__ import annotations

import numpy as np

from ndflow.autodiff.gradients import gradients as _gradients
from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras import backend_legacy_nn_docs, docstrings
from ndflow.keras.backend_functions import epsilon, image_data_format
from ndflow.keras.backend_legacy import repeat_elements
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_transpose,
    comparison,
    image_resize,
    math,
    nn_activation,
    nn_conv,
    nn_conv_nd,
    nn_dropout,
    nn_loss,
    nn_norm,
    nn_pool,
    reduction,
)
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.runtime import control_flow, functional_ops

_PADDINGS = {"same": "SAME", "valid": "VALID"}
_RESIZE = {"area": "area", "bicubic": "bicubic", "bilinear": "bilinear",
           "gaussian": "gaussian", "lanczos3": "lanczos3", "lanczos5": "lanczos5",
           "mitchellcubic": "mitchellcubic", "nearest": "nearest"}


def _data_format(data_format):
    data_format = image_data_format() if data_format is None else data_format
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError(f"Unknown data_format: {data_format}")
    return data_format


def _padding(padding):
    if padding not in _PADDINGS:
        raise ValueError(f"Invalid padding: {padding}")
    return _PADDINGS[padding]


def _tf_format(data_format, rank: int) -> str:
    spatial = "DHW"[3 - rank:]
    return f"NC{spatial}" if data_format == "channels_first" else f"N{spatial}C"


# -- activations -----------------------------------------------------------------------------
@keras_export("keras.backend.relu")
def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    x = convert_to_tensor(x)
    if alpha != 0.0 and max_value is None and threshold == 0:
        return nn_activation.leaky_relu(x, alpha=alpha)
    negative = nn_activation.relu(-x + threshold) if alpha != 0.0 else None
    if threshold != 0:
        x = x * cast(comparison.greater(x, threshold), x.dtype)
    elif max_value == 6:
        x, max_value = nn_activation.relu6(x), None
    else:
        x = nn_activation.relu(x)
    if max_value is not None:
        x = math.clip_by_value(x, convert_to_tensor(0, x.dtype),
                               convert_to_tensor(max_value, x.dtype))
    if negative is not None:
        x = x - convert_to_tensor(alpha, x.dtype) * negative
    return x


@keras_export("keras.backend.elu")
def elu(x, alpha=1.0):
    res = nn_activation.elu(x)
    return res if alpha == 1 else arithmetic.where(comparison.greater(x, 0), res, alpha * res)


@keras_export("keras.backend.softmax")
def softmax(x, axis=-1):
    x = convert_to_tensor(x)
    if x.shape.rank is not None and x.shape.rank <= 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input: {x}")
    return nn_activation.softmax(x, axis=axis)


@keras_export("keras.backend.softplus")
def softplus(x):
    return nn_activation.softplus(x)


@keras_export("keras.backend.hard_sigmoid")
def hard_sigmoid(x):
    x = convert_to_tensor(x)
    return math.clip_by_value(x * convert_to_tensor(0.2, x.dtype) +
                              convert_to_tensor(0.5, x.dtype), 0.0, 1.0)


@keras_export("keras.backend.dropout")
def dropout(x, level, noise_shape=None, seed=None):
    seed = int(np.random.randint(10e6)) if seed is None else seed
    return nn_dropout.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


@keras_export("keras.backend.bias_add")
def bias_add(x, bias, data_format=None):
    data_format = _data_format(data_format)
    x, bias = convert_to_tensor(x), convert_to_tensor(bias)
    rank, bias_rank = x.shape.rank, bias.shape.rank
    if bias_rank not in (1, rank - 1):
        raise ValueError(f"Unexpected bias dimensions {bias_rank}. Expected it to be 1 or "
                         f"{rank - 1} dimensions")
    if bias_rank == 1:
        fmt = "NCHW" if data_format == "channels_first" else "NHWC"
        return nn_conv.bias_add(x, bias, data_format=fmt if rank >= 3 else None)
    bias_shape = tuple(bias.shape.as_list())
    if data_format == "channels_first" and rank in (3, 4, 5):
        return x + array_core.reshape(bias, (1, bias_shape[-1]) + bias_shape[:-1])
    return x + array_core.reshape(bias, (1,) + bias_shape)


@keras_export("keras.backend.batch_normalization")
def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=0.001):  # noqa: F811
    return nn_norm.batch_normalization(x, mean, var, beta, gamma, epsilon)


# -- losses (Keras 2: probabilities clipped to [eps, 1 - eps]) -------------------------------
@keras_export("keras.backend.binary_crossentropy")
def binary_crossentropy(target, output, from_logits=False):
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    if from_logits:
        return nn_loss.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = epsilon()
    output = math.clip_by_value(output, eps, 1.0 - eps)
    bce = target * arithmetic.log(output + eps) + (1 - target) * arithmetic.log(1 - output + eps)
    return -bce


@keras_export("keras.backend.binary_focal_crossentropy")
def binary_focal_crossentropy(target, output, apply_class_balancing=False, alpha=0.25,
                              gamma=2.0, from_logits=False):
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    prob = math.sigmoid(output) if from_logits else output
    p_t = target * prob + (1 - target) * (1 - prob)
    focal = arithmetic.pow(1.0 - p_t, gamma) * binary_crossentropy(target, output, from_logits)
    if apply_class_balancing:
        focal = (target * alpha + (1 - target) * (1 - alpha)) * focal
    return focal


def _normalized_probabilities(output, axis):
    output = output / reduction.reduce_sum(output, axis, True)
    eps = epsilon()
    return math.clip_by_value(output, eps, 1.0 - eps)


@keras_export("keras.backend.categorical_crossentropy")
def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    if not target.shape.is_compatible_with(output.shape):
        raise ValueError(f"Shapes {target.shape} and {output.shape} are incompatible")
    if from_logits:
        return nn_loss.softmax_cross_entropy_with_logits(labels=target, logits=output,
                                                         axis=axis)
    return -reduction.reduce_sum(target * arithmetic.log(_normalized_probabilities(output, axis)),
                                 axis)


@keras_export("keras.backend.categorical_focal_crossentropy")
def categorical_focal_crossentropy(target, output, alpha=0.25, gamma=2.0, from_logits=False,
                                   axis=-1):
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    if from_logits:
        output = nn_activation.softmax(output, axis=axis)
    output = _normalized_probabilities(output, axis)
    cce = -target * arithmetic.log(output)
    return reduction.reduce_sum(arithmetic.pow(1.0 - output, gamma) * alpha * cce, axis=axis)


@keras_export("keras.backend.sparse_categorical_crossentropy")
def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1,
                                    ignore_class=None):
    target = cast(convert_to_tensor(target), dtypes.int64)
    output = convert_to_tensor(output)
    if not from_logits:
        eps = epsilon()
        output = arithmetic.log(math.clip_by_value(output, eps, 1 - eps))
    rank = output.shape.rank
    axis %= rank
    if axis != rank - 1:
        output = array_transpose.transpose(
            output, perm=[*range(axis), *range(axis + 1, rank), axis])
    out_shape = array_core.shape(output)
    reshape = target.shape.rank is not None and target.shape.rank != rank - 1
    if reshape:
        target = array_core.reshape(target, [-1])
        output = array_core.reshape(output, [-1, out_shape[-1]])
    if ignore_class is not None:
        valid = comparison.not_equal(target, cast(ignore_class, target.dtype))
        safe = arithmetic.where(valid, target, array_fill.zeros_like(target))
        res = nn_loss.sparse_softmax_cross_entropy_with_logits(labels=safe, logits=output)
        res = arithmetic.where(valid, res, array_fill.zeros_like(res))
        res = array_core.reshape(res, out_shape[:-1])
        res._keras_mask = array_core.reshape(valid, out_shape[:-1])
        return res
    res = nn_loss.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if reshape and rank >= 3:
        res = array_core.reshape(res, out_shape[:-1])
    return res


# -- convolutions and pooling ----------------------------------------------------------------
def _conv(x, kernel, strides, padding, data_format, dilation_rate, rank: int):
    data_format = _data_format(data_format)
    return nn_conv_nd.convolution_v1(x, kernel, padding=_padding(padding),
                                     strides=strides, dilation_rate=dilation_rate,
                                     data_format=_tf_format(data_format, rank))


@keras_export("keras.backend.conv1d")
def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    if padding == "causal":   # left-pad so outputs depend on the past only
        x = temporal_padding(x, (dilation_rate * (convert_to_tensor(kernel).shape[0] - 1), 0))
        padding = "valid"
    return _conv(x, kernel, strides, padding, data_format, dilation_rate, 1)


@keras_export("keras.backend.conv2d")
def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    return _conv(x, kernel, strides, padding, data_format, dilation_rate, 2)


@keras_export("keras.backend.conv3d")
def conv3d(x, kernel, strides=(1, 1, 1), padding="valid", data_format=None,
           dilation_rate=(1, 1, 1)):
    return _conv(x, kernel, strides, padding, data_format, dilation_rate, 3)


@keras_export("keras.backend.conv2d_transpose")
def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding="valid",
                     data_format=None, dilation_rate=(1, 1)):
    data_format = _data_format(data_format)
    fmt = _tf_format(data_format, 2)
    if output_shape[0] is None:
        output_shape = (array_core.shape(x)[0],) + tuple(output_shape[1:])
    output_shape = array_core.stack(list(output_shape))
    full = (1,) + tuple(strides) + (1,) if fmt == "NHWC" else (1, 1) + tuple(strides)
    return nn_conv.conv2d_transpose_v1(x, kernel, output_shape, full, padding=_padding(padding),
                                       data_format=fmt, dilations=dilation_rate)


@keras_export("keras.backend.depthwise_conv2d")
def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    fmt = _tf_format(_data_format(data_format), 2)
    full = (1,) + tuple(strides) + (1,) if fmt == "NHWC" else (1, 1) + tuple(strides)
    return nn_conv.depthwise_conv2d(x, depthwise_kernel, strides=full,
                                    padding=_padding(padding), data_format=fmt,
                                    dilations=dilation_rate)


@keras_export("keras.backend.separable_conv2d")
def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding="valid",
                     data_format=None, dilation_rate=(1, 1)):
    fmt = _tf_format(_data_format(data_format), 2)
    full = (1,) + tuple(strides) + (1,) if fmt == "NHWC" else (1, 1) + tuple(strides)
    return nn_conv_nd.separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=full,
                                       padding=_padding(padding), data_format=fmt,
                                       dilations=dilation_rate)


def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank):
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pooling mode: {pool_mode}")
    if len(pool_size) != rank:
        raise ValueError(f"`pool_size` must be a tuple of {rank} integers.")
    if len(strides) != rank:
        raise ValueError(f"`strides` must be a tuple of {rank} integers.")
    fmt = _tf_format(_data_format(data_format), rank)
    fn = nn_pool.max_pool if pool_mode == "max" else nn_pool.avg_pool
    return fn(x, list(pool_size), list(strides), _padding(padding), data_format=fmt)


@keras_export("keras.backend.pool2d")
def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2)


@keras_export("keras.backend.pool3d")
def pool3d(x, pool_size, strides=(1, 1, 1), padding="valid", data_format=None,
           pool_mode="max"):
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3)


# -- padding and resizing --------------------------------------------------------------------
@keras_export("keras.backend.temporal_padding")
def temporal_padding(x, padding=(1, 1)):
    if len(padding) != 2:
        raise ValueError("Expected `padding` to be a tuple of 2 integers. Received: "
                         f"padding={padding}")
    return array_fill.pad(x, [[0, 0], list(padding), [0, 0]])


def _spatial_padding(x, padding, data_format, rank):
    if len(padding) != rank or any(len(p) != 2 for p in padding):
        raise ValueError(f"Expected `padding` to be a tuple of {rank} tuples of 2 integers. "
                         f"Received: padding={padding}")
    pads = [list(p) for p in padding]
    if _data_format(data_format) == "channels_first":
        return array_fill.pad(x, [[0, 0], [0, 0]] + pads)
    return array_fill.pad(x, [[0, 0]] + pads + [[0, 0]])


@keras_export("keras.backend.spatial_2d_padding")
def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    return _spatial_padding(x, padding, data_format, 2)


@keras_export("keras.backend.spatial_3d_padding")
def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    return _spatial_padding(x, padding, data_format, 3)


@keras_export("keras.backend.resize_images")
def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Invalid `data_format` argument: {data_format}")
    if interpolation not in _RESIZE:
        names = '"' + '", "'.join(_RESIZE) + '"'
        raise ValueError(f"`interpolation` argument should be one of: {names}. Received: "
                         f'"{interpolation}".')
    x = convert_to_tensor(x)
    if data_format == "channels_first":
        x = array_transpose.transpose(x, perm=[0, 2, 3, 1])
    h, w = x.shape.as_list()[1:3]
    size = [h * height_factor, w * width_factor] if None not in (h, w) else \
        array_core.shape(x)[1:3] * np.array([height_factor, width_factor], np.int32)
    x = image_resize.resize(x, size, method=_RESIZE[interpolation])
    if data_format == "channels_first":
        x = array_transpose.transpose(x, perm=[0, 3, 1, 2])
    return x


@keras_export("keras.backend.resize_volumes")
def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    axes = {"channels_first": (2, 3, 4), "channels_last": (1, 2, 3)}.get(data_format)
    if axes is None:
        raise ValueError(f"Invalid data_format: {data_format}")
    for axis, factor in zip(axes, (depth_factor, height_factor, width_factor)):
        x = repeat_elements(x, factor, axis)
    return x


# -- control flow and gradients --------------------------------------------------------------
@keras_export("keras.backend.switch")
def switch(condition, then_expression, else_expression):
    condition = convert_to_tensor(condition)
    if condition.dtype != dtypes.bool:
        condition = cast(condition, dtypes.bool)
    if not condition.shape.rank:
        then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
        else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
        return control_flow.cond(condition, then_fn, else_fn)
    then_value = then_expression() if callable(then_expression) else then_expression
    else_value = else_expression() if callable(else_expression) else else_expression
    then_value, else_value = convert_to_tensor(then_value), convert_to_tensor(else_value)
    cond_rank, expr_rank = condition.shape.rank, then_value.shape.rank
    if cond_rank > expr_rank:
        raise ValueError("Rank of `condition` should be less than or equal to rank of "
                         "`then_expression` and `else_expression`. "
                         f"ndim(condition)={cond_rank}, ndim(then_expression)={expr_rank}")
    if cond_rank < expr_rank:
        condition = array_core.reshape(condition, condition.shape.as_list() +
                                       [1] * (expr_rank - cond_rank))
        condition = condition & array_fill.ones_like(then_value, dtype=dtypes.bool)
    return arithmetic.where(condition, then_value, else_value)


@keras_export("keras.backend.map_fn")
def map_fn(fn, elems, name=None, dtype=None):
    return functional_ops.map_fn(fn, elems, name=name, dtype=dtype)


@keras_export("keras.backend.foldl")
def foldl(fn, elems, initializer=None, name=None):
    return functional_ops.foldl(fn, elems, initializer=initializer, name=name)


@keras_export("keras.backend.foldr")
def foldr(fn, elems, initializer=None, name=None):
    return functional_ops.foldr(fn, elems, initializer=initializer, name=name)


@keras_export("keras.backend.gradients")
def gradients(loss, variables):
    return _gradients(loss, variables, colocate_gradients_with_ops=True)



docstrings.attach(globals(), backend_legacy_nn_docs.DOCS)

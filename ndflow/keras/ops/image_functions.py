"""`keras.ops.image`: resize (with crop/pad to the aspect ratio), affine_transform,
perspective_transform, extract_patches (2D/3D), pad_images, crop_images, rgb_to_grayscale,
rgb_to_hsv, hsv_to_rgb, map_coordinates, gaussian_blur, sobel_edges, as Keras 3 runs them
on the TensorFlow backend. `data_format` defaults to keras.config.image_data_format()."""

from __future__ import annotations

import numpy as np

from ndflow.keras import docstrings
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import image_docs
from ndflow.keras.ops import nn_conv_functions as nn_conv
from ndflow.keras.ops import numpy_array as arr
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_nd,
    array_range,
    cast_bits,
    comparison,
    image_color,
    image_resize,
    image_transform,
    linalg_decomp,
    linalg_extra,
    math,
    reduction,
)
from ndflow.ops.cast import cast

_RESIZE = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")
_FILL_MODES = ("constant", "nearest", "wrap", "reflect")


def _img(name, **kwargs):
    return keras_op(name, "image", **kwargs)


def _format(data_format):
    return nn_conv._format(data_format)


def _images(images):
    images = rules.to_tensor(images)
    if images.shape.rank not in (3, 4):
        raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 (batch "
                         "of images). Received input with shape: "
                         f"images.shape={tuple(images.shape.as_list())}")
    return images


def _to_last(images, data_format):
    if data_format == "channels_first":
        return arr.moveaxis(images, -3, -1)
    return images


def _from_last(images, data_format):
    if data_format == "channels_first":
        return arr.moveaxis(images, -1, -3)
    return images


def _aspect_box(height, width, target_h, target_w, grow):
    """The crop (grow=False) or pad (grow=True) box of the target's aspect ratio."""
    box_h = int(width * target_h / target_w)
    box_w = int(height * target_w / target_h)
    if grow:
        return max(height, box_h), max(width, box_w)
    return max(min(height, box_h), 1), max(min(width, box_w), 1)


def check_resize_arguments(size, interpolation, fill_mode, crop_to_aspect_ratio,
                           pad_to_aspect_ratio) -> None:
    """Keras' ValueErrors for `resize` arguments it does not accept (the Resizing layer's
    too)."""
    if interpolation not in _RESIZE:
        raise ValueError(f"Invalid value for argument `interpolation`. Expected of one "
                         f"{_RESIZE}. Received: interpolation={interpolation}")
    if fill_mode != "constant":
        raise ValueError("Invalid value for argument `fill_mode`. Only `'constant'` is "
                         f"supported. Received: fill_mode={fill_mode}")
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be "
                         "`True`.")
    if len(size) != 2:
        raise ValueError("Argument `size` must be a tuple of two elements (height, width). "
                         f"Received: size={size}")


@_img("resize")
def resize(images, size, interpolation="bilinear", antialias=False,
           crop_to_aspect_ratio=False, pad_to_aspect_ratio=False, fill_mode="constant",
           fill_value=0.0, data_format=None):
    data_format = _format(data_format)
    check_resize_arguments(size, interpolation, fill_mode, crop_to_aspect_ratio,
                           pad_to_aspect_ratio)
    images = _to_last(_images(images), data_format)
    height, width = images.shape[-3], images.shape[-2]
    if (crop_to_aspect_ratio or pad_to_aspect_ratio) and None in (height, width):
        raise ValueError("crop/pad to the aspect ratio needs static image sizes")
    if crop_to_aspect_ratio:
        box_h, box_w = _aspect_box(height, width, size[0], size[1], grow=False)
        top, left = (height - box_h) // 2, (width - box_w) // 2
        images = images[..., top:top + box_h, left:left + box_w, :]
    elif pad_to_aspect_ratio:
        box_h, box_w = _aspect_box(height, width, size[0], size[1], grow=True)
        top, left = (box_h - height) // 2, (box_w - width) // 2
        pads = [[top, top], [left, left], [0, 0]]
        if images.shape.rank == 4:
            pads = [[0, 0]] + pads
        images = array_fill.pad(images, pads, constant_values=cast(fill_value, images.dtype))
    out = image_resize.resize(images, list(size), method=interpolation, antialias=antialias)
    if out.dtype != images.dtype:   # Keras returns the input's dtype (ints rounded)
        if images.dtype.is_integer:
            out = math.round(out)
        out = cast_bits.saturate_cast(out, images.dtype)
    return _from_last(out, data_format)


@_img("affine_transform")
def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant",
                     fill_value=0, data_format=None):
    data_format = _format(data_format)
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                         f"('nearest', 'bilinear'). Received: interpolation={interpolation}")
    if fill_mode not in _FILL_MODES:
        raise ValueError(f"Invalid value for argument `fill_mode`. Expected of one "
                         f"{_FILL_MODES}. Received: fill_mode={fill_mode}")
    images, transform = _images(images), rules.to_tensor(transform)
    if transform.shape.rank not in (1, 2):
        raise ValueError("Invalid transform rank: expected rank 1 (single transform) or rank "
                         "2 (batch of transforms). Received input with shape: "
                         f"transform.shape={tuple(transform.shape.as_list())}")
    single = images.shape.rank == 3
    if single:
        images = array_core.expand_dims(images, 0)
    if transform.shape.rank == 1:
        transform = array_core.expand_dims(transform, 0)
    images = _to_last(images, data_format)
    out = image_transform.image_projective_transform_v3(
        images, cast(transform, "float32"), array_core.shape(images)[1:3],
        fill_value=fill_value, interpolation=interpolation, fill_mode=fill_mode)
    # the op's shape function knows no size computed from a shape; Keras keeps the input's
    out = array_core.ensure_shape(out, images.shape)
    out = _from_last(out, data_format)
    return array_core.squeeze(out, axis=[0]) if single else out


def _homography(start_points, end_points):
    """The 8 projective coefficients mapping end_points to start_points (per batch)."""
    start = cast(rules.to_tensor(start_points), "float32")
    end = cast(rules.to_tensor(end_points), "float32")
    rows = []
    for i in range(4):
        (x, y), (u, v) = (end[:, i, 0], end[:, i, 1]), (start[:, i, 0], start[:, i, 1])
        zero, one = array_fill.zeros_like(x), array_fill.ones_like(x)
        rows.append(array_core.stack([x, y, one, zero, zero, zero, -u * x, -u * y], -1))
        rows.append(array_core.stack([zero, zero, zero, x, y, one, -v * x, -v * y], -1))
    a = array_core.stack(rows, axis=1)
    b = array_core.stack([start[:, i, j] for i in range(4) for j in range(2)], axis=1)
    return array_core.squeeze(linalg_decomp.matrix_solve(a, array_core.expand_dims(b, -1)),
                              axis=[-1])


@_img("perspective_transform")
def perspective_transform(images, start_points, end_points, interpolation="bilinear",
                          fill_value=0, data_format=None):
    start, end = rules.to_tensor(start_points), rules.to_tensor(end_points)
    if start.shape.rank == 2:
        start, end = array_core.expand_dims(start, 0), array_core.expand_dims(end, 0)
    return affine_transform(images, _homography(start, end), interpolation=interpolation,
                            fill_mode="constant", fill_value=fill_value,
                            data_format=data_format)


def _patch_size(size, n):
    if isinstance(size, int):
        return [size] * n
    if len(size) != n:
        raise TypeError(f"Invalid `size` argument. Expected an int or a tuple of length {n}. "
                        f"Received: size={size}")
    return list(size)


def _patches(images, size, strides, dilation_rate, padding, data_format, n):
    data_format = _format(data_format)
    images = rules.to_tensor(images)
    size = _patch_size(size, n)
    channels = images.shape[-1] if data_format == "channels_last" else images.shape[-n - 1]
    out_dim = int(np.prod(size)) * channels
    kernel = array_core.reshape(arr.eye(out_dim, dtype=images.dtype.name), size +
                                [channels, out_dim])
    single = images.shape.rank == n + 1
    if single:
        images = array_core.expand_dims(images, 0)
    out = nn_conv.conv(images, kernel, strides=strides or size, padding=padding,
                       data_format=data_format, dilation_rate=dilation_rate)
    return array_core.squeeze(out, axis=[0]) if single else out


@_img("extract_patches")
def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid",
                    data_format=None):
    if not isinstance(size, int) and len(size) == 3:
        return extract_patches_3d(images, size, strides, dilation_rate, padding, data_format)
    return _patches(images, size, strides, dilation_rate, padding, data_format, 2)


@_img("extract_patches_3d")
def extract_patches_3d(volumes, size, strides=None, dilation_rate=1, padding="valid",
                       data_format=None):
    return _patches(volumes, size, strides, dilation_rate, padding, data_format, 3)


def _hw(images, data_format):
    shape = images.shape.as_list()
    return (shape[-3], shape[-2]) if data_format == "channels_last" else (shape[-2], shape[-1])


def _exactly_two(**given) -> None:
    """Raises Keras' ValueError unless exactly one of the three `given` sizes is None."""
    if list(given.values()).count(None) != 1:
        received = ", ".join(f"{name}={value}" for name, value in given.items())
        raise ValueError(f"Must specify exactly two of {', '.join(given)}. Received: {received}")


def _non_negative(**sizes) -> None:
    for name, value in sizes.items():
        if value < 0:
            raise ValueError(f"{name} must be >= 0. Received: {name}={value}")


@_img("pad_images")
def pad_images(images, top_padding=None, left_padding=None, bottom_padding=None,
               right_padding=None, target_height=None, target_width=None, data_format=None):
    data_format = _format(data_format)
    images = _images(images)
    _exactly_two(top_padding=top_padding, bottom_padding=bottom_padding,
                 target_height=target_height)
    _exactly_two(left_padding=left_padding, right_padding=right_padding,
                 target_width=target_width)
    height, width = _hw(images, data_format)
    top = target_height - bottom_padding - height if top_padding is None else top_padding
    bottom = target_height - top - height if bottom_padding is None else bottom_padding
    left = target_width - right_padding - width if left_padding is None else left_padding
    right = target_width - left - width if right_padding is None else right_padding
    _non_negative(top_padding=top, left_padding=left, right_padding=right,
                  bottom_padding=bottom)
    pads = [[top, bottom], [left, right]]
    pads = pads + [[0, 0]] if data_format == "channels_last" else [[0, 0]] + pads
    if images.shape.rank == 4:
        pads = [[0, 0]] + pads
    return array_fill.pad(images, pads)


@_img("crop_images")
def crop_images(images, top_cropping=None, left_cropping=None, bottom_cropping=None,
                right_cropping=None, target_height=None, target_width=None, data_format=None):
    data_format = _format(data_format)
    images = _images(images)
    _exactly_two(top_cropping=top_cropping, bottom_cropping=bottom_cropping,
                 target_height=target_height)
    _exactly_two(left_cropping=left_cropping, right_cropping=right_cropping,
                 target_width=target_width)
    height, width = _hw(images, data_format)
    top = height - target_height - bottom_cropping if top_cropping is None else top_cropping
    th = height - bottom_cropping - top if target_height is None else target_height
    left = width - target_width - right_cropping if left_cropping is None else left_cropping
    tw = width - right_cropping - left if target_width is None else target_width
    _non_negative(top_cropping=top, target_height=th, left_cropping=left, target_width=tw)
    if data_format == "channels_last":
        return images[..., top:top + th, left:left + tw, :]
    return images[..., top:top + th, left:left + tw]


@_img("rgb_to_grayscale")
def rgb_to_grayscale(images, data_format=None):
    data_format = _format(data_format)
    images = _images(images)
    axis = -1 if data_format == "channels_last" else -3
    if images.shape[axis] not in (1, 3):
        raise ValueError("Invalid channel size: expected 3 (RGB) or 1 (Grayscale). Received "
                         f"input with shape: images.shape={tuple(images.shape.as_list())}")
    if images.shape[axis] == 1:
        return array_core.identity(images)
    original = images.dtype
    x = cast(images, rules.result_type(original.name, float))
    weights = cast(rules.to_tensor([0.2989, 0.5870, 0.1140]), x.dtype)
    gray = linalg_extra.tensordot(x, weights, axes=[[x.shape.rank + axis], [0]])
    return cast(array_core.expand_dims(gray, axis), original)


def _hsv(fn, images, data_format):
    data_format = _format(data_format)
    images = _images(images)
    if not images.dtype.is_floating:
        raise ValueError("Invalid images dtype: expected float dtype. Received: "
                         f"images.dtype={images.dtype.name}")
    return _from_last(fn(_to_last(images, data_format)), data_format)


@_img("rgb_to_hsv")
def rgb_to_hsv(images, data_format=None):
    return _hsv(image_color.rgb_to_hsv, images, data_format)


@_img("hsv_to_rgb")
def hsv_to_rgb(images, data_format=None):
    return _hsv(image_color.hsv_to_rgb, images, data_format)


def _fix_index(index, size, fill_mode):
    if fill_mode == "nearest":
        return math.clip_by_value(index, cast(0, index.dtype), size - 1)
    if fill_mode == "wrap":
        return arithmetic.floormod(index, size)
    if fill_mode == "mirror":   # ... 2 1 | 0 1 2 | 1 0 ...
        period = 2 * (size - 1)
        m = arithmetic.floormod(index, arithmetic.maximum(period, cast(1, index.dtype)))
        return arithmetic.where(comparison.less(m, size), m, period - m)
    if fill_mode == "reflect":  # Keras': |i| reflected at the far edge (-1 -> 1, n -> n - 1)
        m = arithmetic.floormod(math.abs(index), 2 * size)
        return arithmetic.where(comparison.less(m, size), m, 2 * size - 1 - m)
    return index


@_img("map_coordinates")
def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0.0):
    modes = ("constant", "nearest", "wrap", "mirror", "reflect")
    if fill_mode not in modes:
        raise ValueError(f"Invalid value for argument `fill_mode`. Expected one of {modes}. "
                         f"Received: fill_mode={fill_mode}")
    if order not in (0, 1):
        raise NotImplementedError("map_coordinates currently requires order<=1")
    x = rules.to_tensor(inputs)
    coords = rules.to_tensor(coordinates)
    if coords.shape[0] != x.shape.rank:
        raise ValueError("First dim of `coordinates` must be the same as the rank of "
                         f"`inputs`. Received inputs with shape: {x.shape} and coordinate "
                         f"leading dim of {coords.shape[0]}")
    coords = cast(coords, rules.result_type(x.dtype.name, float)
                  if not coords.dtype.is_floating else coords.dtype.name)
    sizes = array_core.shape(x)
    per_dim = []
    for d in range(x.shape.rank):
        c = coords[d]
        size = cast(sizes[d], "int32")
        if order == 0:
            options = [(cast(math.round(c), "int32"), None)]
        else:
            lo = math.floor(c)
            w_hi = c - lo
            options = [(cast(lo, "int32"), 1 - w_hi), (cast(lo, "int32") + 1, w_hi)]
        fixed = []
        for idx, w in options:
            valid = comparison.logical_and(comparison.greater_equal(idx, 0),
                                           comparison.less(idx, size))
            fixed.append((_fix_index(idx, size, fill_mode), valid, w))
        per_dim.append(fixed)
    out = None
    dtype = coords.dtype
    for combo in _product(per_dim):
        idx = array_core.stack([c[0] for c in combo], axis=-1)
        value = cast(array_nd.gather_nd(x, _clip_all(idx, sizes)), dtype)
        if fill_mode == "constant":
            valid = combo[0][1]
            for c in combo[1:]:
                valid = comparison.logical_and(valid, c[1])
            value = arithmetic.where(valid, value, cast(fill_value, dtype))
        weight = None
        for c in combo:
            if c[2] is not None:
                weight = c[2] if weight is None else weight * c[2]
        term = value if weight is None else value * weight
        out = term if out is None else out + term
    if x.dtype.is_integer:
        out = math.round(out)
    return cast(out, x.dtype)


def _clip_all(idx, sizes):
    top = cast(sizes, "int32") - 1
    return arithmetic.minimum(arithmetic.maximum(idx, 0), top)


def _product(lists):
    if not lists:
        return [[]]
    rest = _product(lists[1:])
    return [[a] + r for a in lists[0] for r in rest]


def _depthwise_filter(images, kernel_2d, data_format):
    """Each channel convolved with `kernel_2d` (same padding)."""
    images = _to_last(images, data_format)
    single = images.shape.rank == 3
    if single:
        images = array_core.expand_dims(images, 0)
    channels = images.shape[-1]
    kernel = array_fill.tile(array_core.reshape(cast(kernel_2d, images.dtype),
                                                list(kernel_2d.shape) + [1, 1]),
                             [1, 1, channels, 1])
    out = nn_conv.depthwise_conv(images, kernel, padding="same",
                                 data_format="channels_last")
    out = array_core.squeeze(out, axis=[0]) if single else out
    return _from_last(out, data_format)


@_img("gaussian_blur")
def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    data_format = _format(data_format)
    images = _images(images)
    original = images.dtype
    images = cast(images, rules.result_type(original.name, float))

    sigma = cast(rules.to_tensor(sigma), images.dtype)   # also a tensor (RandomGaussianBlur)

    def kernel_1d(n, s):
        """Keras' TF construction, in the images' dtype."""
        x = array_range.range(0, n, dtype=images.dtype) - cast((n - 1) / 2, images.dtype)
        k = math.exp(-0.5 * math.square(x / s))
        return k / reduction.reduce_sum(k)
    # Keras' construction: outer(k_y, k_x) laid out as (kernel_size[0], kernel_size[1])
    k = array_core.reshape(
        array_core.expand_dims(kernel_1d(kernel_size[1], sigma[1]), 1)
        * array_core.expand_dims(kernel_1d(kernel_size[0], sigma[0]), 0),
        [kernel_size[0], kernel_size[1]])
    out = _depthwise_filter(images, k, data_format)
    return cast(out, original)


@_img("sobel_edges")
def sobel_edges(images, data_format=None):
    data_format = _format(data_format)
    images = _images(images)
    x = _to_last(images, data_format)
    single = x.shape.rank == 3
    if single:
        x = array_core.expand_dims(x, 0)
    padded = array_fill.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], dtype=np.float64)
    outs = []
    for k in (ky, ky.T):
        kern = array_fill.tile(array_core.reshape(cast(k, x.dtype), [3, 3, 1, 1]),
                               [1, 1, x.shape[-1], 1])
        outs.append(nn_conv.depthwise_conv(padded, kern, padding="valid",
                                           data_format="channels_last"))
    out = array_core.stack(outs, axis=-1)
    out = array_core.squeeze(out, axis=[0]) if single else out
    if data_format == "channels_first":
        out = arr.moveaxis(out, -2, -4)
    return out


@_img("ssim")
def ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         data_format=None):
    data_format = _format(data_format)
    a = _to_last(cast(_images(image1), "float32"), data_format)
    b = _to_last(cast(_images(image2), "float32"), data_format)
    x = np.arange(filter_size) - (filter_size - 1) / 2.0
    g = np.exp(-(x ** 2) / (2.0 * filter_sigma ** 2))
    g /= g.sum()
    kernel = np.outer(g, g)

    def blur(t):
        single = t.shape.rank == 3
        t4 = array_core.expand_dims(t, 0) if single else t
        kern = array_fill.tile(array_core.reshape(cast(kernel, t.dtype),
                                                  [filter_size, filter_size, 1, 1]),
                               [1, 1, t4.shape[-1], 1])
        out = nn_conv.depthwise_conv(t4, kern, padding="valid", data_format="channels_last")
        return array_core.squeeze(out, axis=[0]) if single else out
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mu_a, mu_b = blur(a), blur(b)
    var_a = blur(a * a) - mu_a * mu_a
    var_b = blur(b * b) - mu_b * mu_b
    cov = blur(a * b) - mu_a * mu_b
    value = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / \
        ((mu_a * mu_a + mu_b * mu_b + c1) * (var_a + var_b + c2))
    axes = [-3, -2, -1]
    return reduction.reduce_mean(value, axis=axes)


docstrings.attach(globals(), image_docs.DOCS)

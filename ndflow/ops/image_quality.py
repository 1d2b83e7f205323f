"""Image quality measures built from ops, as TensorFlow's image_ops_impl builds them:
`tf.image.ssim` (Wang et al.'s structural similarity with an 11x11 Gaussian window),
`tf.image.ssim_multiscale` (MS-SSIM over five scales of 2x2 average pooling) and
`tf.image.sobel_edges` (the two 3x3 Sobel filters, reflect-padded, per channel).

The same ops in the same order as TensorFlow's composites (the window a softmax of
-x^2 / 2 sigma^2, depthwise VALID convolutions, the luminance and contrast-structure terms),
so values agree with TensorFlow's to float32 rounding.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_slicing,
    cast,
    comparison,
    math,
    reduction,
)
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_range import range as range_
from ndflow.ops.control_flow_assert import Assert
from ndflow.ops.image_adjust import convert_image_dtype
from ndflow.ops.nn_activation import relu, softmax
from ndflow.ops.nn_conv import depthwise_conv2d
from ndflow.ops.nn_pool import avg_pool

_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _compatible(img1: Tensor, img2: Tensor) -> tuple:
    """(shape1, shape2, checks): TF's rules, ranks >= 3, the last three dims equal, the
    leading dims broadcastable."""
    s1, s2 = img1.shape, img2.shape
    for s in (s1, s2):
        if s.rank is not None and s.rank < 3:
            raise ValueError(f"Shape {s} must have rank at least 3")
    if s1.rank is not None and s2.rank is not None:
        if not TensorShape(s1.as_list()[-3:]).is_compatible_with(
                TensorShape(s2.as_list()[-3:])):
            raise ValueError(f"Shapes {TensorShape(s1.as_list()[-3:])} and "
                             f"{TensorShape(s2.as_list()[-3:])} are incompatible")
        for d1, d2 in zip(reversed(s1.as_list()[:-3]), reversed(s2.as_list()[:-3])):
            if not (d1 == 1 or d2 == 1 or d1 is None or d2 is None or d1 == d2):
                raise ValueError(f"Two images are not compatible: {s1} and {s2}")
    shape1, shape2 = array_core.shape_n([img1, img2])
    checks = [
        Assert(comparison.greater_equal(array_core.size(shape1), 3), [shape1, shape2],
               summarize=10),
        Assert(reduction.reduce_all(comparison.equal(shape1[-3:], shape2[-3:])),
               [shape1, shape2], summarize=10)]
    return shape1, shape2, checks


def _gaussian_window(size: int, sigma: float, dtype) -> Tensor:
    """MATLAB's fspecial('gaussian'): exp(-(x^2 + y^2) / 2 sigma^2), normalized by a
    softmax over the whole window, shaped [size, size, 1, 1]."""
    sigma = convert_to_tensor(sigma, dtype)
    coords = cast.cast(range_(size), dtype)
    coords -= cast.cast(size - 1, dtype) / 2.0
    g = math.square(coords)
    g *= -0.5 / math.square(sigma)
    g = array_core.reshape(g, [1, -1]) + array_core.reshape(g, [-1, 1])
    return array_core.reshape(softmax(array_core.reshape(g, [1, -1])), [size, size, 1, 1])


def _luminance_and_cs(x, y, reducer, max_val, compensation, k1, k2) -> tuple:
    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0, mean1 = reducer(x), reducer(y)
    num0 = mean0 * mean1 * 2.0
    den0 = math.square(mean0) + math.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x * y) * 2.0
    den1 = reducer(math.square(x) + math.square(y))
    c2 *= compensation
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance, cs


def _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2,
                      index_map=False) -> tuple:
    """(SSIM, contrast-structure) per channel: [..., channels] (or maps)."""
    shape1, shape2 = array_core.shape_n([img1, img2])
    size = convert_to_tensor(filter_size, dtypes.int32)
    checks = [Assert(reduction.reduce_all(comparison.greater_equal(s[-3:-1], size)),
                     [s, size], summarize=8) for s in (shape1, shape2)]
    with control_dependencies(checks):
        img1 = array_core.identity(img1)
    window = array_fill.tile(_gaussian_window(filter_size, filter_sigma, img1.dtype),
                             array_slicing.concat([[1, 1], shape1[-1:], [1]], 0))

    def reducer(x):
        s = array_core.shape(x)
        flat = array_core.reshape(x, array_slicing.concat([[-1], s[-3:]], 0))
        y = depthwise_conv2d(flat, window, strides=[1, 1, 1, 1], padding="VALID")
        return array_core.reshape(
            y, array_slicing.concat([s[:-3], array_core.shape(y)[1:]], 0))

    luminance, cs = _luminance_and_cs(img1, img2, reducer, max_val, 1.0, k1, k2)
    if index_map:
        return luminance * cs, cs
    axes = convert_to_tensor([-3, -2], dtypes.int32)
    return reduction.reduce_mean(luminance * cs, axes), reduction.reduce_mean(cs, axes)


def _prepared(img1, img2, max_val) -> tuple:
    """(img1, img2, max_val, shape1, shape2): the images as float32 tensors, checked
    compatible (TF's assertions gate img1), and max_val scaled as the images are."""
    img1, img2 = convert_to_tensor(img1, name="img1"), convert_to_tensor(img2, name="img2")
    shape1, shape2, checks = _compatible(img1, img2)
    with control_dependencies(checks):
        img1 = array_core.identity(img1)
    max_val = convert_image_dtype(cast.cast(max_val, img1.dtype), dtypes.float32)
    return (convert_image_dtype(img1, dtypes.float32),
            convert_image_dtype(img2, dtypes.float32), max_val, shape1, shape2)


@tf_export("image.ssim")
def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         return_index_map=False) -> Tensor:
    """`tf.image.ssim`: the structural similarity of each pair of images (averaged over
    channels; with `return_index_map`, the local SSIM map)."""
    with name_scope(None, "SSIM"):
        img1, img2, max_val, _, _ = _prepared(img1, img2, max_val)
        per_channel, _ = _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma,
                                           k1, k2, return_index_map)
        return reduction.reduce_mean(per_channel, [-1])


def _halved(images: list, tails: list) -> list:
    """2x2 average pooling of each image (flattened to a batch), symmetric padding first
    when a height or width is odd."""
    divisor = convert_to_tensor([2, 2, 1], dtypes.int32)   # height, width, channels
    flat = [array_core.reshape(x, array_slicing.concat([[-1], t], 0))
            for x, t in zip(images, tails)]
    remainder = arithmetic.floormod(tails[0], divisor)

    def padded():
        pads = array_fill.pad(array_core.expand_dims(remainder, -1), [[1, 0], [1, 0]])
        return [array_fill.pad(x, pads, mode="SYMMETRIC") for x in flat]

    static = [x.shape for x in flat]
    if all(s.is_fully_defined() for s in static):   # decided now, as TF's cond would
        odd = any(d % 2 for d in static[0].as_list()[1:3])
        chosen = padded() if odd else flat
    else:
        need = reduction.reduce_any(comparison.not_equal(remainder, 0))
        chosen = context.hooks.case([(need, padded)], default=lambda: flat)
    return [avg_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
            for x in chosen]


@tf_export("image.ssim_multiscale")
def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03) -> Tensor:
    """`tf.image.ssim_multiscale`: MS-SSIM, the contrast-structure terms of the first
    scales and the SSIM of the last, each raised to its power factor, multiplied."""
    with name_scope(None, "MS-SSIM"):
        img1, img2, max_val, shape1, shape2 = _prepared(img1, img2, max_val)
        imgs = [img1, img2]
        heads = [s[:-3] for s in (shape1, shape2)]
        tails = [s[-3:] for s in (shape1, shape2)]
        mcs = []
        for k in range(len(power_factors)):
            with name_scope(None, f"Scale{k}"):
                if k > 0:
                    down = _halved(imgs, tails)
                    tails = [s[1:] for s in array_core.shape_n(down)]
                    imgs = [array_core.reshape(x, array_slicing.concat([h, t], 0))
                            for x, h, t in zip(down, heads, tails)]
                per_channel, cs = _ssim_per_channel(*imgs, max_val, filter_size,
                                                    filter_sigma, k1, k2)
                mcs.append(relu(cs))
        mcs.pop()    # the last scale contributes its SSIM, not its contrast-structure
        stacked = array_core.stack(mcs + [relu(per_channel)], axis=-1)
        ms_ssim = reduction.reduce_prod(arithmetic.pow(stacked, power_factors), [-1])
        return reduction.reduce_mean(ms_ssim, [-1])


_SOBEL = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                   [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])


@tf_export("image.sobel_edges")
def sobel_edges(image) -> Tensor:
    """`tf.image.sobel_edges`: [batch, h, w, d, 2], each channel's (dy, dx) Sobel responses
    over the image reflect-padded by one pixel."""
    image = convert_to_tensor(image)
    static = image.shape
    shape = array_core.shape(image)
    kernels = convert_to_tensor(np.expand_dims(np.transpose(_SOBEL, (1, 2, 0)), -2),
                                image.dtype)
    kernels = array_fill.tile(kernels, array_slicing.concat([[1, 1], shape[-1:], [1]], 0),
                              name="sobel_filters")
    padded = array_fill.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = depthwise_conv2d(padded, kernels, [1, 1, 1, 1], "VALID")
    out = array_core.reshape(out, array_slicing.concat([shape, [2]], 0))
    out.set_shape(static.concatenate([2]))
    return out

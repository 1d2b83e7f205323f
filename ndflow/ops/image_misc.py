"""`tf.image` odds and ends built from array ops, as in TF: rot90, transpose, adjust_gamma,
total_variation, image_gradients and psnr."""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import (
    arithmetic,
    array_fill,
    array_reorder,
    array_slicing,
    array_transpose,
    cast,
    comparison,
    math,
    reduction,
)
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.image_adjust import convert_image_dtype, to_float
from ndflow.ops.image_ops import assert_true, check_at_least_3d, static_value, with_dependencies


def _image_3_or_4(image) -> Tensor:
    image = convert_to_tensor(image, name="image")
    image = with_dependencies(check_at_least_3d(image), image)
    if image.shape.ndims not in (3, 4):
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    return image


@tf_export("image.rot90")
def rot90(image, k=1, name=None) -> Tensor:
    """`tf.image.rot90`: rotates each image counter-clockwise by k * 90 degrees."""
    with name_scope(name, "rot90"):
        image = _image_3_or_4(image)
        h = image.shape.ndims - 3  # the height axis
        swap = [0, 2, 1, 3] if h else [1, 0, 2]
        rotations = [
            lambda: image,
            lambda: array_transpose.transpose(array_reorder.reverse(image, [h + 1]), swap),
            lambda: array_reorder.reverse(image, [h, h + 1]),
            lambda: array_reorder.reverse(array_transpose.transpose(image, swap), [h + 1])]
        turns = static_value(k)
        if turns is not None:
            return rotations[int(turns) % 4]()
        # k known at run time only: TF's case over the four rotations (height and width
        # then unknown statically)
        k = arithmetic.floormod(convert_to_tensor(k, dtypes.int32), 4)
        return context.hooks.case(
            [(comparison.equal(k, turn), rotations[turn]) for turn in range(3)],
            default=rotations[3], exclusive=True)


@tf_export("image.transpose", v1=["image.transpose", "image.transpose_image"])
def transpose(image, name=None) -> Tensor:
    """`tf.image.transpose`: swaps the height and width axes."""
    image = _image_3_or_4(image)
    perm = [1, 0, 2] if image.shape.ndims == 3 else [0, 2, 1, 3]
    return array_transpose.transpose(image, perm, name=name)


@tf_export("image.adjust_gamma")
def adjust_gamma(image, gamma=1, gain=1) -> Tensor:
    """`tf.image.adjust_gamma`: gain * image ** gamma in float, converted back saturating."""
    with name_scope(None, "adjust_gamma"):
        image = convert_to_tensor(image, name="image")
        flt = to_float(image)
        message = "Gamma should be a non-negative real number."
        if isinstance(gamma, Tensor):
            gamma = with_dependencies(
                assert_true(comparison.greater_equal(gamma, 0), message), gamma)
        else:
            assert_true(gamma >= 0, message)
        adjusted = gain * arithmetic.pow(flt, gamma)
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


@tf_export("image.total_variation")
def total_variation(images, name=None) -> Tensor:
    """`tf.image.total_variation`: sum of absolute differences of neighboring pixels, per
    image."""
    with name_scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        ndims = images.shape.ndims
        if ndims == 3:
            d1 = images[1:, :, :] - images[:-1, :, :]
            d2 = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            d1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            d2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return reduction.reduce_sum(math.abs(d1), axis=axis) + \
            reduction.reduce_sum(math.abs(d2), axis=axis)



@tf_export("image.image_gradients")
def image_gradients(image) -> tuple:
    """`tf.image.image_gradients`: (dy, dx), forward differences with a zero last row /
    column, for a 4-D batch."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"{image.shape}.")
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = array_slicing.concat([dy, array_fill.zeros_like(image[:, :1, :, :])], 1)
    dx = array_slicing.concat([dx, array_fill.zeros_like(image[:, :, :1, :])], 2)
    return dy, dx


@tf_export("image.psnr")
def psnr(a, b, max_val, name=None) -> Tensor:
    """`tf.image.psnr`: 20 log10(max_val) - 10 log10(mean squared error), per image."""
    with name_scope(name, "PSNR"):
        a, b = convert_to_tensor(a, name="a"), convert_to_tensor(b, name="b")
        if not a.shape.is_compatible_with(b.shape) or (
                a.shape.ndims is not None and a.shape.ndims < 3):
            raise ValueError(f"Two images are not compatible: {a.shape} and {b.shape}")
        max_val = convert_image_dtype(cast.cast(max_val, a.dtype), dtypes.float32)
        a, b = convert_image_dtype(a, dtypes.float32), convert_image_dtype(b, dtypes.float32)
        mse = reduction.reduce_mean(arithmetic.squared_difference(a, b), [-3, -2, -1])
        return arithmetic.subtract(20 * arithmetic.log(max_val) / arithmetic.log(10.0),
                                   np.float32(10 / np.log(10)) * arithmetic.log(mse), name="psnr")

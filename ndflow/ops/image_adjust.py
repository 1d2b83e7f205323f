"""`tf.image` pixel values: dtype conversion, grayscale, brightness and contrast.

`convert_image_dtype` follows TF's scaling: integers span [0, MAX] of their type and floats
[0, 1]; integer-to-integer conversions shift by the ratio of the ranges, float-to-integer ones
multiply by MAX + 0.5 (then cast, or saturate_cast with `saturate=True`). Brightness and
contrast work in float32 (float16 stays float16) and convert back with saturation, as TF does.
The contrast is TF's op AdjustContrastv2 (kernel: ndflow/kernels/image_color.py).
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_slicing,
    cast,
    cast_bits,
    image_adjust_docs,
    linalg_extra,
    math,
    random,
    stateless_random,
)
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def with_rank_at_least(shape, rank: int):
    """TF's shape-function check WithRankAtLeast (its error text)."""
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def adjust_shape(ctx):
    """Images of rank >= 3 and a scalar: the image's shape."""
    ctx.shapes[1].with_rank(0)
    return [with_rank_at_least(ctx.shapes[0], 3)]


AdjustContrastv2 = op_def(
    "AdjustContrastv2", inputs=["images: T", "contrast_factor: float"], outputs=["output: T"],
    attrs=["T: {half, float} = DT_FLOAT"], shape=adjust_shape,
    gradient_undefined=True)


@tf_export("image.convert_image_dtype")
def convert_image_dtype(image, dtype, saturate=False, name=None) -> Tensor:
    """`tf.image.convert_image_dtype`: converts and rescales between integer and float
    image representations."""
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError("dtype must be either floating point or integer")
    if not image.dtype.is_floating and not image.dtype.is_integer:
        raise AttributeError("image dtype must be either floating point or integer")
    if dtype is image.dtype:
        return array_core.identity(image, name=name)
    with name_scope(name, "convert_image") as scope:
        cast_fn = cast_bits.saturate_cast if saturate else cast.cast
        src = image.dtype
        if src.is_integer and dtype.is_integer:
            if src.max > dtype.max:
                scale = (src.max + 1) // (dtype.max + 1)
                return cast_fn(math.floordiv(image, scale), dtype, name=scope)
            scale = (dtype.max + 1) // (src.max + 1)
            return arithmetic.multiply(cast_fn(image, dtype), scale, name=scope)
        if src.is_floating and dtype.is_floating:
            return cast.cast(image, dtype, name=scope)
        if src.is_integer:
            return arithmetic.multiply(cast.cast(image, dtype), 1.0 / src.max, name=scope)
        # + 0.5: values just under 1.0 still reach MAX when the cast truncates.
        scaled = arithmetic.multiply(image, dtype.max + 0.5)
        return cast_fn(scaled, dtype, name=scope)


def to_float(image: Tensor) -> Tensor:
    """The image the float kernels take: float16/float32 as they are, others as float32."""
    if image.dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


@tf_export("image.rgb_to_grayscale")
def rgb_to_grayscale(images, name=None) -> Tensor:
    """`tf.image.rgb_to_grayscale`: ITU-R 601 luma (0.2989 R + 0.5870 G + 0.1140 B)."""
    with name_scope(name, "rgb_to_grayscale") as scope:
        images = convert_to_tensor(images, name="images")
        flt = convert_image_dtype(images, dtypes.float32)
        gray = linalg_extra.tensordot(flt, [0.2989, 0.5870, 0.1140], [-1, -1])
        return convert_image_dtype(array_core.expand_dims(gray, -1), images.dtype, name=scope)


@tf_export("image.grayscale_to_rgb")
def grayscale_to_rgb(images, name=None) -> Tensor:
    """`tf.image.grayscale_to_rgb`: the one channel repeated three times."""
    with name_scope(name, "grayscale_to_rgb") as scope:
        images = convert_to_tensor(images, name="images")
        shape = images.shape
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(f"A grayscale image (shape {shape}) must be at least "
                             "two-dimensional.")
        if shape.is_fully_defined() and shape[-1] != 1:
            raise ValueError("Last dimension of a grayscale image should be size 1.")
        return array_fill.tile(images, _multiples(images), name=scope)


def _multiples(images: Tensor):
    rank = images.shape.ndims
    if rank is not None:
        return [1] * (rank - 1) + [3]
    ones = array_fill.ones(array_core.expand_dims(array_core.rank(images) - 1, 0), dtypes.int32)
    return array_slicing.concat([ones, [3]], 0)


@tf_export("image.adjust_brightness")
def adjust_brightness(image, delta) -> Tensor:
    """`tf.image.adjust_brightness`: adds `delta` in float, converts back saturating."""
    with name_scope(None, "adjust_brightness") as scope:
        image = convert_to_tensor(image, name="image")
        flt = to_float(image)
        adjusted = arithmetic.add(flt, cast.cast(delta, flt.dtype), name=scope)
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


@tf_export("image.adjust_contrast")
def adjust_contrast(images, contrast_factor) -> Tensor:
    """`tf.image.adjust_contrast`: (x - mean) * factor + mean per channel of each image."""
    with name_scope(None, "adjust_contrast") as scope:
        images = convert_to_tensor(images, name="images")
        flt = to_float(images)
        factor = convert_to_tensor(contrast_factor, dtypes.float32, name="contrast_factor")
        adjusted = apply_op(AdjustContrastv2, [flt, factor], {"T": flt.dtype},
                            name=scope).outputs[0]
        return convert_image_dtype(adjusted, images.dtype, saturate=True)


def _check_delta(max_delta) -> None:
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")


def check_factor_range(lower, upper) -> None:
    """TF's checks of a random contrast/saturation factor range."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


@tf_export("image.random_brightness")
def random_brightness(image, max_delta, seed=None) -> Tensor:
    """`tf.image.random_brightness`: a delta drawn uniformly from [-max_delta, max_delta)."""
    _check_delta(max_delta)
    return adjust_brightness(image, random.random_uniform([], -max_delta, max_delta, seed=seed))


@tf_export("image.stateless_random_brightness", v1=[])
def stateless_random_brightness(image, max_delta, seed) -> Tensor:
    """`tf.image.stateless_random_brightness`: the delta determined by `seed`."""
    _check_delta(max_delta)
    delta = stateless_random.stateless_uniform([], seed, -max_delta, max_delta)
    return adjust_brightness(image, delta)


@tf_export("image.random_contrast")
def random_contrast(image, lower, upper, seed=None) -> Tensor:
    """`tf.image.random_contrast`: a factor drawn uniformly from [lower, upper)."""
    check_factor_range(lower, upper)
    return adjust_contrast(image, random.random_uniform([], lower, upper, seed=seed))


@tf_export("image.stateless_random_contrast", v1=[])
def stateless_random_contrast(image, lower, upper, seed) -> Tensor:
    """`tf.image.stateless_random_contrast`: the factor determined by `seed`."""
    check_factor_range(lower, upper)
    return adjust_contrast(image, stateless_random.stateless_uniform([], seed, lower, upper))


attach(globals(), image_adjust_docs.DOCS)

"""`tf.image` color spaces: RGB <-> HSV, hue and saturation.

TF's ops RGBToHSV, HSVToRGB, AdjustHue and AdjustSaturation (kernels:
ndflow/kernels/image_color.py). `adjust_hue` / `adjust_saturation` run the fused op (one pass
RGB -> HSV -> adjust -> RGB) when the container switch TF_ADJUST_HUE_FUSED /
TF_ADJUST_SATURATION_FUSED is on (the default), else the composition RGBToHSV, the adjustment
of one channel, HSVToRGB; both give the same images to float rounding.
"""

from __future__ import annotations

from ndflow.core import config, context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import (
    arithmetic,
    array_core,
    cast,
    image_color_docs,
    math,
    random,
    stateless_random,
)
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.image_adjust import (
    adjust_shape,
    check_factor_range,
    convert_image_dtype,
    to_float,
    with_rank_at_least,
)
from ndflow.ops.op_def import op_def

_FLOATS = "T: {half, bfloat16, float, double} = DT_FLOAT"


def _rgb_shape(ctx):
    s = with_rank_at_least(ctx.shapes[0], 1)
    if s.ndims is not None and s[-1] is not None and s[-1] != 3:
        raise ValueError(f"Dimension must be 3 but is {s[-1]} for {ctx.op_type} with input "
                         f"shapes: {s}.")
    return [s]


RGBToHSV = op_def("RGBToHSV", inputs=["images: T"], outputs=["output: T"], attrs=[_FLOATS],
                  shape=_rgb_shape)
HSVToRGB = op_def("HSVToRGB", inputs=["images: T"], outputs=["output: T"], attrs=[_FLOATS],
                  shape=_rgb_shape, not_differentiable=True)
AdjustHue = op_def("AdjustHue", inputs=["images: T", "delta: float"], outputs=["output: T"],
                   attrs=["T: {half, float} = DT_FLOAT"], shape=adjust_shape,
                   gradient_undefined=True)
AdjustSaturation = op_def(
    "AdjustSaturation", inputs=["images: T", "scale: float"], outputs=["output: T"],
    attrs=["T: {half, float} = DT_FLOAT"], shape=adjust_shape, gradient_undefined=True)


@tf_export("image.rgb_to_hsv")
def rgb_to_hsv(images, name=None) -> Tensor:
    """`tf.image.rgb_to_hsv`: hue, saturation and value in [0, 1] for float RGB images."""
    images = convert_to_tensor(images, name="images")
    return apply_op(RGBToHSV, [images], {"T": images.dtype}, name=name).outputs[0]


@tf_export("image.hsv_to_rgb")
def hsv_to_rgb(images, name=None) -> Tensor:
    """`tf.image.hsv_to_rgb`: the inverse of `rgb_to_hsv`."""
    images = convert_to_tensor(images, name="images")
    return apply_op(HSVToRGB, [images], {"T": images.dtype}, name=name).outputs[0]


def _composed(flt: Tensor, adjust) -> Tensor:
    """RGBToHSV, `adjust(h, s, v) -> (h, s, v)`, HSVToRGB: the unfused path."""
    h, s, v = array_core.unstack(rgb_to_hsv(flt), axis=-1)
    return hsv_to_rgb(array_core.stack(list(adjust(h, s, v)), axis=-1))


@tf_export("image.adjust_hue")
def adjust_hue(image, delta, name=None) -> Tensor:
    """`tf.image.adjust_hue`: rotates the hue by `delta` (a fraction of the color circle)."""
    with name_scope(name, "adjust_hue") as scope:
        if context.executing_eagerly() and not isinstance(delta, Tensor) and (
                delta < -1 or delta > 1):
            raise ValueError("delta must be in the interval [-1, 1]")
        image = convert_to_tensor(image, name="image")
        flt = to_float(image)
        delta = convert_to_tensor(delta, dtypes.float32, name="delta")
        if config.get(config.TF_ADJUST_HUE_FUSED):
            out = apply_op(AdjustHue, [flt, delta], {"T": flt.dtype}, name=scope).outputs[0]
        else:
            d = _cast(delta, flt.dtype)
            out = _composed(flt, lambda h, s, v: (arithmetic.floormod(h + d, 1.0), s, v))
        return convert_image_dtype(out, image.dtype)


@tf_export("image.adjust_saturation")
def adjust_saturation(image, saturation_factor, name=None) -> Tensor:
    """`tf.image.adjust_saturation`: saturation times `saturation_factor`, clipped to
    [0, 1]."""
    with name_scope(name, "adjust_saturation") as scope:
        image = convert_to_tensor(image, name="image")
        flt = to_float(image)
        factor = convert_to_tensor(saturation_factor, dtypes.float32, name="scale")
        if config.get(config.TF_ADJUST_SATURATION_FUSED):
            out = apply_op(AdjustSaturation, [flt, factor], {"T": flt.dtype},
                           name=scope).outputs[0]
        else:
            f = _cast(factor, flt.dtype)
            out = _composed(flt, lambda h, s, v: (
                h, math.clip_by_value(s * f, 0.0, 1.0), v))
        return convert_image_dtype(out, image.dtype)


def _cast(x: Tensor, dtype) -> Tensor:
    return x if x.dtype is dtype else cast.cast(x, dtype)


def _check_hue_delta(max_delta) -> None:
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")


@tf_export("image.random_hue")
def random_hue(image, max_delta, seed=None) -> Tensor:
    """`tf.image.random_hue`: a hue delta drawn uniformly from [-max_delta, max_delta)."""
    _check_hue_delta(max_delta)
    return adjust_hue(image, random.random_uniform([], -max_delta, max_delta, seed=seed))


@tf_export("image.stateless_random_hue", v1=[])
def stateless_random_hue(image, max_delta, seed) -> Tensor:
    """`tf.image.stateless_random_hue`: the delta determined by `seed`."""
    _check_hue_delta(max_delta)
    return adjust_hue(image, stateless_random.stateless_uniform([], seed, -max_delta, max_delta))


@tf_export("image.random_saturation")
def random_saturation(image, lower, upper, seed=None) -> Tensor:
    """`tf.image.random_saturation`: a factor drawn uniformly from [lower, upper)."""
    check_factor_range(lower, upper)
    return adjust_saturation(image, random.random_uniform([], lower, upper, seed=seed))


@tf_export("image.stateless_random_saturation", v1=[])
def stateless_random_saturation(image, lower, upper, seed=None) -> Tensor:
    """`tf.image.stateless_random_saturation`: the factor determined by `seed`."""
    check_factor_range(lower, upper)
    return adjust_saturation(image, stateless_random.stateless_uniform([], seed, lower, upper))


attach(globals(), image_color_docs.DOCS)

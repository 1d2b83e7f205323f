"""`keras.ops.image.scale_and_translate` (JAX's scale_and_translate: separable resampling
with a triangle, Keys cubic or Lanczos kernel, widened by 1/scale when antialiasing, over any
spatial axes and with tensor scales). `keras.ops.image.resize` runs TF's ScaleAndTranslate
op through `tf.image.resize` instead, as Keras' TensorFlow backend does."""

from __future__ import annotations

import numpy as np

from ndflow.keras import docstrings
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import image_docs
from ndflow.keras.ops import numpy_array as arr
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    arithmetic,
    array_core,
    array_range,
    comparison,
    linalg_extra,
    math,
    math_trig,
    reduction,
)
from ndflow.ops.cast import cast

_METHODS = ("linear", "bilinear", "trilinear", "cubic", "bicubic", "tricubic", "lanczos3",
            "lanczos5")


def _triangle(x):
    return arithmetic.maximum(cast(0, x.dtype), 1 - math.abs(x))


def _keys_cubic(x):
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = arithmetic.where(comparison.greater_equal(x, cast(1.0, x.dtype)),
                           ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return arithmetic.where(comparison.greater_equal(x, cast(2.0, x.dtype)),
                            cast(0.0, x.dtype), out)


def _lanczos(radius):
    def kernel(x):
        y = radius * math_trig.sin(np.pi * x) * math_trig.sin(np.pi * x / radius)
        safe = arithmetic.where(comparison.not_equal(x, cast(0, x.dtype)),
                                cast(np.pi ** 2, x.dtype) * x * x, cast(1, x.dtype))
        out = arithmetic.where(comparison.greater(x, cast(1e-3, x.dtype)), y / safe,
                               cast(1, x.dtype))
        return arithmetic.where(comparison.greater(x, cast(radius, x.dtype)),
                                cast(0.0, x.dtype), out)
    return kernel


KERNELS = {"linear": _triangle, "cubic": _keys_cubic, "lanczos3": _lanczos(3.0),
           "lanczos5": _lanczos(5.0)}


def weight_matrix(input_size, output_size, scale, translation, kernel, antialias, dtype):
    """[input_size, output_size] resampling weights (each column normalized; output points
    whose sample falls outside the input get none)."""
    scale, translation = cast(scale, dtype), cast(translation, dtype)
    inv_scale = 1.0 / scale
    kernel_scale = arithmetic.maximum(inv_scale, cast(1.0, dtype)) if antialias else \
        cast(1.0, dtype)
    sample = (cast(array_range.range(0, output_size), dtype) + 0.5) * inv_scale \
        - translation * inv_scale - 0.5
    distance = math.abs(array_core.expand_dims(sample, 0) - array_core.expand_dims(
        cast(array_range.range(0, input_size), dtype), 1)) / kernel_scale
    weights = kernel(distance)
    total = reduction.reduce_sum(weights, axis=0, keepdims=True)
    usable = comparison.greater(math.abs(total),
                                cast(1000.0 * float(np.finfo(np.float32).eps), dtype))
    safe = arithmetic.where(comparison.not_equal(total, cast(0, dtype)), total,
                            cast(1, dtype))
    weights = arithmetic.where(usable, weights / safe, cast(0, dtype))
    inside = comparison.logical_and(comparison.greater_equal(sample, cast(-0.5, dtype)),
                                    comparison.less_equal(sample,
                                                          cast(input_size - 0.5, dtype)))
    return arithmetic.where(array_core.expand_dims(inside, 0), weights, cast(0, dtype))


def resample(x, output_shape, spatial_dims, scale, translation, kernel, antialias):
    """`x` resampled along `spatial_dims` to `output_shape` (ints: computed in float32 and
    rounded back within the input's range)."""
    x = rules.to_tensor(x)
    integer = x.dtype.is_integer
    out = cast(x, "float32") if integer else x
    rank = x.shape.rank
    for i, d in enumerate(spatial_dims):
        d %= rank
        w = weight_matrix(x.shape[d], output_shape[d], scale[i], translation[i], kernel,
                          antialias, "float32" if out.dtype.name != "float64" else "float64")
        out = linalg_extra.tensordot(out, cast(w, out.dtype), axes=[[d], [0]])
        out = arr.moveaxis(out, -1, d)
    if integer:
        out = math.clip_by_value(math.round(out), cast(reduction.reduce_min(x), out.dtype),
                                 cast(reduction.reduce_max(x), out.dtype))
        out = cast(out, x.dtype)
    return out


@keras_op("scale_and_translate", "image")
def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method,
                        antialias=True):
    if method not in _METHODS:
        raise ValueError(f"Invalid value for argument `method`. Expected of one {_METHODS}. "
                         f"Received: method={method}")
    method = "linear" if "linear" in method else ("cubic" if "cubic" in method else method)
    scale, translation = rules.to_tensor(scale), rules.to_tensor(translation)
    dtype = rules.result_type(scale.dtype.name, translation.dtype.name)
    scale, translation = cast(scale, dtype), cast(translation, dtype)
    return resample(images, list(output_shape), list(spatial_dims),
                    [scale[i] for i in range(len(spatial_dims))],
                    [translation[i] for i in range(len(spatial_dims))], KERNELS[method],
                    antialias)


docstrings.attach(globals(), image_docs.SCALE_TRANSLATE_DOCS)

"""`tf.image.resize` and TF's resize ops: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic,
ResizeArea and the gradient ops ResizeBilinearGrad, ResizeNearestNeighborGrad,
ResizeBicubicGrad (kernels: ndflow/kernels/image_resize.py; gradients: image_grad.py).

The ops take 4-D NHWC images and a constant-or-computed `size` = [new_height, new_width].
`align_corners` maps corner pixel centers onto each other; `half_pixel_centers` (what TF2's
`tf.image.resize` uses) samples at pixel centers. Bilinear, bicubic and area produce float32;
nearest keeps the dtype.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic, array_core, array_fill, cast, comparison, image_resize_docs, math
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.image_ops import (
    as_batch,
    assert_true,
    check_at_least_3d,
    image_dims,
    pad_to_bounding_box,
    with_dependencies,
)
from ndflow.ops.op_def import op_def

_REAL = ("T: {int8, uint8, int16, int32, int64, half, float, double, bfloat16} "
         "= DT_FLOAT")
_CORNERS = ["align_corners: bool = false", "half_pixel_centers: bool = false"]


def resized_shape(ctx, size_input: int = 1):
    """[batch, height, width, channels] of an NHWC op whose input `size_input` is the new
    [height, width] (image_transform's ops too)."""
    images = ctx.shapes[0].with_rank(4)
    ctx.shapes[size_input].with_rank(1)
    size = ctx.value(size_input)
    h = w = None
    if size is not None:
        if len(size) != 2:
            raise ValueError(f"Dimension must be 2 but is {len(size)}")
        h, w = int(size[0]), int(size[1])
    dims = images.as_list() if images.ndims is not None else [None] * 4
    return [TensorShape([dims[0], h, w, dims[3]])]


def _grad_shape(ctx):
    ctx.shapes[0].with_rank(4)
    return [ctx.shapes[1].with_rank(4)]


ResizeBilinear = op_def(
    "ResizeBilinear", inputs=["images: T", "size: int32"], outputs=["resized_images: float"],
    attrs=[_REAL, *_CORNERS], shape=resized_shape)
ResizeNearestNeighbor = op_def(
    "ResizeNearestNeighbor", inputs=["images: T", "size: int32"],
    outputs=["resized_images: T"], attrs=[_REAL, *_CORNERS], shape=resized_shape)
ResizeBicubic = op_def(
    "ResizeBicubic", inputs=["images: T", "size: int32"], outputs=["resized_images: float"],
    attrs=[_REAL, *_CORNERS], shape=resized_shape)
ResizeArea = op_def(
    "ResizeArea", inputs=["images: T", "size: int32"], outputs=["resized_images: float"],
    attrs=[_REAL, "align_corners: bool = false"], shape=resized_shape,
    gradient_undefined=True)
ResizeBilinearGrad = op_def(
    "ResizeBilinearGrad", inputs=["grads: float", "original_image: T"], outputs=["output: T"],
    attrs=["T: {float, bfloat16, half, double} = DT_FLOAT", *_CORNERS], shape=_grad_shape,
    not_differentiable=True)
ResizeBicubicGrad = op_def(
    "ResizeBicubicGrad", inputs=["grads: float", "original_image: T"], outputs=["output: T"],
    attrs=["T: {float, double} = DT_FLOAT", *_CORNERS], shape=_grad_shape,
    gradient_undefined=True)


def _nn_grad_shape(ctx):
    grads = ctx.shapes[0].with_rank(4)
    ctx.shapes[1].with_rank(1)
    size = ctx.value(1)
    dims = grads.as_list() if grads.ndims is not None else [None] * 4
    h, w = (None, None) if size is None else (int(size[0]), int(size[1]))
    return [TensorShape([dims[0], h, w, dims[3]])]


ResizeNearestNeighborGrad = op_def(
    "ResizeNearestNeighborGrad", inputs=["grads: T", "size: int32"], outputs=["output: T"],
    attrs=["T: {uint8, int8, int32, half, float, double, bfloat16} = DT_FLOAT", *_CORNERS],
    shape=_nn_grad_shape, gradient_undefined=True)


# Separable resampling with a sampling kernel (kernels/image_scale_translate.py): what
# tf.image.resize runs for antialias=True and its Lanczos, Gaussian and Mitchell methods.
_KERNEL_ATTRS = ['kernel_type: string = "lanczos3"', "antialias: bool = true"]
ScaleAndTranslate = op_def(
    "ScaleAndTranslate", inputs=["images: T", "size: int32", "scale: float",
                                 "translation: float"],
    outputs=["resized_images: float"], attrs=[_REAL, *_KERNEL_ATTRS], shape=resized_shape)
ScaleAndTranslateGrad = op_def(
    "ScaleAndTranslateGrad", inputs=["grads: T", "original_image: T", "scale: float",
                                     "translation: float"],
    outputs=["output: T"], attrs=["T: {float} = DT_FLOAT", *_KERNEL_ATTRS],
    shape=_grad_shape, gradient_undefined=True)


def _raw(op, images, size, name, **attrs):
    images = convert_to_tensor(images, name="images")
    size = convert_to_tensor(size, dtypes.int32, name="size")
    return apply_op(op, [images, size], dict(attrs, T=images.dtype), name=name).outputs[0]


@tf_export(v1=["image.resize_bilinear"])
def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """`tf.compat.v1.image.resize_bilinear`: the ResizeBilinear op."""
    return _raw(ResizeBilinear, images, size, name, align_corners=bool(align_corners),
                half_pixel_centers=bool(half_pixel_centers))


@tf_export(v1=["image.resize_nearest_neighbor"])
def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    """`tf.compat.v1.image.resize_nearest_neighbor`: the ResizeNearestNeighbor op."""
    return _raw(ResizeNearestNeighbor, images, size, name, align_corners=bool(align_corners),
                half_pixel_centers=bool(half_pixel_centers))


@tf_export(v1=["image.resize_bicubic"])
def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """`tf.compat.v1.image.resize_bicubic`: the ResizeBicubic op."""
    return _raw(ResizeBicubic, images, size, name, align_corners=bool(align_corners),
                half_pixel_centers=bool(half_pixel_centers))


@tf_export(v1=["image.resize_area"])
def resize_area(images, size, align_corners=False, name=None):
    """`tf.compat.v1.image.resize_area`: the ResizeArea op."""
    return _raw(ResizeArea, images, size, name, align_corners=bool(align_corners))


@tf_export(v1=["image.ResizeMethod"])
class ResizeMethodV1:
    """TF1's resize methods (`tf.compat.v1.image.ResizeMethod`)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


@tf_export("image.ResizeMethod", v1=[])
class ResizeMethod:
    """`tf.image.ResizeMethod`: the method names `tf.image.resize` takes."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


def _resize_common(images, resize_fn, size, preserve_aspect_ratio, name, skip_if_same):
    with name_scope(name, "resize"):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        is_batch = images.shape.ndims == 4
        if images.shape.ndims == 3:
            images = array_core.expand_dims(images, 0)
        elif not is_batch:
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        _, height, width, _ = images.shape.as_list()
        try:
            size = convert_to_tensor(size, dtypes.int32, name="size")
        except (TypeError, ValueError) as e:
            raise ValueError("'size' must be a 1-D int32 Tensor") from e
        if not size.shape.is_compatible_with(TensorShape([2])):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, "
                             "new_width")
        if preserve_aspect_ratio:
            _, cur_h, cur_w, _ = image_dims(images, 4)
            f32 = dtypes.float32
            scale_h = cast.cast(size[0], f32) / cast.cast(cur_h, f32)
            scale_w = cast.cast(size[1], f32) / cast.cast(cur_w, f32)
            factor = arithmetic.minimum(scale_h, scale_w)
            new_h = cast.cast(math.round(factor * cast.cast(cur_h, f32)), dtypes.int32)
            new_w = cast.cast(math.round(factor * cast.cast(cur_w, f32)), dtypes.int32)
            size = array_core.stack([new_h, new_w])
        known = constant_value(size)
        if skip_if_same and known is not None and height is not None and width is not None \
                and int(known[0]) == height and int(known[1]) == width:
            return images if is_batch else array_core.squeeze(images, axis=[0])
        out = resize_fn(images, size)
        return out if is_batch else array_core.squeeze(out, axis=[0])


@tf_export("image.resize", v1=[])
def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False,
           antialias=False, name=None) -> Tensor:
    """`tf.image.resize`: half-pixel-center resampling of 3-D images or 4-D batches."""
    def resize_fn(images_t, new_size):
        if method == ResizeMethod.BILINEAR and not antialias:
            return resize_bilinear(images_t, new_size, half_pixel_centers=True)
        if method == ResizeMethod.NEAREST_NEIGHBOR:
            return resize_nearest_neighbor(images_t, new_size, half_pixel_centers=True)
        if method == ResizeMethod.BICUBIC and not antialias:
            return resize_bicubic(images_t, new_size, half_pixel_centers=True)
        if method == ResizeMethod.AREA:
            return resize_area(images_t, new_size)
        kernel_type = {ResizeMethod.BILINEAR: "triangle", ResizeMethod.BICUBIC: "keyscubic",
                       ResizeMethod.LANCZOS3: "lanczos3", ResizeMethod.LANCZOS5: "lanczos5",
                       ResizeMethod.GAUSSIAN: "gaussian",
                       ResizeMethod.MITCHELLCUBIC: "mitchellcubic"}.get(method)
        if kernel_type is None:
            raise ValueError(f"Resize method is not implemented: {method}")
        return _scale_and_translate(images_t, new_size, kernel_type, antialias)
    return _resize_common(images, resize_fn, size, preserve_aspect_ratio, name, False)


def _scale_and_translate(images, size, kernel_type: str, antialias: bool) -> Tensor:
    """TF's resize by ScaleAndTranslate: scale = size / the input's size (float32), no
    translation."""
    size = convert_to_tensor(size, dtypes.int32)
    scale = arithmetic.truediv(cast.cast(size, dtypes.float32),
                               cast.cast(array_core.shape(images)[1:3], dtypes.float32))
    translation = array_fill.zeros([2], dtypes.float32)
    return apply_op(ScaleAndTranslate, [images, size, scale, translation],
                    dict(T=images.dtype, kernel_type=kernel_type, antialias=antialias)
                    ).outputs[0]


@tf_export(v1=["image.resize_images", "image.resize"])
def resize_images(images, size, method=ResizeMethodV1.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None) -> Tensor:
    """`tf.compat.v1.image.resize`: TF1's resize (legacy pixel centers, `align_corners`);
    returns the input when the size does not change."""
    def resize_fn(images_t, new_size):
        if method in (ResizeMethodV1.BILINEAR, ResizeMethod.BILINEAR):
            return resize_bilinear(images_t, new_size, align_corners=align_corners)
        if method in (ResizeMethodV1.NEAREST_NEIGHBOR, ResizeMethod.NEAREST_NEIGHBOR):
            return resize_nearest_neighbor(images_t, new_size, align_corners=align_corners)
        if method in (ResizeMethodV1.BICUBIC, ResizeMethod.BICUBIC):
            return resize_bicubic(images_t, new_size, align_corners=align_corners)
        if method in (ResizeMethodV1.AREA, ResizeMethod.AREA):
            return resize_area(images_t, new_size, align_corners=align_corners)
        raise ValueError(f"Resize method is not implemented: {method}")
    return _resize_common(images, resize_fn, size, preserve_aspect_ratio, name, True)


def _resize_with_pad(image, target_height, target_width, resize_fn) -> Tensor:
    """Scales the image to fit the target box keeping its aspect ratio, then zero-pads it
    centered (TF's float32 arithmetic: floors of the scaled sizes and half-paddings)."""
    with name_scope(None, "resize_image_with_pad"):
        image, is_batch = as_batch(convert_to_tensor(image, name="image"))
        deps = check_at_least_3d(image)
        deps += assert_true(_positive(target_width), "target_width must be > 0.")
        deps += assert_true(_positive(target_height), "target_height must be > 0.")
        image = with_dependencies(deps, image)
        _, height, width, _ = image_dims(image, 4)
        if all(isinstance(v, int) for v in (height, width, target_height, target_width)):
            f32 = np.float32
            ratio = max(f32(width) / f32(target_width), f32(height) / f32(target_height))
            rh, rw = f32(height) / ratio, f32(width) / ratio
            new_size = [int(np.floor(rh)), int(np.floor(rw))]
            pad_h = max(0, int(np.floor((f32(target_height) - rh) / f32(2))))
            pad_w = max(0, int(np.floor((f32(target_width) - rw) / f32(2))))
        else:
            f = [cast.cast(v, dtypes.float32) for v in (height, width, target_height,
                                                        target_width)]
            ratio = arithmetic.maximum(f[1] / f[3], f[0] / f[2])
            rh, rw = f[0] / ratio, f[1] / ratio
            new_size = array_core.stack([cast.cast(math.floor(rh), dtypes.int32),
                                         cast.cast(math.floor(rw), dtypes.int32)])
            pad_h = arithmetic.maximum(0, cast.cast(math.floor((f[2] - rh) / 2), dtypes.int32))
            pad_w = arithmetic.maximum(0, cast.cast(math.floor((f[3] - rw) / 2), dtypes.int32))
        padded = pad_to_bounding_box(resize_fn(image, new_size), pad_h, pad_w, target_height,
                                     target_width)
        return padded if is_batch else array_core.squeeze(padded, axis=[0])


def _positive(v):
    return v > 0 if not isinstance(v, Tensor) else comparison.greater(v, 0)


@tf_export("image.resize_with_pad", v1=[])
def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR,
                    antialias=False) -> Tensor:
    """`tf.image.resize_with_pad`: resize keeping the aspect ratio, then pad with zeros."""
    return _resize_with_pad(image, target_height, target_width, lambda im, size: resize(
        im, size, method=method, antialias=antialias))


@tf_export(v1=["image.resize_image_with_pad"])
def resize_image_with_pad(image, target_height, target_width, method=ResizeMethodV1.BILINEAR,
                          align_corners=False) -> Tensor:
    """`tf.compat.v1.image.resize_image_with_pad`: as resize_with_pad, TF1 resizing."""
    return _resize_with_pad(image, target_height, target_width, lambda im, size: resize_images(
        im, size, method, align_corners=align_corners))


attach(globals(), image_resize_docs.DOCS)

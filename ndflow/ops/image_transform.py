"""TF's projective image transform ops, ImageProjectiveTransformV2 and V3 (`tf.raw_ops`), which
Keras 3's `ops.image.affine_transform` and its RandomRotation / RandomZoom / RandomTranslation
layers run on (kernel: ndflow/kernels/image_transform.py).

A transform row [a0, a1, a2, b0, b1, b2, c0, c1] maps each OUTPUT pixel (x, y) to the input
point ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1; points outside the
image follow `fill_mode` (REFLECT, WRAP, CONSTANT, NEAREST), sampled NEAREST or BILINEAR.
The gradient with respect to the images is TensorFlow's: the incoming gradient warped by the
inverse transform (an approximation of the adjoint TF uses too); transforms get none.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import array_core, array_fill, array_slicing, linalg_decomp
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.image_resize import resized_shape
from ndflow.ops.op_def import op_def

_DTYPE = "dtype: {uint8, int32, int64, half, bfloat16, float, double}"
_ATTRS = [_DTYPE, "interpolation: string", "fill_mode: string = 'CONSTANT'"]


def _transform_shape(ctx):
    ctx.shapes[0].with_rank(4)
    ctx.shapes[1].with_rank(2)
    return resized_shape(ctx, size_input=2)


ImageProjectiveTransformV2 = op_def(
    "ImageProjectiveTransformV2",
    inputs=["images: dtype", "transforms: float", "output_shape: int32"],
    outputs=["transformed_images: dtype"], attrs=_ATTRS, shape=_transform_shape)

ImageProjectiveTransformV3 = op_def(
    "ImageProjectiveTransformV3",
    inputs=["images: dtype", "transforms: float", "output_shape: int32", "fill_value: float"],
    outputs=["transformed_images: dtype"], attrs=_ATTRS, shape=_transform_shape)


def image_projective_transform_v3(images, transforms, output_shape, fill_value=0.0,
                                  interpolation="BILINEAR", fill_mode="CONSTANT", name=None):
    """The ImageProjectiveTransformV3 op on a [B, H, W, C] batch (transforms [B or 1, 8])."""
    images = convert_to_tensor(images, name="images")
    transforms = convert_to_tensor(transforms, dtypes.float32, name="transforms")
    output_shape = convert_to_tensor(output_shape, dtypes.int32, name="output_shape")
    fill_value = convert_to_tensor(fill_value, dtypes.float32, name="fill_value")
    attrs = {"dtype": images.dtype, "interpolation": str(interpolation).upper(),
             "fill_mode": str(fill_mode).upper()}
    return apply_op(ImageProjectiveTransformV3, [images, transforms, output_shape, fill_value],
                    attrs, name=name).outputs[0]


def _inverse_transforms(transforms):
    """Rows [a0..c1] -> 3x3 matrices -> inverses -> rows normalised by their last entry."""
    n = array_core.shape(transforms)[0]
    ones = array_fill.ones(array_core.stack([n, 1]), dtypes.float32)
    mats = array_core.reshape(array_slicing.concat([transforms, ones], axis=1), [-1, 3, 3])
    flat = array_core.reshape(linalg_decomp.matrix_inverse(mats), [-1, 9])
    flat = flat / flat[:, 8:9]
    return flat[:, :8]


def _grad_images(op, grad, with_fill: bool):
    images, transforms = op.inputs[0], op.inputs[1]
    attrs = {"dtype": grad.dtype, "interpolation": op.get_attr("interpolation"),
             "fill_mode": op.get_attr("fill_mode")}
    inputs = [grad, _inverse_transforms(transforms), array_core.shape(images)[1:3]]
    if with_fill:
        inputs.append(convert_to_tensor(0.0, dtypes.float32))
    return apply_op(ImageProjectiveTransformV3 if with_fill else ImageProjectiveTransformV2,
                    inputs, attrs).outputs[0]


@ImageProjectiveTransformV2.def_grad
def _projective_v2_grad(op, grad):
    return [_grad_images(op, grad, False), None, None]


@ImageProjectiveTransformV3.def_grad
def _projective_v3_grad(op, grad):
    return [_grad_images(op, grad, True), None, None, None]

"""`tf.image` linear color spaces: YIQ and YUV (NTSC / PAL analog television), each one 3x3
matrix applied to the last axis (tensordot, as TF). The matrices are the standard
transforms' coefficients, with TF's rounding of them."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.linalg_extra import tensordot

_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
               [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _transform(images, matrix) -> Tensor:
    images = convert_to_tensor(images, name="images")
    kernel = convert_to_tensor(matrix, images.dtype, name="kernel")
    return tensordot(images, kernel, axes=[[images.shape.ndims - 1], [0]])


@tf_export("image.rgb_to_yiq")
def rgb_to_yiq(images) -> Tensor:
    """`tf.image.rgb_to_yiq`: RGB in [0, 1] -> YIQ."""
    return _transform(images, _RGB_TO_YIQ)


@tf_export("image.yiq_to_rgb")
def yiq_to_rgb(images) -> Tensor:
    """`tf.image.yiq_to_rgb`: YIQ -> RGB."""
    return _transform(images, _YIQ_TO_RGB)


@tf_export("image.rgb_to_yuv")
def rgb_to_yuv(images) -> Tensor:
    """`tf.image.rgb_to_yuv`: RGB in [0, 1] -> YUV."""
    return _transform(images, _RGB_TO_YUV)


@tf_export("image.yuv_to_rgb")
def yuv_to_rgb(images) -> Tensor:
    """`tf.image.yuv_to_rgb`: YUV -> RGB."""
    return _transform(images, _YUV_TO_RGB)

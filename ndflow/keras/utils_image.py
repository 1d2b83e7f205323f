"""Keras 3's image helpers (`tf.keras.utils.load_img`, `img_to_array`, `array_to_img`,
`save_img`, `tf.keras.preprocessing.image.smart_resize`) on Pillow (a dependency already,
for tf.io's PNG/JPEG codecs; imported on first use), with Keras' modes and errors."""

from __future__ import annotations

import io
import pathlib
import warnings

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.tensor import Tensor
from ndflow.keras.backend_functions import floatx, image_data_format
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import maximum, minimum, truediv
from ndflow.ops.array_core import constant, stack
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.array_slicing import slice as slice_op
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.image_resize import resize


def _pil():
    from PIL import Image  # noqa: PLC0415 - optional heavy import on first use
    return Image

def _data_format(data_format):
    data_format = data_format or image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return data_format

@keras_export("keras.utils.array_to_img", "keras.preprocessing.image.array_to_img")
def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A 3-D image array as a PIL image (needs Pillow).

    Args:
      x: an array or tensor of shape (height, width, channels) (or channels first), with
        1 (grey), 3 (RGB) or 4 (RGBA) channels.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      scale: whether to rescale the values to [0, 255] first (from their min and max).
      dtype: the dtype `x` is read as (default floatx).

    Returns:
      A `PIL.Image.Image`.

    Raises:
      ValueError: `x` is not 3-D or has another channel count.
    """
    data_format = _data_format(data_format)
    x = np.asarray(x.numpy() if isinstance(x, Tensor) else x, dtype=dtype or floatx())
    if x.ndim != 3:
        raise ValueError("Expected image array to have rank 3 (single image). "
                         f"Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        x_max = np.max(x)
        if x_max != 0:
            x /= x_max
        x *= 255
    image = _pil()
    if x.shape[2] == 4:
        return image.fromarray(x.astype("uint8"), "RGBA")
    if x.shape[2] == 3:
        return image.fromarray(x.astype("uint8"), "RGB")
    if x.shape[2] == 1:
        if np.max(x) > 255:
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {x.shape[2]}")

@keras_export("keras.utils.img_to_array", "keras.preprocessing.image.img_to_array")
def img_to_array(img, data_format=None, dtype=None):
    """A PIL image (or array) as a 3-D NumPy array; a 2-D (greyscale) image gets a
    channels axis of 1.

    Args:
      img: a PIL image or array.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      dtype: the array's dtype (default floatx).

    Returns:
      A NumPy array (height, width, channels) (or channels first).

    Raises:
      ValueError: an image that is neither 2-D nor 3-D.

    Example:

    >>> tf.keras.utils.img_to_array(np.zeros((4, 5))).shape
    (4, 5, 1)
    """
    data_format = _data_format(data_format)
    x = np.asarray(img, dtype=dtype or floatx())
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if data_format == "channels_first" else x
    if x.ndim == 2:
        return x.reshape((1, *x.shape) if data_format == "channels_first" else (*x.shape, 1))
    raise ValueError(f"Unsupported image shape: {x.shape}")

@keras_export("keras.utils.save_img", "keras.preprocessing.image.save_img")
def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Writes a 3-D image array to an image file (needs Pillow).

    Args:
      path: the destination path or file object.
      x: an array (height, width, channels) (or channels first).
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      file_format: the format ("png", "jpeg", ...); default from the path's suffix.
      scale: whether to rescale the values to [0, 255] first.
      **kwargs: passed to PIL's `Image.save`.
    """
    data_format = _data_format(data_format)
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn("The JPEG format does not support RGBA images, converting to RGB.",
                      stacklevel=2)
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)

_RESAMPLING = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")

@keras_export("keras.utils.load_img", "keras.preprocessing.image.load_img")
def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest",
             keep_aspect_ratio=False):
    """Loads an image file as a PIL image (needs Pillow).

    Args:
      path: a path (str, bytes or `pathlib.Path`) or an `io.BytesIO`.
      color_mode: "rgb" (the default), "rgba" or "grayscale".
      target_size: optional (height, width) to resize to.
      interpolation: PIL's resampling: "nearest" (the default), "bilinear", "bicubic",
        "hamming", "box" or "lanczos".
      keep_aspect_ratio: whether to centre-crop to the target's aspect ratio before
        resizing (no distortion).

    Returns:
      A `PIL.Image.Image`.

    Raises:
      TypeError: `path` is of another type.
      ValueError: an unknown `color_mode` or `interpolation`.
    """
    image = _pil()
    if isinstance(path, io.BytesIO):
        img = image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        if isinstance(path, pathlib.Path):
            path = str(path.resolve())
        with open(path, "rb") as f:
            img = image.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    if color_mode == "grayscale":
        if img.mode not in ("L", "I;16", "I"):
            img = img.convert("L")
    elif color_mode in ("rgba", "rgb"):
        if img.mode != color_mode.upper():
            img = img.convert(color_mode.upper())
    else:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if target_size is None:
        return img
    size = (target_size[1], target_size[0])
    if img.size == size:
        return img
    if interpolation not in _RESAMPLING:
        raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported "
                         f"methods are {', '.join(_RESAMPLING)}")
    resample = getattr(image.Resampling, interpolation.upper())
    if not keep_aspect_ratio:
        return img.resize(size, resample)
    width, height = img.size
    crop_height = min(height, width * size[1] // size[0])
    crop_width = min(width, height * size[0] // size[1])
    top, left = (height - crop_height) // 2, (width - crop_width) // 2
    return img.resize(size, resample, box=[left, top, left + crop_width, top + crop_height])

@keras_export("keras.preprocessing.image.smart_resize")
def smart_resize(x, size, interpolation="bilinear", data_format="channels_last"):
    """Resizes images to `size` without distorting them: the largest centred region of
    the target's aspect ratio is cropped, then resized.

    Args:
      x: a 3-D image or 4-D batch (array or tensor); sizes may be unknown inside a
        `tf.data` map.
      size: the target (height, width).
      interpolation: the resize method ("bilinear", "nearest", "bicubic", "area",
        "lanczos3", "lanczos5", ...).
      data_format: "channels_last" (the default here) or "channels_first".

    Returns:
      A float tensor of the target size (a NumPy array for NumPy input).

    Raises:
      ValueError: `size` is not a pair, or `x` is not 3-D or 4-D.

    Example:

    >>> tf.keras.preprocessing.image.smart_resize(np.zeros((10, 20, 3)), (5, 5)).shape
    (5, 5, 3)
    """
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers, but got: {size}.")
    img = x if isinstance(x, Tensor) else convert_to_tensor(x)
    shape = img.shape.as_list()
    if len(shape) < 3 or len(shape) > 4:
        raise ValueError("Expected an image array with shape `(height, width, channels)`, or "
                         "`(batch_size, height, width, channels)`, but got input with "
                         f"incorrect rank, of shape {tuple(shape)}.")
    last = data_format == "channels_last"
    height, width = (shape[-3], shape[-2]) if last else (shape[-2], shape[-1])
    target_height, target_width = size
    if height is None or width is None:  # inside a dataset map: the crop box as tensors
        img = _crop_dynamic(img, len(shape), last, target_height, target_width)
    else:
        crop_height = max(min(height, int(float(width * target_height) / target_width)), 1)
        crop_width = max(min(width, int(float(height * target_width) / target_height)), 1)
        top, left = int(float(height - crop_height) / 2), int(float(width - crop_width) / 2)
        rows, cols = slice(top, top + crop_height), slice(left, left + crop_width)
        lead = (slice(None),) * (len(shape) - 3)
        img = img[lead + ((rows, cols, slice(None)) if last else (slice(None), rows, cols))]
    if last:
        out = resize(img, size, method=interpolation)
    else:
        perm, back = ((0, 2, 3, 1), (0, 3, 1, 2)) if len(shape) == 4 else ((1, 2, 0), (2, 0, 1))
        out = transpose(resize(transpose(img, perm), size, method=interpolation), back)
    return np.asarray(out.numpy()) if isinstance(x, np.ndarray) else out

def _crop_dynamic(img, rank, last, target_height, target_width):
    """Keras' crop box computed with ops, for images of unknown height/width."""
    dims = shape_op(img)
    height, width = (dims[rank - 3], dims[rank - 2]) if last else (dims[rank - 2], dims[rank - 1])

    def scaled(n, num, den):
        return cast(truediv(cast(n * num, dtypes.float32), float(den)), dtypes.int32)
    crop_height = maximum(minimum(height, scaled(width, target_height, target_width)), 1)
    crop_width = maximum(minimum(width, scaled(height, target_width, target_height)), 1)
    top = cast(truediv(cast(height - crop_height, dtypes.float32), 2.0), dtypes.int32)
    left = cast(truediv(cast(width - crop_width, dtypes.float32), 2.0), dtypes.int32)
    zero, full = constant(0), constant(-1)
    lead_begin, lead_size = [zero] * (rank - 3), [full] * (rank - 3)
    if last:
        begin, extent = [top, left, zero], [crop_height, crop_width, full]
    else:
        begin, extent = [zero, top, left], [full, crop_height, crop_width]
    return slice_op(img, stack(lead_begin + begin), stack(lead_size + extent))

"""`tf.keras.preprocessing.image`'s legacy random transforms of one image (rotation, shift,
shear, zoom, channel and brightness shifts) and `apply_affine_transform`, as Keras 3.15's
legacy module computes them. Keras resamples with scipy.ndimage.affine_transform (linear
interpolation, `fill_mode` for points outside the image); here the same sampling is NumPy's:
an output pixel (i, j) reads the input at M @ (i, j, 1), bilinearly, with scipy's extension
modes 'nearest' (edge values), 'constant' (cval outside the image), 'reflect' (mirrored at
the pixel edges) and 'wrap'."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras import preprocessing_image_docs
from ndflow.keras.utils_image import array_to_img, img_to_array


def _extend(coord: np.ndarray, size: int, mode: str) -> np.ndarray:
    """Integer sample positions mapped into [0, size) as `mode` extends the image."""
    if mode == "reflect":          # d c b a | a b c d | d c b a
        period = 2 * size
        c = np.mod(coord, period)
        return np.where(c >= size, period - 1 - c, c)
    if mode == "wrap":
        return np.mod(coord, size)
    return np.clip(coord, 0, size - 1)


def _affine_channel(image: np.ndarray, matrix: np.ndarray, offset, fill_mode: str,
                    cval: float, order: int) -> np.ndarray:
    """One 2-D channel resampled at matrix @ (i, j) + offset."""
    h, w = image.shape
    ii, jj = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64),
                         indexing="ij")
    r = matrix[0, 0] * ii + matrix[0, 1] * jj + offset[0]
    c = matrix[1, 0] * ii + matrix[1, 1] * jj + offset[1]
    src = image.astype(np.float64)
    if order == 0:
        out = src[_extend(np.floor(r + 0.5).astype(np.int64), h, fill_mode),   # scipy rounds up
                  _extend(np.floor(c + 0.5).astype(np.int64), w, fill_mode)]
    else:
        r0, c0 = np.floor(r).astype(np.int64), np.floor(c).astype(np.int64)
        fr, fc = r - r0, c - c0
        out = np.zeros_like(r)
        for dr, wr in ((0, 1 - fr), (1, fr)):
            for dc, wc in ((0, 1 - fc), (1, fc)):
                out += wr * wc * src[_extend(r0 + dr, h, fill_mode),
                                     _extend(c0 + dc, w, fill_mode)]
    if fill_mode == "constant":   # scipy: no interpolation beyond the edges
        outside = (r < 0) | (r > h - 1) | (c < 0) | (c > w - 1)
        out = np.where(outside, cval, out)
    return out


def transform_matrix_offset_center(matrix, x, y):
    """`matrix` applied about the center of an x-by-y image."""
    ox, oy = float(x) / 2 - 0.5, float(y) / 2 - 0.5
    to_center = np.array([[1, 0, ox], [0, 1, oy], [0, 0, 1]])
    from_center = np.array([[1, 0, -ox], [0, 1, -oy], [0, 0, 1]])
    return to_center @ matrix @ from_center


@keras_export("keras.preprocessing.image.apply_affine_transform")
def apply_affine_transform(x, theta=0, tx=0, ty=0, shear=0, zx=1, zy=1, row_axis=1,
                           col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0, order=1):
    if fill_mode not in ("constant", "nearest", "reflect", "wrap"):
        raise ValueError(f"Invalid fill_mode: {fill_mode}")
    matrix = None
    if theta != 0:
        t = np.deg2rad(theta)
        matrix = np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
    if tx != 0 or ty != 0:
        shift = np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]])
        matrix = shift if matrix is None else matrix @ shift
    if shear != 0:
        s = np.deg2rad(shear)
        shear_m = np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]])
        matrix = shear_m if matrix is None else matrix @ shear_m
    if zx != 1 or zy != 1:
        zoom = np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]])
        matrix = zoom if matrix is None else matrix @ zoom
    if matrix is None:
        return x
    x = np.asarray(x)
    h, w = x.shape[row_axis], x.shape[col_axis]
    matrix = transform_matrix_offset_center(matrix, h, w)
    # Keras builds the matrix on (x, y) = (column, row) coordinates: swapped to (row, col)
    matrix[:, [0, 1]] = matrix[:, [1, 0]]
    matrix[[0, 1]] = matrix[[1, 0]]
    x = np.moveaxis(x, [row_axis, col_axis], [0, 1])    # rows, cols, channels...
    moved = x.reshape(h, w, -1)
    channels = [_affine_channel(moved[..., k], matrix[:2, :2], matrix[:2, 2], fill_mode, cval,
                                order) for k in range(moved.shape[-1])]
    out = np.stack(channels, axis=-1).reshape(x.shape).astype(x.dtype, copy=False)
    return np.moveaxis(out, [0, 1], [row_axis, col_axis])


@keras_export("keras.preprocessing.image.random_rotation")
def random_rotation(x, rg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                    cval=0.0, interpolation_order=1):
    theta = np.random.uniform(-rg, rg)
    return apply_affine_transform(x, theta=theta, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


@keras_export("keras.preprocessing.image.random_shift")
def random_shift(x, wrg, hrg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                 cval=0.0, interpolation_order=1):
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx = np.random.uniform(-hrg, hrg) * h
    ty = np.random.uniform(-wrg, wrg) * w
    return apply_affine_transform(x, tx=tx, ty=ty, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


@keras_export("keras.preprocessing.image.random_shear")
def random_shear(x, intensity, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                 cval=0.0, interpolation_order=1):
    shear = np.random.uniform(-intensity, intensity)
    return apply_affine_transform(x, shear=shear, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


@keras_export("keras.preprocessing.image.random_zoom")
def random_zoom(x, zoom_range, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest",
                cval=0.0, interpolation_order=1):
    if len(zoom_range) != 2:
        raise ValueError("`zoom_range` should be a tuple or list of two floats. Received: "
                         f"{zoom_range}")
    if zoom_range[0] == 1 and zoom_range[1] == 1:
        zx, zy = 1, 1
    else:
        zx, zy = np.random.uniform(zoom_range[0], zoom_range[1], 2)
    return apply_affine_transform(x, zx=zx, zy=zy, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


@keras_export("keras.preprocessing.image.apply_channel_shift")
def apply_channel_shift(x, intensity, channel_axis=0):
    x = np.rollaxis(x, channel_axis, 0)
    low, high = np.min(x), np.max(x)
    x = np.stack([np.clip(c + intensity, low, high) for c in x], axis=0)
    return np.rollaxis(x, 0, channel_axis + 1)


@keras_export("keras.preprocessing.image.random_channel_shift")
def random_channel_shift(x, intensity_range, channel_axis=0):
    return apply_channel_shift(x, np.random.uniform(-intensity_range, intensity_range),
                               channel_axis)


@keras_export("keras.preprocessing.image.apply_brightness_shift")
def apply_brightness_shift(x, brightness, scale=True):
    from PIL import ImageEnhance  # noqa: PLC0415 - PIL is optional for the rest of Keras
    low, high = np.min(x), np.max(x)
    local_scale = low < 0 or high > 255
    img = array_to_img(x, scale=local_scale or scale)
    x = img_to_array(ImageEnhance.Brightness(img).enhance(brightness))
    if not scale and local_scale:
        x = x / 255 * (high - low) + low
    return x


@keras_export("keras.preprocessing.image.random_brightness")
def random_brightness(x, brightness_range, scale=True):
    if len(brightness_range) != 2:
        raise ValueError("`brightness_range should be tuple or list of two floats. Received: "
                         f"{brightness_range}")
    return apply_brightness_shift(x, np.random.uniform(brightness_range[0],
                                                       brightness_range[1]), scale)


attach(globals(), preprocessing_image_docs.DOCS)

"""Keras 3's ContrastLimitedAdaptiveHistogramEqualization (CLAHE): each image is cut into a
grid of tiles; each tile's 256-bin histogram (per channel) is clipped at `clip_limit` times
the mean bin height, the excess spread evenly over the bins, and its normalized cumulative sum
maps the tile's values; a pixel's output blends the maps of the four nearest tile centres
bilinearly. Keras' arithmetic step by step (float32), with one bincount per tile row instead
of Keras' one_hot sum (the same integer counts without the (pixels x 256) temporary)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras.layers.image_color_augmentation import transform_value_range
from ndflow.keras.layers.image_preprocessing import ImagePreprocessingLayer
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_gather,
    array_range,
    array_transpose,
    comparison,
    histogram,
    math,
    math_cumulative,
    reduction,
)
from ndflow.ops.cast import cast

_BINS = 256


def _static_hwc(images, layer) -> tuple:
    height, width, channels = images.shape.as_list()[1:]
    if None in (height, width, channels):
        raise ValueError(f"{layer} needs images with known height, width and channels. "
                         f"Received: images.shape={tuple(images.shape.as_list())}")
    return height, width, channels


@keras_export("keras.layers.ContrastLimitedAdaptiveHistogramEqualization")
class ContrastLimitedAdaptiveHistogramEqualization(ImagePreprocessingLayer):
    """Contrast-limited adaptive histogram equalization (CLAHE): each tile of a grid gets
    its own histogram equalization, with the histograms clipped at `clip_limit` to limit
    noise amplification, and the tiles blended smoothly. Deterministic.

    Args:
      value_range: the (min, max) range of the pixel values (default (0, 255)).
      clip_limit: the histogram clipping threshold (relative to a uniform histogram).
      tile_grid_size: the (rows, columns) of the tile grid.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).
    """

    _USE_BASE_FACTOR = False

    def __init__(self, value_range=(0, 255), clip_limit=4.0, tile_grid_size=(8, 8),
                 data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = value_range
        self.clip_limit = clip_limit
        self.tile_grid_size = tile_grid_size

    def transform_images(self, images, transformation=None, training=True):
        first = self.data_format == "channels_first"
        rank = images.shape.rank
        if first:
            images = array_transpose.transpose(images, (0, 2, 3, 1) if rank == 4 else (1, 2, 0))
        original_dtype = images.dtype
        images = transform_value_range(images, self.value_range, (0, 255), dtypes.float32)
        images = self._clahe(images)
        images = transform_value_range(images, (0, 255), self.value_range, dtypes.float32)
        images = cast(images, original_dtype)
        if first:
            images = array_transpose.transpose(images, (0, 3, 1, 2) if rank == 4 else (2, 0, 1))
        return images

    def _clahe(self, images):
        single = images.shape.rank == 3
        if single:
            images = array_core.expand_dims(images, 0)
        height, width, channels = _static_hwc(images, type(self).__name__)
        batch = images.shape[0] if images.shape[0] is not None else array_core.shape(images)[0]
        grid_h, grid_w = self.tile_grid_size
        tile_h, tile_w = -(-height // grid_h), -(-width // grid_w)
        pad_h, pad_w = tile_h * grid_h - height, tile_w * grid_w - width
        padded = images if pad_h == 0 and pad_w == 0 else array_fill.pad(
            images, [[0, 0], [0, pad_h], [0, pad_w], [0, 0]], mode="SYMMETRIC")

        # per (image, tile row, tile column, channel): the tile's values, counted into bins
        tiled = array_core.reshape(padded, [-1, grid_h, tile_h, grid_w, tile_w, channels])
        tiled = array_transpose.transpose(tiled, (0, 1, 3, 5, 2, 4))
        values = math.clip_by_value(cast(array_core.reshape(tiled, [-1, tile_h * tile_w]),
                                         dtypes.int32), 0, _BINS - 1)
        hists = histogram.bincount(values, minlength=_BINS, maxlength=_BINS,
                                   dtype=dtypes.float32, axis=-1)
        hists = array_core.reshape(hists, [-1, grid_h, grid_w, channels, _BINS])
        if self.clip_limit > 0:
            limit = cast(self.clip_limit * (tile_h * tile_w) / 256.0, dtypes.float32)
            clipped = math.clip_by_value(hists, cast(0, dtypes.float32), limit)
            excess = reduction.reduce_sum(hists - clipped, axis=-1, keepdims=True)
            hists = clipped + excess / 256.0
        cdf = math_cumulative.cumsum(hists, axis=-1)
        cdf_min = reduction.reduce_min(cdf, axis=-1, keepdims=True)
        numerator = (cdf - cdf_min) * 255.0
        denominator = cast(tile_h * tile_w, dtypes.float32) - cdf_min
        denominator = arithmetic.where(comparison.equal(denominator, 0.0),
                                       array_fill.ones_like(denominator), denominator)
        cdf_norm = math.clip_by_value(numerator / denominator, 0.0, 255.0)

        y0, y1, wy = _tile_coordinates(tile_h * grid_h, tile_h, grid_h)
        x0, x1, wx = _tile_coordinates(tile_w * grid_w, tile_w, grid_w)
        stride_x = _BINS * channels
        stride_y = stride_x * grid_w
        stride_b = stride_y * grid_h
        cdf_flat = array_core.reshape(cdf_norm, [-1])
        pixels = cast(math.clip_by_value(cast(padded, dtypes.float32), 0.0, 255.0), dtypes.int32)
        b_idx = array_core.reshape(array_range.range(batch, dtype=dtypes.int32),
                                   [-1, 1, 1, 1])
        c_idx = array_core.reshape(array_range.range(channels, dtype=dtypes.int32),
                                   [1, 1, 1, -1])
        base = b_idx * stride_b + c_idx * _BINS + pixels
        y0, y1, wy = (array_core.reshape(v, [1, -1, 1, 1]) for v in (y0, y1, wy))
        x0, x1, wx = (array_core.reshape(v, [1, 1, -1, 1]) for v in (x0, x1, wx))

        def at(y, x):
            return array_gather.gather(cdf_flat, base + y * stride_y + x * stride_x)

        top = at(y0, x0) * (1.0 - wx) + at(y0, x1) * wx
        bottom = at(y1, x0) * (1.0 - wx) + at(y1, x1) * wx
        result = (top * (1.0 - wy) + bottom * wy)[:, :height, :width, :]
        return array_core.squeeze(result, axis=[0]) if single else result

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range,
                "clip_limit": self.clip_limit, "tile_grid_size": self.tile_grid_size,
                "data_format": self.data_format}


def _tile_coordinates(size: int, tile: int, grid: int):
    """Per padded row (column): the two nearest tile centres (int32) and the weight of the
    second. Keras indexes a grid with a ring of edge copies around it (index i holds tile
    clip(i - 1, 0, grid - 1)); the tiles are indexed directly here."""
    coords = (cast(array_range.range(size), dtypes.float32) - (tile / 2.0)) / tile + 1.0
    low = math.floor(coords)
    high = low + 1.0
    weight = coords - low
    low = cast(math.clip_by_value(low - 1.0, 0.0, float(grid - 1)), dtypes.int32)
    high = cast(math.clip_by_value(high - 1.0, 0.0, float(grid - 1)), dtypes.int32)
    return low, high, weight

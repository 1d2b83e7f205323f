"""`keras.layers.Equalization`: histogram equalization of each channel, as Keras 3.15 does it
(one histogram per channel over the whole batch, `bins` bins of [0, 255] after mapping
`value_range` there; the rounded, clipped cumulative-histogram lookup; a channel with at
most one occupied bin left as it is). Deterministic: it transforms in training only, as
Keras' preprocessing layers do."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras.layers.image_preprocessing import ImagePreprocessingLayer
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_gather,
    comparison,
    math,
    math_cumulative,
    reduction,
)
from ndflow.ops.cast import cast
from ndflow.ops.histogram import bincount

_VALUE_RANGE_ERROR = "The `value_range` argument should be a list of two numbers. "


@keras_export("keras.layers.Equalization")
class Equalization(ImagePreprocessingLayer):
    """Histogram equalization: spreads each channel's values so their histogram is
    roughly flat over `value_range` (more contrast). Deterministic.

    Args:
      value_range: the (min, max) range of the pixel values (default (0, 255)).
      bins: the number of histogram bins.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: a `value_range` that is not two numbers.
    """

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.bins = bins
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError(_VALUE_RANGE_ERROR + f"Received: value_range={value_range}")
        self.value_range = sorted(value_range)

    @staticmethod
    def _scale(values, source, target):
        scale = (target[1] - target[0]) / (source[1] - source[0])
        return values * scale + (target[0] - source[0] * scale)

    def _equalize_channel(self, channel):
        # Keras compares its sorted list with (0, 255), so it always maps (exactly, for
        # [0, 255] itself)
        channel = self._scale(channel, self.value_range, (0, 255))
        bins = self.bins
        scaled = cast(channel, dtypes.float32) * (bins - 1) / 255.0
        indices = math.clip_by_value(cast(scaled, dtypes.int32), 0, bins - 1)
        hist = bincount(array_core.reshape(indices, [-1]), minlength=bins)
        occupied = reduction.reduce_sum(cast(comparison.not_equal(hist, 0), dtypes.int32))
        equalized = self._lookup(channel, hist)
        equalized = arithmetic.where(comparison.less_equal(occupied, 1), channel, equalized)
        return self._scale(equalized, (0, 255), self.value_range)

    def _lookup(self, channel, hist):
        cdf = math_cumulative.cumsum(hist)
        first = arithmetic.where(comparison.not_equal(cdf, 0))[0][0]
        cdf_min = array_gather.gather(cdf, first)
        denominator = cdf[-1] - cdf_min
        denominator = arithmetic.where(comparison.equal(denominator, 0),
                                       array_fill.ones_like(denominator), denominator)
        table = cast((cdf - cdf_min) * 255, dtypes.float32) / cast(denominator, dtypes.float32)
        table = math.clip_by_value(math.round(table), 0.0, 255.0)
        position = (channel / 255.0) * (self.bins - 1)
        index = cast(math.clip_by_value(position, 0.0, float(self.bins - 1)), dtypes.int32)
        return cast(array_gather.gather(table, index), channel.dtype)

    def transform_images(self, images, transformation, training=True):
        if not training:
            return images
        images = cast(images, self.compute_dtype)
        axis = -3 if self.data_format == "channels_first" else -1
        channels = array_core.unstack(images, axis=axis)
        equalized = array_core.stack([self._equalize_channel(c) for c in channels], axis=axis)
        return cast(equalized, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "bins": self.bins, "value_range": self.value_range}

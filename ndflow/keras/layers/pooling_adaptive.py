"""Keras 3's adaptive pooling layers, AdaptiveAveragePooling1D/2D/3D and
AdaptiveMaxPooling1D/2D/3D: pool any (static) spatial size to `output_size` cells, cell i
covering [floor(i * L / n), ceil((i + 1) * L / n)) of its axis (keras.ops.adaptive_*_pool)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.conv_utils import standardize_data_format
from ndflow.keras.ops import nn_conv_functions as nn


def _output_size(value, rank: int) -> tuple:
    """Keras' per-rank reading of `output_size`: an int repeated, or a tuple of `rank`."""
    if isinstance(value, int):
        return (value,) * rank
    if rank == 1 and isinstance(value, (tuple, list)) and len(value) != 1:
        raise ValueError(f"For 1D input, `output_size` tuple must have length 1. Received: "
                         f"{value}")
    if isinstance(value, (tuple, list)) and len(value) == rank:
        return tuple(value)
    what = {1: "tuple of 1 integer", 2: "(height, width) tuple",
            3: "(depth, height, width) tuple"}[rank]
    raise TypeError(f"`output_size` must be an integer or {what}. Received: {value} of type "
                    f"{type(value)}")


class _AdaptivePooling(Layer):
    _RANK = 1
    _POOL = staticmethod(nn.adaptive_average_pool)

    def __init__(self, output_size, data_format=None, **kwargs):
        size = _output_size(output_size, self._RANK)
        super().__init__(**kwargs)
        self.output_size = size
        self.data_format = data_format or standardize_data_format(None)
        if self.data_format not in {"channels_first", "channels_last"}:
            raise ValueError(f"Invalid data_format: {self.data_format}. Expected "
                             "'channels_first' or 'channels_last'.")

    def call(self, inputs):
        return type(self)._POOL(inputs, output_size=self.output_size,
                                data_format=self.data_format)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if self.data_format == "channels_last":
            return (input_shape[0], *self.output_size, input_shape[-1])
        return (input_shape[0], input_shape[1], *self.output_size)

    def get_config(self) -> dict:
        return {**super().get_config(), "output_size": self.output_size,
                "data_format": self.data_format}


def _declare(kind: str, rank: int, pool):
    name = f"Adaptive{kind}Pooling{rank}D"
    cls = type(name, (_AdaptivePooling,), {
        "_RANK": rank, "_POOL": staticmethod(pool), "__module__": __name__,
        "__doc__": f"""{kind} pooling of {rank}-D inputs to a fixed `output_size`, whatever
    the input size: output cell i pools the inputs from `floor(i * L / n)` to
    `ceil((i + 1) * L / n)` along each spatial axis (L the input size, n the output
    size), as PyTorch's adaptive pooling.

    Args:
      output_size: the output's spatial size, an int or a tuple of {rank}.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: an unknown `data_format` or a bad `output_size`.
    """,
        "__init__": lambda self, output_size, data_format=None, **kwargs:
            _AdaptivePooling.__init__(self, output_size, data_format, **kwargs)})
    return keras_export(f"keras.layers.{name}")(cls)


AdaptiveAveragePooling1D = _declare("Average", 1, nn.adaptive_average_pool)
AdaptiveAveragePooling2D = _declare("Average", 2, nn.adaptive_average_pool)
AdaptiveAveragePooling3D = _declare("Average", 3, nn.adaptive_average_pool)
AdaptiveMaxPooling1D = _declare("Max", 1, nn.adaptive_max_pool)
AdaptiveMaxPooling2D = _declare("Max", 2, nn.adaptive_max_pool)
AdaptiveMaxPooling3D = _declare("Max", 3, nn.adaptive_max_pool)

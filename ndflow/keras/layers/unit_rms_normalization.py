"""`keras.layers.UnitNormalization` (each sample scaled to unit L2 norm over `axis`) and
`keras.layers.RMSNormalization` (x / sqrt(mean(x^2) + epsilon) times a learned `scale`)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.normalization_layers import int_or_list
from ndflow.ops import arithmetic, math
from ndflow.ops.array_core import reshape
from ndflow.ops.cast import cast
from ndflow.ops.reduction import reduce_mean, reduce_sum


def _check_axes(axis, input_shape, message) -> None:
    for a in [axis] if isinstance(axis, int) else axis:
        if a >= len(input_shape) or a < -len(input_shape):
            raise ValueError(message(a))


@keras_export("keras.layers.UnitNormalization")
class UnitNormalization(Layer):
    """A layer scaling each input vector to unit L2 norm along `axis`:
    `x / max(||x||, 1e-12)`.

    Args:
      axis: an int or list of ints, the axes the norm is taken over (default the last).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      TypeError: `axis` is neither an int nor a list/tuple.

    Example:

    >>> tf.keras.layers.UnitNormalization()(tf.constant([[3.0, 4.0]])).numpy()
    array([[0.6, 0.8]], dtype=float32)
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int_or_list(axis, "Invalid value for `axis` argument: expected an int or a "
                                      f"list/tuple of ints. Received: axis={axis}")
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        norm = math.sqrt(reduce_sum(inputs * inputs, axis=self.axis, keepdims=True))
        return inputs / arithmetic.maximum(norm, cast(1e-12, inputs.dtype))

    def compute_output_shape(self, input_shape):
        _check_axes(self.axis, input_shape,
                    lambda a: f"Axis {self.axis} is out of bounds for input shape "
                              f"{tuple(input_shape)}.")
        return tuple(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


@keras_export("keras.layers.RMSNormalization")
class RMSNormalization(Layer):
    """Root-mean-square normalization (Zhang & Sennrich, 2019):
    `x / sqrt(mean(x**2) + epsilon) * scale` over `axis`, with a learned `scale` (one per
    position of the normalized axes, initialized to ones). Unlike LayerNormalization it
    neither centres nor shifts.

    Args:
      axis: the axis or axes to normalize over (default the last).
      epsilon: added to the mean square.
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.epsilon = axis, epsilon
        self.scale = None

    def build(self, input_shape) -> None:
        if isinstance(self.axis, (list, tuple)):
            self.axis = sorted(self.axis)
            dims = tuple(input_shape[a] for a in self.axis)
        else:
            dims = (input_shape[self.axis],)
            self.axis = [self.axis]
        self.scale = self.add_weight(dims, "ones", name="scale")
        self.built = True

    def call(self, x):
        rank = x.shape.rank
        axes = [a % rank for a in self.axis]
        mean_square = reduce_mean(x * x, axis=axes, keepdims=True)
        out = x * math.rsqrt(mean_square + cast(self.epsilon, x.dtype))
        # the scale spans the normalized axes: broadcast it against them
        dims = iter(self.scale.shape.as_list())
        scale_shape = [next(dims) if a in axes else 1 for a in range(min(axes), rank)]
        return out * reshape(self.scale, scale_shape)

    def compute_output_shape(self, input_shape):
        _check_axes(self.axis, input_shape,
                    lambda a: f"Axis {a} is out of bounds for input shape "
                              f"{tuple(input_shape)}. Received: axis={self.axis}")
        return tuple(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}

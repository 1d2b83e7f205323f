"""Keras 3's activation layers: ReLU (max_value, negative_slope, threshold), LeakyReLU
(negative_slope 0.3), PReLU (a learned slope per element, `shared_axes`), ELU and Softmax
(over one axis or several, `mask` as Keras 3 applies it)."""

from __future__ import annotations

import warnings

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras import activation_functions as activations
from ndflow.keras import constraint_functions as constraints
from ndflow.keras import regularizer_functions as regularizers
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.keras.layers.normalization_layers import shape_str
from ndflow.ops import arithmetic, comparison, init_ops, math, nn_activation
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast


class ElementwiseLayer(Layer):
    """A mask-propagating layer whose output shape is its input shape (the base of the
    activation layers and of other shape-preserving ones)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape


@keras_export("keras.layers.ReLU")
class ReLU(ElementwiseLayer):
    """A rectified linear unit layer: `x` above `threshold`, `negative_slope * (x -
    threshold)` below it, capped at `max_value`.

    Args:
      max_value: optional non-negative cap on the output.
      negative_slope: the non-negative slope below the threshold (0: flat).
      threshold: the non-negative value where the unit switches on.
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: a negative (or None) `max_value`, `negative_slope` or `threshold`.

    Example:

    >>> tf.keras.layers.ReLU(max_value=6.0)(tf.constant([-1.0, 3.0, 9.0])).numpy()
    array([0., 3., 6.], dtype=float32)
    """

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError("max_value of a ReLU layer cannot be a negative value. "
                             f"Received: max_value={max_value}")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError("negative_slope of a ReLU layer cannot be None or a negative "
                             f"value. Received: negative_slope={negative_slope}")
        if threshold is None or threshold < 0.0:
            raise ValueError("threshold of a ReLU layer cannot be None or a negative value. "
                             f"Received: threshold={threshold}")
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, \
            threshold

    def call(self, inputs):
        return activations.relu(inputs, self.negative_slope, self.max_value, self.threshold)

    def get_config(self) -> dict:
        return {**super().get_config(), "max_value": self.max_value,
                "negative_slope": self.negative_slope, "threshold": self.threshold}


@keras_export("keras.layers.LeakyReLU")
class LeakyReLU(ElementwiseLayer):
    """A leaky ReLU layer: `x` for `x >= 0`, `negative_slope * x` below.

    Args:
      negative_slope: the non-negative slope below 0 (Keras 2's `alpha` is accepted, with
        a deprecation warning).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: a negative (or None) `negative_slope`.
    """

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
            warnings.warn("Argument `alpha` is deprecated. Use `negative_slope` instead.",
                          stacklevel=2)
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError("The negative_slope value of a Leaky ReLU layer cannot be None or "
                             "negative value. Expected a float. Received: "
                             f"negative_slope={negative_slope}")
        self.negative_slope = negative_slope

    def call(self, inputs):
        return nn_activation.leaky_relu(inputs, alpha=self.negative_slope)

    def get_config(self) -> dict:
        return {**super().get_config(), "negative_slope": self.negative_slope}


@keras_export("keras.layers.PReLU")
class PReLU(ElementwiseLayer):
    """A parametric ReLU layer: `x` for `x >= 0`, `alpha * x` below, with `alpha` learned.

    `alpha` has the input's shape without the batch axis (one slope per position and
    channel), except along `shared_axes`, where one slope is shared.

    Args:
      alpha_initializer: the slopes' initializer (default zeros: a plain ReLU at first).
      alpha_regularizer: optional penalty on the slopes.
      alpha_constraint: optional projection of the slopes after each update.
      shared_axes: optional axis or list of axes (counting the batch as 0) sharing one
        slope, e.g. [1, 2] for one slope per channel of (batch, h, w, channels) images.
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None,
                 alpha_constraint=None, shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = init_ops.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)
        self.alpha = None

    def build(self, input_shape) -> None:
        param_shape = list(input_shape[1:])
        for i in self.shared_axes or []:
            param_shape[i - 1] = 1
        if any(d is None for d in param_shape):
            raise ValueError("Shapes used to initialize variables must be fully-defined (no "
                             f"`None` dimensions). Received: shape={shape_str(param_shape)} "
                             f"for variable path='{self.name}/alpha'")
        self.alpha = self.add_weight(param_shape, self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint, name="alpha")
        axes = {i: input_shape[i] for i in range(1, len(input_shape))
                if self.shared_axes and i not in self.shared_axes}
        self.input_spec = InputSpec(ndim=len(input_shape), axes=axes)
        self.built = True

    def call(self, inputs):
        return nn_activation.relu(inputs) - self.alpha * nn_activation.relu(-inputs)

    def get_config(self) -> dict:
        return {**super().get_config(),
                "alpha_initializer": init_ops.serialize(self.alpha_initializer),
                "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
                "alpha_constraint": constraints.serialize(self.alpha_constraint),
                "shared_axes": self.shared_axes}


@keras_export("keras.layers.ELU")
class ELU(ElementwiseLayer):
    """An exponential linear unit layer: `x` for `x > 0`, `alpha * (exp(x) - 1)` below.

    Args:
      alpha: the scale of the negative part.
      **kwargs: Layer arguments (name, dtype, ...).
    """

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha

    def call(self, inputs):
        return activations.elu(inputs, alpha=self.alpha)

    def get_config(self) -> dict:
        config = super().get_config()  # Keras 3's automatic config: name, alpha, the rest
        return {"name": config.pop("name"), "alpha": self.alpha, **config}


def _large_negative(dtype) -> float:
    return -3e4 if dtype is dtypes.float16 else -1e9


@keras_export("keras.layers.Softmax")
class Softmax(ElementwiseLayer):
    """A softmax layer: `exp(x)` normalized to sum to 1 over `axis`.

    Called as `layer(inputs, mask=None)`: with a `mask` (broadcastable to the inputs; True
    or above 0.5 keeps a position), masked positions are left out of the normalization
    and get 0.

    Args:
      axis: an int, or a list of axes normalized together (default the last).
      **kwargs: Layer arguments (name, dtype, ...).

    Example:

    >>> tf.keras.layers.Softmax()(tf.constant([[1.0, 1.0, 1.0]]), mask=tf.constant(
    ...     [[True, True, False]])).numpy()
    array([[0.5, 0.5, 0. ]], dtype=float32)
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs, mask=None):
        if mask is not None:
            mask = convert_to_tensor(mask)
            m_dims, i_dims = mask.shape.as_list(), inputs.shape.as_list()
            if len(m_dims) > len(i_dims):
                raise ValueError("The `mask` must be broadcastable to `inputs` and must not "
                                 f"have more dimensions. Received: inputs.shape="
                                 f"{inputs.shape}, mask.shape={mask.shape}")
            for m_dim, i_dim in zip(m_dims[::-1], i_dims[::-1]):
                if m_dim is not None and i_dim is not None and m_dim not in (1, i_dim):
                    raise ValueError("The `mask` must be broadcastable to `inputs`. Each mask "
                                     "dimension must be 1 or match the corresponding input "
                                     f"dimension. Received: inputs.shape={inputs.shape}, "
                                     f"mask.shape={mask.shape}")
            if mask.dtype is not dtypes.bool:
                mask = comparison.greater(mask, cast(0.5, mask.dtype))
            inputs = arithmetic.select_v2(mask, inputs,
                                          cast(_large_negative(inputs.dtype), inputs.dtype))
        if isinstance(self.axis, (tuple, list)) and len(self.axis) > 1:
            outputs = math.exp(inputs - math.reduce_logsumexp(inputs, axis=list(self.axis),
                                                              keepdims=True))
        else:
            axis = self.axis[0] if isinstance(self.axis, (tuple, list)) else self.axis
            outputs = nn_activation.softmax(inputs, axis=axis)
        if mask is not None:  # a fully masked row would be uniform: zero it
            outputs = arithmetic.select_v2(mask, outputs, cast(0.0, outputs.dtype))
        return outputs

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}

"""Keras 3's Normalization preprocessing layer: `(x - mean) / max(sqrt(variance), 1e-7)` per
position of the kept `axis`; `adapt` learns mean and variance from an array, a tensor, a
`tf.data.Dataset` or an iterable of batches (batches merged as Keras does, so streaming gives
Keras' numbers); `invert=True` maps normalized values back."""

from __future__ import annotations

import math

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.keras.layers.base_layer import Layer
from ndflow.ops import arithmetic, array_fill, norms, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import reshape
from ndflow.ops.cast import cast
from ndflow.ops.math import sqrt

_EPSILON = 1e-7  # keras.backend.epsilon()


def _batch_features(batch):
    """The features of a dataset element: `x` of an `(x, y)` or `(x, y, w)` tuple."""
    if isinstance(batch, (tuple, list)):
        batch = batch[0]
    return batch.numpy() if hasattr(batch, "numpy") else np.asarray(batch)


def _float_tensor(data):
    """A tensor in Keras' mean/var compute dtype: its own if floating, else float32."""
    x = convert_to_tensor(data)
    return x if x.dtype.is_floating else cast(x, "float32")


@keras_export("keras.layers.Normalization")
class Normalization(Layer):
    """Standardizes features: `(x - mean) / sqrt(variance)`, with the statistics given or
    learned by `adapt(data)`.

    The statistics are kept per index along `axis` (per feature, by default the last
    axis) and computed over all the other axes.

    Args:
      axis: the axis or axes that keep separate statistics (default -1); None for one
        mean and variance over everything.
      mean: optional mean (a scalar or an array broadcastable to the kept axes); given
        with `variance`, `adapt` is not needed.
      variance: optional variance, of `mean`'s shape.
      invert: whether to undo the normalization instead: `x * sqrt(variance) + mean`.
      **kwargs: Layer arguments (name, dtype).

    Raises:
      ValueError: only one of `mean` and `variance`, different shapes for them, or a
        `mean` of higher rank than the number of axes; when built, an axis out of range
        or of unknown size; when called, a layer that is not built.

    Example:

    >>> layer = tf.keras.layers.Normalization(axis=None)
    >>> layer.adapt(np.array([1.0, 2.0, 3.0]))
    >>> layer(np.array([1.0, 3.0])).numpy().round(4)
    array([-1.2247,  1.2247], dtype=float32)
    """

    _allow_non_tensor_positional_args = True   # Keras: Python values allowed
    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        else:
            axis = tuple(axis)
        self.axis = axis
        self.input_mean = mean
        self.input_variance = variance
        self.invert = invert
        self.supports_masking = True
        self._build_input_shape = None
        self._fixed = None    # (mean, variance) from input_mean/input_variance
        if (mean is not None) != (variance is not None):
            raise ValueError(
                "When setting values directly, both `mean` and `variance` must be set. "
                f"Received: mean={mean} and variance={variance}")
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise ValueError(
                    "When setting values directly, `mean` and `variance` must have the same "
                    f"shape. Received: mean shape {np.shape(mean)} and variance shape "
                    f"{np.shape(variance)}")
            if len(np.shape(mean)) > len(self.axis):
                raise ValueError(
                    "The rank of `mean` must be less than or equal to the number of axes "
                    f"({len(self.axis)}). Received: mean shape {np.shape(mean)} for axis "
                    f"{self.axis}")

    def build(self, input_shape):
        if input_shape is None:
            return
        input_shape = tuple(input_shape)
        ndim = len(input_shape)
        self._build_input_shape = input_shape
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError("All `axis` values must be in the range [-ndim, ndim). Received "
                             f"inputs with ndim={ndim}, while axis={self.axis}")
        self._keep_axis = tuple(sorted(d if d >= 0 else d + ndim for d in self.axis))
        for d in self._keep_axis:
            if input_shape[d] is None:
                raise ValueError(
                    f"All `axis` values to be kept must have a known shape. Received "
                    f"axis={self.axis}, inputs.shape={input_shape}, with unknown axis at "
                    f"index {d}")
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = [input_shape[d] if d in self._keep_axis else 1
                                 for d in range(ndim)]
        self._mean_and_var_shape = tuple(input_shape[d] for d in self._keep_axis)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._mean_and_var_shape,
                                              initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight(name="variance",
                                                  shape=self._mean_and_var_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int64",
                                         initializer="zeros", trainable=False)
            self.built = True
            self.finalize_state()
        else:
            # a scalar or trailing-axes mean broadcast over the kept axes, as Keras
            mean = np.asarray(self.input_mean, dtype=np.float64)
            variance = np.asarray(self.input_variance, dtype=np.float64)
            if mean.ndim:
                expanded = [1] * ndim
                for i in range(1, mean.ndim + 1):
                    expanded[self._keep_axis[-i]] = mean.shape[-i]
                mean, variance = mean.reshape(expanded), variance.reshape(expanded)
            shape = tuple(self._broadcast_shape) if self._broadcast_shape else ()
            self._fixed = (np.broadcast_to(mean, shape).astype(self.compute_dtype),
                           np.broadcast_to(variance, shape).astype(self.compute_dtype))
            self.built = True

    def adapt(self, data):
        """Learns the mean and variance of `data` (array, tensor, dataset or batches)."""
        if isinstance(data, np.ndarray) or hasattr(data, "numpy") and hasattr(data, "shape"):
            batches, input_shape, whole = None, tuple(data.shape), True
        elif hasattr(data, "element_spec"):  # a tf.data.Dataset
            spec = data.element_spec
            spec = spec[0] if isinstance(spec, tuple) else spec
            input_shape = tuple(spec.shape.as_list())
            if len(input_shape) == 1:
                data = data.batch(128)
                spec = data.element_spec
                spec = spec[0] if isinstance(spec, tuple) else spec
                input_shape = tuple(spec.shape.as_list())
            batches, whole = data, False
        elif hasattr(data, "__iter__"):
            items = iter(data)
            first = next(items, None)
            if first is None:
                raise ValueError("adapt() received an empty iterable (no batches). Expected at "
                                 "least one batch.")
            first = _batch_features(first)
            input_shape = first.shape
            batches, whole = [first, *items], False
        else:
            raise TypeError(f"Unsupported data type: {type(data)}. `adapt` supports "
                            "`np.ndarray`, backend tensors, `tf.data.Dataset`, and iterables "
                            "of batches (e.g. list, generator).")
        if not self.built:
            self.build(input_shape)
        else:
            for d in self._keep_axis:
                if input_shape[d] != self._build_input_shape[d]:
                    raise ValueError(
                        f"The layer was built with input_shape={self._build_input_shape}, but "
                        "adapt() is being called with data with an incompatible shape, "
                        f"data.shape={input_shape}")
        # Keras' arithmetic, so the learned values are TF's to the last bit: NumPy's mean/var
        # for an array, float ops in the tensor's (or, per batch, the compute) dtype otherwise
        if whole and isinstance(data, np.ndarray):
            total_mean = np.mean(data, axis=self._reduce_axis)
            total_var = np.var(data, axis=self._reduce_axis)
        elif whole:
            x = _float_tensor(data)
            total_mean = reduction.reduce_mean(x, axis=self._reduce_axis)
            total_var = norms.reduce_variance(x, axis=self._reduce_axis)
        else:
            total_mean = array_fill.zeros(self._mean_and_var_shape, self.compute_dtype)
            total_var = array_fill.zeros(self._mean_and_var_shape, self.compute_dtype)
            total_count = 0
            for batch in batches:
                x = cast(convert_to_tensor(_batch_features(batch)), self.compute_dtype)
                count = math.prod(x.shape[d] for d in self._reduce_axis)
                if count == 0:
                    continue
                batch_mean = reduction.reduce_mean(x, axis=self._reduce_axis)
                batch_var = norms.reduce_variance(x, axis=self._reduce_axis)
                total_count += count
                w = float(count) / total_count
                new_mean = total_mean * (1.0 - w) + batch_mean * w
                total_var = ((total_var + (total_mean - new_mean) ** 2) * (1.0 - w)
                             + (batch_var + (batch_mean - new_mean) ** 2) * w)
                total_mean = new_mean
        for variable, value in ((self.adapt_mean, total_mean), (self.adapt_variance, total_var)):
            value = value.numpy() if hasattr(value, "numpy") else value
            variable.assign(np.asarray(value, variable.dtype.as_numpy_dtype))
        self.finalize_state()

    def finalize_state(self):
        pass  # `mean`/`variance` are read from the (restorable) weights whenever used

    @property
    def mean(self):
        """The broadcastable mean in use (Keras' attribute; None before `build`)."""
        return self._mean_variance()[0] if self.built else None

    @property
    def variance(self):
        return self._mean_variance()[1] if self.built else None

    def _mean_variance(self):
        if self._fixed is not None:
            return self._fixed
        mean = cast(reshape(self.adapt_mean, self._broadcast_shape), self.compute_dtype)
        variance = cast(reshape(self.adapt_variance, self._broadcast_shape), self.compute_dtype)
        return mean, variance

    def call(self, inputs):
        if not self.built:
            raise ValueError("You must call `.build(input_shape)` on the layer before using it.")
        inputs = cast(convert_to_tensor(inputs), self.compute_dtype)
        mean, variance = self._mean_variance()
        scale = arithmetic.maximum(sqrt(convert_to_tensor(variance)),
                                   convert_to_tensor(_EPSILON, self.compute_dtype))
        if self.invert:
            return arithmetic.add(mean, arithmetic.multiply(inputs, scale))
        return arithmetic.divide(arithmetic.subtract(inputs, mean), scale)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            "axis": self.axis,
            "invert": self.invert,
            "mean": np.array(self.input_mean).tolist() if self.input_mean is not None
            else None,
            "variance": np.array(self.input_variance).tolist()
            if self.input_variance is not None else None,
        })
        return config

    def get_build_config(self):
        if self._build_input_shape:
            return {"input_shape": self._build_input_shape}
        return None

    def build_from_config(self, config):
        if config:
            self.build(config["input_shape"])

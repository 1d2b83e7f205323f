"""`tf.keras.metrics.Sum`, `Mean` and `MeanMetricWrapper` (Keras 3): weighted sums and means
of values, each sample's values first reduced to the rank of the sample weights."""

from __future__ import annotations

from ndflow.keras.loss_functions import squeeze_or_expand_to_same_rank
from ndflow.keras.metrics.base_metric import (
    FUNCTIONS,
    Metric,
    apply_mask,
    export,
    get_keras_mask,
)
from ndflow.ops import arithmetic, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import shape
from ndflow.ops.array_fill import broadcast_to
from ndflow.ops.cast import cast


def reduce_to_samplewise_values(values, sample_weight, reduce_fn, dtype):
    """Keras' reduction of `values` to one value per sample: the values are reduced (by
    `reduce_fn`) to the rank of `sample_weight` and weighted, then over the non-batch axes; the
    weights are reduced the same way. Returns (values, weights or None)."""
    mask = get_keras_mask(values)
    values = cast(convert_to_tensor(values), dtype)
    if sample_weight is not None:
        sample_weight = cast(convert_to_tensor(sample_weight), dtype)
        if mask is not None:
            sample_weight = apply_mask(sample_weight, mask, dtype)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        weight_ndim, values_ndim = sample_weight.shape.rank, values.shape.rank
        if values_ndim > weight_ndim:
            values = reduce_fn(values, axis=list(range(weight_ndim, values_ndim)))
        sample_weight = broadcast_to(sample_weight, shape(values))
        values = values * sample_weight
        if weight_ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=list(range(1, weight_ndim)))
    values_ndim = values.shape.rank
    if values_ndim > 1:
        values = reduce_fn(values, axis=list(range(1, values_ndim)))
    return values, sample_weight


@export("Sum")
class Sum(Metric):
    """The running (weighted) sum of the values passed to `update_state(values,
    sample_weight=None)`, kept in one variable, `total`.

    Args:
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).

    Example:

    >>> m = tf.keras.metrics.Sum()
    >>> m.update_state([1.0, 2.0])
    >>> m.update_state([3.0], sample_weight=[2.0])
    >>> float(m.result())
    9.0
    """

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(shape=(), initializer="zeros", dtype=self.dtype,
                                       name="total")

    def update_state(self, values, sample_weight=None):
        values, _ = reduce_to_samplewise_values(values, sample_weight, reduction.reduce_sum,
                                                self.dtype)
        self.total.assign_add(reduction.reduce_sum(values))

    def reset_state(self):
        self.total.assign(cast(0, self.total.dtype))

    def result(self):
        return cast(self.total.value(), self.dtype)


@export("Mean")
class Mean(Metric):
    """The running (weighted) mean of the values passed to `update_state(values,
    sample_weight=None)`: `total / count`, kept in two variables.

    Args:
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).

    Example:

    >>> m = tf.keras.metrics.Mean()
    >>> m.update_state([1.0, 2.0, 3.0])
    >>> float(m.result())
    2.0
    """

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(shape=(), initializer="zeros", dtype=self.dtype,
                                       name="total")
        self.count = self.add_variable(shape=(), initializer="zeros", dtype=self.dtype,
                                       name="count")

    def update_state(self, values, sample_weight=None):
        values, sample_weight = reduce_to_samplewise_values(
            values, sample_weight, reduction.reduce_mean, self.dtype)
        self.total.assign_add(reduction.reduce_sum(values))
        if sample_weight is not None:
            num_samples = reduction.reduce_sum(sample_weight)
        elif values.shape.rank >= 1:
            num_samples = shape(values)[0]
        else:
            num_samples = 1
        self.count.assign_add(cast(num_samples, self.dtype))

    def reset_state(self):
        self.total.assign(cast(0, self.total.dtype))
        self.count.assign(cast(0, self.count.dtype))

    def result(self):
        return arithmetic.div_no_nan(self.total.value(), cast(self.count.value(), self.dtype))


def _serialize_fn(fn):
    if isinstance(fn, Metric):
        return {"module": "keras.metrics", "class_name": type(fn).__name__,
                "config": fn.get_config(), "registered_name": None}
    return {"module": "builtins", "class_name": "function",
            "config": getattr(fn, "__name__", None) or type(fn).__name__,
            "registered_name": "function"}


def deserialize_fn(config, custom_objects=None):
    """The metric function a serialized "fn" names (a known metric or loss function, or one
    of `custom_objects`)."""
    if callable(config):
        return config
    name = config.get("config") if isinstance(config, dict) else config
    fn = (custom_objects or {}).get(name) or FUNCTIONS.get(name)
    if fn is None:
        raise ValueError(f"Could not interpret metric function identifier: {config}")
    return fn


@export("MeanMetricWrapper")
class MeanMetricWrapper(Mean):
    """A metric from a function: the running (weighted) mean of
    `fn(y_true, y_pred, **kwargs)` over the samples passed to `update_state` (a mask on
    `y_pred` weighs masked samples 0).

    Args:
      fn: a function `(y_true, y_pred, **kwargs)` returning one value per sample.
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).
      **kwargs: passed to `fn` on every call.

    Example:

    >>> m = tf.keras.metrics.MeanMetricWrapper(tf.keras.losses.mae)
    >>> _ = m.update_state([[0.0, 0.0]], [[1.0, 3.0]])
    >>> float(m.result())
    2.0
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs
        if getattr(fn, "__module__", None) == "ndflow.keras.loss_functions":
            self._direction = "down"

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = get_keras_mask(y_pred)
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        sample_weight = apply_mask(sample_weight, mask, self.dtype)
        return super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        return {**super().get_config(), "fn": _serialize_fn(self._fn), **self._fn_kwargs}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if "fn" in config:
            config["fn"] = deserialize_fn(config["fn"], custom_objects)
        return cls(**config)


def mean_wrapper_class(class_name: str, fn, default_name: str, direction: str | None,
                       module: str, doc: str):
    """A MeanMetricWrapper subclass around `fn` taking `(name=default_name, dtype=None)`, its
    config just the name and dtype (as Keras' Hinge, KLDivergence, MeanSquaredError...)."""
    def __init__(self, name=default_name, dtype=None):
        MeanMetricWrapper.__init__(self, fn=fn, name=name, dtype=dtype)
        if direction is not None:
            self._direction = direction

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    __init__.__qualname__ = f"{class_name}.__init__"
    get_config.__qualname__ = f"{class_name}.get_config"
    doc = f"""{doc}

    Each `update_state(y_true, y_pred, sample_weight=None)` adds the per-sample values of
    `{fn.__name__}` to a running (optionally weighted) mean; `result()` returns the mean
    so far and `reset_state()` starts again.

    Args:
      name: the metric's name (default "{default_name}").
      dtype: the dtype of the state and result (default floatx).
    """
    cls = type(class_name, (MeanMetricWrapper,), {
        "__init__": __init__, "get_config": get_config, "__doc__": doc,
        "__module__": module, "__qualname__": class_name})
    return export(class_name)(cls)

"""`tf.keras.metrics.Metric` (Keras 3's API on ndflow variables): state held in non-trainable
variables made with `add_variable`, accumulated by `update_state` (always through variable
assignments, so a training step traced by `tf.function` updates the metric on every call),
read by `result()`, zeroed by `reset_state()`; `metric(...)` is update then result.

Also the helpers the metric modules share: the dtype of a metric (Keras 3: the compute dtype
of `dtype`, else floatx), Keras' snake-case names, the mask of a Keras tensor, and the table
of metric functions a `MeanMetricWrapper` config may name."""

from __future__ import annotations

import re

from ndflow.core import dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.keras.layers.base_layer import unique_name
from ndflow.keras.layers.layer_tracking import TrackedMetric
from ndflow.keras.loss_functions import squeeze_or_expand_to_same_rank
from ndflow.keras.mixed_precision.policy import DTypePolicy
from ndflow.ops import init_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_fill import zeros
from ndflow.ops.cast import cast
from ndflow.ops.variable_enums import VariableAggregationV2, VariableSynchronization
from ndflow.ops.variables import Variable

FLOATX = "float32"
EPSILON = 1e-7
AGGREGATIONS = (None, "none", "mean", "sum", "only_first_replica")

# Metric functions by name (what a MeanMetricWrapper config's "fn" may name).
FUNCTIONS: dict = {}


def export(*names: str):
    """tf.keras.metrics.X and tf.metrics.X (TF2), tf.compat.v1.keras.metrics.X (TF1's
    tf.compat.v1.metrics is another API)."""
    return tf_export(*[f"keras.metrics.{n}" for n in names], *[f"metrics.{n}" for n in names],
                     v1=[f"keras.metrics.{n}" for n in names])


def register_function(fn, *names):
    """Records `fn` under its name (and `names`) for deserialization; returns it."""
    for name in (fn.__name__, *names):
        FUNCTIONS[name] = fn
    return fn


def to_snake_case(name: str) -> str:
    """Keras' `to_snake_case` ("AUC" -> "auc", "MeanIoU" -> "mean_io_u")."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def compute_dtype(dtype) -> str:
    """The dtype name a metric computes in: a policy's compute dtype, else the dtype's name."""
    if dtype is None:
        return FLOATX
    if dtype in ("int", int):  # Keras' Python-type names
        return "int64"
    if dtype is float:
        return FLOATX
    if isinstance(dtype, DTypePolicy):
        return dtype.compute_dtype
    if isinstance(dtype, dict):  # a serialized policy
        return DTypePolicy(dtype["config"]["name"]).compute_dtype
    if isinstance(dtype, str):
        return DTypePolicy(dtype).compute_dtype
    return dtypes.as_dtype(dtype).name


def check_2d_inputs(class_name: str, y_true_shape, y_pred_shape) -> None:
    """Keras' check that a metric built from its inputs gets (batch, known output_dim)."""
    if len(y_pred_shape) != 2 or len(y_true_shape) != 2:
        raise ValueError(f"{class_name} expects 2D inputs with shape (batch_size, output_dim). "
                         f"Received input shapes: y_pred.shape={y_pred_shape} and "
                         f"y_true.shape={y_true_shape}.")
    if y_pred_shape[-1] is None or y_true_shape[-1] is None:
        raise ValueError(f"{class_name} expects 2D inputs with shape (batch_size, output_dim), "
                         "with output_dim fully defined (not None). Received input shapes: "
                         f"y_pred.shape={y_pred_shape} and y_true.shape={y_true_shape}.")


def get_keras_mask(x):
    return getattr(x, "_keras_mask", None)


def apply_mask(sample_weight, mask, dtype):
    """Keras' `apply_mask` with the "sum" reduction: masked entries get weight 0."""
    if mask is None:
        return sample_weight
    mask = cast(mask, dtype)
    if sample_weight is None:
        return mask
    sample_weight = cast(convert_to_tensor(sample_weight), dtype)
    mask, sample_weight = squeeze_or_expand_to_same_rank(mask, sample_weight)
    return sample_weight * mask


@tf_export("keras.metrics.Metric", "keras.Metric", "metrics.Metric",
           v1=["keras.metrics.Metric", "keras.Metric"])
class Metric(TrackedMetric):
    """Base class of stateful metrics: subclasses create their state in `__init__` with
    `add_variable`, accumulate it in `update_state` (variable `assign`/`assign_add`) and
    compute the value in `result`; `reset_state` sets the state back (`fit` does each
    epoch).

    Args:
      dtype: the dtype of the state and result (default floatx).
      name: the metric's name (default the class name in snake case).

    Example:

    >>> class Count(tf.keras.metrics.Metric):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         self.n = self.add_variable(shape=(), initializer="zeros", name="n")
    ...     def update_state(self, y_true, y_pred, sample_weight=None):
    ...         self.n.assign_add(tf.cast(tf.shape(y_true)[0], self.n.dtype))
    ...     def result(self):
    ...         return self.n
    >>> m = Count()
    >>> m.update_state(tf.zeros((3, 1)), tf.zeros((3, 1)))
    >>> float(m.result())
    3.0
    """

    def __init__(self, dtype=None, name=None):
        self.name = name or unique_name(to_snake_case(type(self).__name__))
        self._dtype = compute_dtype(dtype)
        self._metrics = []
        self._variables = []

    def __setattr__(self, name, value):
        # Keras' tracking: variables and sub-metrics assigned as attributes belong to the metric.
        tracked = self.__dict__.get("_variables")
        if tracked is not None:
            items = value if isinstance(value, (list, tuple)) else (value,)
            for item in items:
                if isinstance(item, Variable) and not any(v is item for v in tracked):
                    tracked.append(item)
                elif isinstance(item, Metric) and item is not self and \
                        not any(m is item for m in self._metrics):
                    self._metrics.append(item)
        super().__setattr__(name, value)

    def _check_super_called(self) -> None:
        if "_variables" not in self.__dict__:
            raise RuntimeError("You forgot to call `super().__init__()` in the `__init__()` "
                               "method. Go add it!")

    @property
    def dtype(self) -> str:
        return self._dtype

    @property
    def variables(self) -> list:
        out = list(self._variables)
        for metric in self._metrics:
            out.extend(metric.variables)
        return out

    def add_variable(self, shape, initializer, dtype=None, aggregation="sum", name=None):
        """A new non-trainable state variable of this metric (created outside any function
        being traced, as TensorFlow lifts variables)."""
        self._check_super_called()
        if aggregation not in AGGREGATIONS:
            raise ValueError("Invalid value for argument `aggregation`. Expected one of `None`, "
                             "`'none'`, `'mean'`, `'sum'`, `'only_first_replica'`. Received: "
                             f"aggregation={aggregation}")
        dtype = dtypes.as_dtype(dtype or FLOATX)
        shape = tuple(() if shape is None else shape)
        init = init_ops.get(initializer)
        with scopes.init_scope(), scopes.name_scope(self.name.replace("/", ">")):
            # as Keras 3: each replica keeps its own state, combined by `aggregation` on read
            variable = Variable(lambda: init(shape, dtype=dtype), trainable=False, dtype=dtype,
                                name=name or "variable",
                                synchronization=VariableSynchronization.ON_READ,
                                aggregation=VariableAggregationV2[(aggregation or "none").upper()])
        variable._keras_aggregation = aggregation
        self._variables.append(variable)
        return variable

    def add_weight(self, shape=(), initializer=None, dtype=None, name=None):
        """Keras' backwards-compatible alias of `add_variable`."""
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype, name=name)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def reset_state(self) -> None:
        """Zeroes every state variable."""
        for v in self.variables:
            v.assign(zeros(v.shape, dtype=v.dtype))

    def __call__(self, *args, **kwargs):
        self._check_super_called()
        self.update_state(*args, **kwargs)
        return self.result()

    # -- Keras 3's stateless forms (JAX-style loops): the state goes in and out as values ----
    def _with_state(self, values, compute):
        """`compute()` run on the metric's variables holding `values` (None: as they are),
        then (its output, the variables' values after it); the variables get their own
        values back whatever happens."""
        variables = self.variables
        if values is not None and len(values) != len(variables):
            raise ValueError("Argument `metric_variables` must be a list of tensors "
                             f"corresponding 1:1 to {type(self).__name__}().variables. "
                             f"Received list with length {len(values)}, but expected "
                             f"{len(variables)} variables.")
        saved = [v.read_value() for v in variables]
        try:
            if values is not None:
                for variable, value in zip(variables, values):
                    variable.assign(value)
            out = compute()
            return out, [v.read_value() for v in variables]
        finally:
            for variable, value in zip(variables, saved):
                variable.assign(value)

    def stateless_update_state(self, metric_variables, *args, **kwargs) -> list:
        """The values `metric_variables` (1:1 with `variables`) take from
        `update_state(*args, **kwargs)`; the metric's own variables stay as they are."""
        return self._with_state(metric_variables,
                                lambda: self.update_state(*args, **kwargs))[1]

    def stateless_result(self, metric_variables):
        """`result()` of the state `metric_variables`."""
        return self._with_state(metric_variables, self.result)[0]

    def stateless_reset_state(self) -> list:
        """The values `reset_state()` gives the variables, leaving them as they are."""
        return self._with_state(None, self.reset_state)[1]

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"

    __str__ = __repr__

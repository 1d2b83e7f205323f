"""`tf.keras.metrics.get` / `serialize` / `deserialize` with Keras 3's names (class names,
their snake-case forms such as "auc" or "binary_accuracy", and "mse", "mae", "mape", "msle",
"bce"), the loss functions Keras also exports as metric functions (`tf.keras.metrics.mse`
is `tf.keras.losses.mse`), and what `Model.compile` needs: `get_compile_metric` resolves a
`metrics=[...]` entry as Keras' compile_utils does ("accuracy"/"acc" become the binary,
sparse categorical or categorical accuracy the shapes call for; a function becomes a
MeanMetricWrapper; the metric is named after the identifier)."""

from __future__ import annotations

import inspect

from ndflow.core.shapes import TensorShape
from ndflow.keras import loss_functions as losses
from ndflow.keras.metrics import (
    accuracy_metrics,
    auc_metric,
    confusion_metrics,
    correlation_metrics,
    f_score_metrics,
    iou_metrics,
    probabilistic_metrics,
    reduction_metrics,
    regression_metrics,
)
from ndflow.keras.metrics.base_metric import (
    FUNCTIONS,
    Metric,
    export,
    register_function,
    to_snake_case,
)

# Loss functions under tf.keras.metrics (and tf.metrics), as Keras 3 exports them.
_LOSS_FUNCTIONS = {
    "binary_crossentropy": losses.binary_crossentropy,
    "categorical_crossentropy": losses.categorical_crossentropy,
    "sparse_categorical_crossentropy": losses.sparse_categorical_crossentropy,
    "hinge": losses.hinge, "squared_hinge": losses.squared_hinge,
    "categorical_hinge": losses.categorical_hinge, "huber": losses.huber,
    "kld": losses.kl_divergence, "KLD": losses.kl_divergence,
    "kullback_leibler_divergence": losses.kl_divergence, "logcosh": losses.log_cosh,
    "mae": losses.mean_absolute_error, "MAE": losses.mean_absolute_error,
    "mape": losses.mean_absolute_percentage_error,
    "MAPE": losses.mean_absolute_percentage_error,
    "mse": losses.mean_squared_error, "MSE": losses.mean_squared_error,
    "msle": losses.mean_squared_logarithmic_error,
    "MSLE": losses.mean_squared_logarithmic_error, "poisson": losses.poisson,
}
for _name, _fn in _LOSS_FUNCTIONS.items():
    export(_name)(_fn)
    register_function(_fn, _name)

ALL_OBJECTS = (
    Metric, reduction_metrics.Mean, reduction_metrics.Sum, reduction_metrics.MeanMetricWrapper,
    regression_metrics.MeanSquaredError, regression_metrics.RootMeanSquaredError,
    regression_metrics.MeanAbsoluteError, regression_metrics.MeanAbsolutePercentageError,
    regression_metrics.MeanSquaredLogarithmicError, regression_metrics.CosineSimilarity,
    regression_metrics.LogCoshError, auc_metric.AUC, confusion_metrics.FalseNegatives,
    confusion_metrics.FalsePositives, confusion_metrics.Precision,
    confusion_metrics.PrecisionAtRecall, confusion_metrics.Recall,
    confusion_metrics.RecallAtPrecision, confusion_metrics.SensitivityAtSpecificity,
    confusion_metrics.SpecificityAtSensitivity, confusion_metrics.TrueNegatives,
    confusion_metrics.TruePositives, probabilistic_metrics.Hinge,
    probabilistic_metrics.SquaredHinge, probabilistic_metrics.CategoricalHinge,
    probabilistic_metrics.KLDivergence, probabilistic_metrics.Poisson,
    probabilistic_metrics.BinaryCrossentropy, probabilistic_metrics.CategoricalCrossentropy,
    probabilistic_metrics.SparseCategoricalCrossentropy, accuracy_metrics.Accuracy,
    accuracy_metrics.BinaryAccuracy, accuracy_metrics.CategoricalAccuracy,
    accuracy_metrics.SparseCategoricalAccuracy, accuracy_metrics.TopKCategoricalAccuracy,
    accuracy_metrics.SparseTopKCategoricalAccuracy, regression_metrics.R2Score,
    correlation_metrics.PearsonCorrelation, correlation_metrics.ConcordanceCorrelation,
    f_score_metrics.F1Score, f_score_metrics.FBetaScore, iou_metrics.IoU, iou_metrics.BinaryIoU,
    iou_metrics.MeanIoU, iou_metrics.OneHotIoU, iou_metrics.OneHotMeanIoU,
)
ALL_OBJECTS_DICT = {cls.__name__: cls for cls in ALL_OBJECTS}
ALL_OBJECTS_DICT.update({to_snake_case(cls.__name__): cls for cls in ALL_OBJECTS})
ALL_OBJECTS_DICT.update(
    bce=probabilistic_metrics.BinaryCrossentropy, BCE=probabilistic_metrics.BinaryCrossentropy,
    mse=regression_metrics.MeanSquaredError, MSE=regression_metrics.MeanSquaredError,
    mae=regression_metrics.MeanAbsoluteError, MAE=regression_metrics.MeanAbsoluteError,
    mape=regression_metrics.MeanAbsolutePercentageError,
    MAPE=regression_metrics.MeanAbsolutePercentageError,
    msle=regression_metrics.MeanSquaredLogarithmicError,
    MSLE=regression_metrics.MeanSquaredLogarithmicError)


@export("serialize")
def serialize(metric) -> dict:
    """A metric's config as Keras 3 saves it; a metric function is recorded by its name.

    Args:
      metric: a `keras.metrics.Metric` or a metric function.

    Returns:
      A dict with "module", "class_name", "config" and "registered_name".
    """
    if isinstance(metric, Metric):
        return {"module": "keras.metrics", "class_name": type(metric).__name__,
                "config": metric.get_config(), "registered_name": None}
    if callable(metric) and hasattr(metric, "__name__"):
        return {"module": "builtins", "class_name": "function", "config": metric.__name__,
                "registered_name": "function"}
    raise ValueError(f"Could not interpret metric identifier: {metric}")


@export("deserialize")
def deserialize(config, custom_objects=None):
    """A metric (or metric function) from its saved config or its name; only the built-in
    classes and functions and `custom_objects` are looked up.

    Args:
      config: a dict from `serialize`, or a class or function name.
      custom_objects: optional dict of names to user metrics, looked up first.

    Returns:
      A Metric (a new one, from a dict), a Metric class or a metric function.

    Raises:
      ValueError: the identifier names no known metric.
    """
    custom_objects = custom_objects or {}
    if isinstance(config, str):
        found = custom_objects.get(config) or ALL_OBJECTS_DICT.get(config) or \
            FUNCTIONS.get(config)
        if found is None:
            raise ValueError(f"Could not interpret metric identifier: {config}")
        return found() if inspect.isclass(found) else found
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret metric identifier: {config}")
    if config["class_name"] == "function":
        return reduction_metrics.deserialize_fn(config, custom_objects)
    cls = custom_objects.get(config["class_name"]) or ALL_OBJECTS_DICT.get(config["class_name"])
    if cls is None:
        raise ValueError(f"Could not interpret metric identifier: {config}")
    inner = config.get("config") or {}
    if issubclass(cls, reduction_metrics.MeanMetricWrapper) and "fn" in inner:
        return cls.from_config(inner, custom_objects)
    return cls.from_config(inner)


@export("get")
def get(identifier):
    """The metric an identifier stands for (what `compile(metrics=...)` entries may be).

    Args:
      identifier: None, a name ("accuracy", "mse", "auc", ...: a new instance), a config
        dict, a Metric class (instantiated), a Metric or a function (returned as it is).

    Returns:
      A Metric or metric function, or None for None.

    Raises:
      ValueError: an identifier that names no known metric.

    Example:

    >>> type(tf.keras.metrics.get("auc")).__name__
    'AUC'
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        obj = ALL_OBJECTS_DICT.get(identifier)
    else:
        obj = identifier
    if callable(obj):
        return obj() if inspect.isclass(obj) else obj
    raise ValueError(f"Could not interpret metric identifier: {identifier}")


# -- compile() -------------------------------------------------------------------------------

def _shape(x) -> tuple:
    shape = getattr(x, "shape", x)
    if isinstance(shape, TensorShape):
        return tuple(shape.as_list())
    return tuple(shape)


def is_binary_or_sparse_categorical(y_true_shape, y_pred_shape) -> tuple:
    """Keras' guess from the shapes (or tensors): (binary: one prediction per sample,
    sparse categorical: integer labels against class scores)."""
    t, p = _shape(y_true_shape), _shape(y_pred_shape)
    is_binary = p[-1] == 1
    is_sparse = len(t) < len(p) or (t[-1] == 1 and p[-1] > 1)
    return is_binary, is_sparse


def resolve_accuracy(name: str, y_true_shape, y_pred_shape) -> Metric:
    """The accuracy metric "accuracy"/"acc" means for these shapes, named `name`."""
    is_binary, is_sparse = is_binary_or_sparse_categorical(y_true_shape, y_pred_shape)
    if is_binary:
        return accuracy_metrics.BinaryAccuracy(name=str(name))
    if is_sparse:
        return accuracy_metrics.SparseCategoricalAccuracy(name=str(name))
    return accuracy_metrics.CategoricalAccuracy(name=str(name))


def get_compile_metric(identifier, y_true_shape, y_pred_shape) -> Metric:
    """One `compile(metrics=[...])` entry as the Metric Keras 3 makes of it (its
    compile_utils.get_metric): a string names it, accuracy is resolved by the shapes, a
    plain function is wrapped in MeanMetricWrapper."""
    if identifier is None:
        raise ValueError("Expected metric, received `None`")
    if str(identifier).lower() in ("accuracy", "acc"):
        metric = resolve_accuracy(identifier, y_true_shape, y_pred_shape)
    else:
        metric = get(identifier)
    if isinstance(identifier, str):
        name = identifier
    elif hasattr(metric, "name"):
        name = metric.name
    else:
        name = to_snake_case(getattr(metric, "__name__", type(metric).__name__))
    if not isinstance(metric, Metric):
        metric = reduction_metrics.MeanMetricWrapper(metric)
    metric.name = name
    return metric

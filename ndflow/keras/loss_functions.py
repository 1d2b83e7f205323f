"""`tf.keras.losses` (also `tf.losses`, as in TensorFlow 2.21): Keras 3's loss functions and
classes. A function gives one loss per sample (the mean over the last axis where Keras takes
it); a class applies `sample_weight` and its reduction ("sum_over_batch_size" by default:
the weighted sum divided by the number of elements, 0 for an empty batch). Probabilities are
clipped to [epsilon, 1 - epsilon] with Keras' epsilon 1e-7. (Not named losses.py: a module
named like a public namespace becomes that namespace.)"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export, tf_export
from ndflow.core.graph import SymbolicTensor
from ndflow.core.nest import map_structure
from ndflow.core.tensor import Tensor
from ndflow.keras import docstrings, loss_class_docs, loss_docs
from ndflow.keras.global_config import floatx
from ndflow.ops import arithmetic, comparison, math, nn_activation, nn_loss, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, shape, squeeze
from ndflow.ops.cast import cast
from ndflow.runtime.control_flow import cond

EPSILON = 1e-7
REDUCTIONS = ("sum", "sum_over_batch_size", "mean", "mean_with_sample_weight", "none", None)


def _export(*names: str):
    """tf.keras.losses.X and tf.losses.X (TF2), tf.compat.v1.keras.losses.X."""
    return tf_export(*[f"keras.losses.{n}" for n in names], *[f"losses.{n}" for n in names],
                     v1=[f"keras.losses.{n}" for n in names])


def _pair(y_true, y_pred, cast_true: bool = True):
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = cast(y_pred, dtypes.float32)
    y_true = convert_to_tensor(y_true)
    if cast_true and y_true.dtype is not y_pred.dtype:
        y_true = cast(y_true, y_pred.dtype)
    return y_true, y_pred


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1: bool = True):
    """Keras' rank alignment: a trailing 1 is squeezed (or a rank-1 partner expanded)."""
    r1, r2 = x1.shape.rank, x2.shape.rank
    if r1 is None or r2 is None or r1 == r2:
        return x1, x2
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            return x1, expand_dims(x2, -1)
        return squeeze(x1, [-1]), x2
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            return expand_dims(x1, -1), x2
        return x1, squeeze(x2, [-1])
    return x1, x2


def _mean_last(x):
    return reduction.reduce_mean(x, axis=-1)


@_export("mse", "MSE")
def mean_squared_error(y_true, y_pred):
    y_true, y_pred = squeeze_or_expand_to_same_rank(*_pair(y_true, y_pred))
    return _mean_last(math.square(y_true - y_pred))


@_export("mae", "MAE")
def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = squeeze_or_expand_to_same_rank(*_pair(y_true, y_pred))
    return _mean_last(math.abs(y_true - y_pred))


@_export("mape", "MAPE")
def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = squeeze_or_expand_to_same_rank(*_pair(y_true, y_pred))
    diff = math.abs((y_true - y_pred) / arithmetic.maximum(math.abs(y_true), EPSILON))
    return 100.0 * _mean_last(diff)


@_export("msle", "MSLE")
def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = squeeze_or_expand_to_same_rank(*_pair(y_true, y_pred))
    first = arithmetic.log(arithmetic.maximum(y_pred, EPSILON) + 1.0)
    second = arithmetic.log(arithmetic.maximum(y_true, EPSILON) + 1.0)
    return _mean_last(math.square(first - second))


def _hinge_labels(y_true):
    """Keras converts {0, 1} labels to {-1, 1} (decided when the op runs)."""
    binary = reduction.reduce_all(comparison.logical_or(comparison.equal(y_true, 0.0),
                                                        comparison.equal(y_true, 1.0)))
    return cond(binary, lambda: 2.0 * y_true - 1.0, lambda: y_true)


@_export("hinge")
def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return _mean_last(arithmetic.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0))


@_export("squared_hinge")
def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return _mean_last(math.square(arithmetic.maximum(1.0 - _hinge_labels(y_true) * y_pred,
                                                     0.0)))


@_export("categorical_hinge")
def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    pos = reduction.reduce_sum(y_true * y_pred, axis=-1)
    neg = reduction.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return arithmetic.maximum(neg - pos + 1.0, 0.0)


@_export("logcosh")
def log_cosh(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return _mean_last(x + nn_activation.softplus(x * -2.0) - float(np.log(2.0)))


@_export("kld", "KLD", "kullback_leibler_divergence")
def kl_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = math.clip_by_value(y_true, EPSILON, 1.0)
    y_pred = math.clip_by_value(y_pred, EPSILON, 1.0)
    return reduction.reduce_sum(y_true * arithmetic.log(y_true / y_pred), axis=-1)


@_export("poisson")
def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return _mean_last(y_pred - y_true * arithmetic.log(y_pred + EPSILON))


@_export("huber")
def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = _pair(y_true, y_pred)
    error = y_pred - y_true
    abs_error = math.abs(error)
    delta = convert_to_tensor(delta, y_pred.dtype)
    return _mean_last(arithmetic.select_v2(comparison.less_equal(abs_error, delta),
                                           0.5 * math.square(error),
                                           delta * abs_error - 0.5 * math.square(delta)))


def _get_logits(output, from_logits, op_type, fn_name):
    """Keras' TF backend: a softmax's or sigmoid's output is replaced by its logits (cached
    by Keras' activation, else the graph op's input), so the loss never sees saturated
    probabilities."""
    has_keras_logits = hasattr(output, "_keras_logits")
    from_op = (not has_keras_logits and isinstance(output, SymbolicTensor)
               and output.op.type == op_type)
    if from_logits and (has_keras_logits or from_op):
        warnings.warn(f'"`{fn_name}` received `from_logits=True`, but the `output` argument '
                      f"was produced by a {op_type} activation and thus does not represent "
                      "logits. Was this intended?", stacklevel=3)
    if has_keras_logits:
        return convert_to_tensor(output._keras_logits), True
    if from_op:
        if len(output.op.inputs) != 1:
            raise ValueError(f"Expected 1 input for {op_type}.")
        return output.op.inputs[0], True
    return output, from_logits


@_export("categorical_crossentropy")
def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type "
                         f"{type(axis)}")
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        classes = cast(shape(y_true)[-1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    y_pred, from_logits = _get_logits(y_pred, from_logits, "Softmax",
                                      "categorical_crossentropy")
    if from_logits:
        return nn_loss.softmax_cross_entropy_with_logits_v2(labels=y_true, logits=y_pred,
                                                            axis=axis)
    y_pred = y_pred / reduction.reduce_sum(y_pred, axis=axis, keepdims=True)
    y_pred = math.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
    return -reduction.reduce_sum(y_true * arithmetic.log(y_pred), axis=axis)


@_export("sparse_categorical_crossentropy")
def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None,
                                    axis=-1):
    y_pred = convert_to_tensor(y_pred)
    rank = y_pred.shape.rank
    if axis != -1 and (rank is None or axis != rank - 1):
        raise ValueError(f"Only axis=-1 is currently supported. Received: axis={axis}")
    y_pred, from_logits = _get_logits(y_pred, from_logits, "Softmax",
                                      "sparse_categorical_crossentropy")
    labels = convert_to_tensor(y_true)
    if labels.shape.rank == rank and labels.shape[-1] == 1:
        labels = squeeze(labels, [-1])
    labels = cast(labels, dtypes.int64)
    valid = None
    if ignore_class is not None:
        valid = comparison.not_equal(labels, int(ignore_class))
        labels = arithmetic.select_v2(valid, labels, arithmetic.multiply(labels, 0))
    logits = y_pred if from_logits else \
        arithmetic.log(math.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON))
    loss = nn_loss.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    if valid is not None:
        loss = loss * cast(valid, loss.dtype)
    return loss


@_export("binary_crossentropy")
def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred)
    true_shape, pred_shape = tuple(y_true.shape.as_list()), tuple(y_pred.shape.as_list())
    if len(true_shape) != len(pred_shape):   # Keras' TF backend checks before computing
        raise ValueError("Arguments `target` and `output` must have the same rank (ndim). "
                         f"Received: target.shape={true_shape}, output.shape={pred_shape}")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    y_pred, from_logits = _get_logits(y_pred, from_logits, "Sigmoid", "binary_crossentropy")
    if from_logits:
        bce = nn_loss.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        p = math.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
        bce = -(y_true * arithmetic.log(p) + (1.0 - y_true) * arithmetic.log(1.0 - p))
    return reduction.reduce_mean(bce, axis=axis)


# -- classes -----------------------------------------------------------------------------------

def _standardize_reduction(value):
    if value not in REDUCTIONS:
        raise ValueError(f"Invalid value for argument `reduction`. Expected one of "
                         f"{REDUCTIONS}. Received: reduction={value}")
    return value


def reduce_weighted_values(values, sample_weight=None, reduction_="sum_over_batch_size"):
    """Keras' reduce_weighted_values: weights aligned to the losses' rank and multiplied in,
    then the reduction."""
    if sample_weight is not None:
        sample_weight = cast(convert_to_tensor(sample_weight), values.dtype)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        values = values * sample_weight
    if reduction_ in (None, "none") or values.shape.rank == 0:
        return values
    total = reduction.reduce_sum(values)
    if reduction_ == "sum":
        return total
    if reduction_ == "mean_with_sample_weight" and sample_weight is not None:
        divisor = reduction.reduce_sum(sample_weight)
    else:
        divisor = cast(reduction.reduce_prod(shape(values)), total.dtype)
    return arithmetic.div_no_nan(total, divisor)


@keras_export("keras.Loss")
@_export("Loss")
class Loss:
    """Base class of Keras losses: subclasses implement `call(y_true, y_pred)` returning
    per-sample losses; calling the object, `loss(y_true, y_pred, sample_weight=None)`,
    casts both to the loss' dtype, calls `call`, applies the weights and reduces.

    Args:
      name: the loss' name (default the class name in snake case).
      reduction: "sum_over_batch_size" (the default: the weighted sum divided by the
        number of elements), "sum", "mean", "mean_with_sample_weight" (divided by the sum
        of weights) or "none"/None (per-sample losses).
      dtype: the dtype the computation runs in (default floatx).

    Raises:
      ValueError: an unknown `reduction`.

    Example:

    >>> class AbsoluteError(tf.keras.losses.Loss):
    ...     def call(self, y_true, y_pred):
    ...         return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)
    >>> float(AbsoluteError()(tf.constant([[0.0, 2.0]]), tf.constant([[1.0, 1.0]])))
    1.0
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or _snake(type(self).__name__)
        self.reduction = _standardize_reduction(reduction)
        self._dtype = dtypes.as_dtype(dtype or floatx())

    @property
    def dtype(self) -> str:
        return self._dtype.name

    def __call__(self, y_true, y_pred, sample_weight=None):
        # as Keras 3: targets and predictions of any dtype (float64 NumPy targets, integer
        # labels) reach `call` as the loss's dtype, so a plain-function loss can subtract them
        y_pred = map_structure(lambda v: _as_dtype(v, self._dtype), y_pred)
        y_true = map_structure(lambda v: _as_dtype(v, self._dtype), y_true)
        losses = self.call(y_true, y_pred)
        return reduce_weighted_values(losses, sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


def _as_dtype(value, dtype):
    if value is None:
        return None
    value = convert_to_tensor(value)
    return value if value.dtype is dtype else cast(value, dtype)


def _snake(name: str) -> str:
    out = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    return out


class LossFunctionWrapper(Loss):
    """A Loss calling a loss function with fixed keyword arguments."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_true = convert_to_tensor(y_true)
        if isinstance(y_pred, Tensor):
            y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}


def _wrapper(class_name: str, fn, default_name: str, extra: tuple = (), config_keys=None):
    """A Keras loss class around `fn` (its keyword arguments `extra`, with their defaults;
    `config_keys`: those get_config shows, all when None, as each Keras class has it)."""
    def __init__(self, *args, reduction="sum_over_batch_size", name=default_name, dtype=None,
                 **kwargs):
        params = dict(extra)
        for key, value in zip(params, args):
            params[key] = value
        unknown = set(kwargs) - set(params)
        if unknown:
            raise TypeError(f"{class_name}.__init__() got unexpected keyword arguments "
                            f"{sorted(unknown)}")
        params.update(kwargs)
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, dtype=dtype,
                                     **params)
    def get_config(self):
        keys = self._fn_kwargs if config_keys is None else config_keys
        return {**Loss.get_config(self), **{k: self._fn_kwargs[k] for k in keys}}

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=v)
               for k, v in extra]
    params += [inspect.Parameter("reduction", inspect.Parameter.KEYWORD_ONLY,
                                 default="sum_over_batch_size"),
               inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=default_name),
               inspect.Parameter("dtype", inspect.Parameter.KEYWORD_ONLY, default=None)]
    __init__.__signature__ = inspect.Signature(params)
    cls = type(class_name, (LossFunctionWrapper,), {"__init__": __init__,
                                                    "get_config": get_config,
                                                    "__doc__": f"`{fn.__name__}` as a Loss."})
    return _export(class_name)(cls)


MeanSquaredError = _wrapper("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _wrapper("MeanAbsolutePercentageError",
                                       mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError",
                                       mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
Hinge = _wrapper("Hinge", hinge, "hinge")
SquaredHinge = _wrapper("SquaredHinge", squared_hinge, "squared_hinge")
CategoricalHinge = _wrapper("CategoricalHinge", categorical_hinge, "categorical_hinge")
LogCosh = _wrapper("LogCosh", log_cosh, "log_cosh")
KLDivergence = _wrapper("KLDivergence", kl_divergence, "kl_divergence")
Poisson = _wrapper("Poisson", poisson, "poisson")
Huber = _wrapper("Huber", huber, "huber_loss", (("delta", 1.0),), config_keys=())
CategoricalCrossentropy = _wrapper(
    "CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
    (("from_logits", False), ("label_smoothing", 0.0), ("axis", -1)))
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", (("from_logits", False), ("ignore_class", None),
                                        ("axis", -1)), config_keys=("from_logits", "ignore_class"))
BinaryCrossentropy = _wrapper(
    "BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
    (("from_logits", False), ("label_smoothing", 0.0), ("axis", -1)))

_ALL = {c.__name__: c for c in (
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, Hinge, SquaredHinge, CategoricalHinge, LogCosh, KLDivergence,
    Poisson, Huber, CategoricalCrossentropy, SparseCategoricalCrossentropy, BinaryCrossentropy)}
_FUNCTIONS = {f.__name__: f for f in (
    mean_squared_error, mean_absolute_error, mean_absolute_percentage_error,
    mean_squared_logarithmic_error, hinge, squared_hinge, categorical_hinge, kl_divergence,
    poisson, huber, categorical_crossentropy, sparse_categorical_crossentropy,
    binary_crossentropy)}
_FUNCTIONS.update(mse=mean_squared_error, MSE=mean_squared_error, mae=mean_absolute_error,
                  MAE=mean_absolute_error, mape=mean_absolute_percentage_error,
                  MAPE=mean_absolute_percentage_error, msle=mean_squared_logarithmic_error,
                  MSLE=mean_squared_logarithmic_error, kld=kl_divergence, KLD=kl_divergence,
                  kullback_leibler_divergence=kl_divergence, logcosh=log_cosh, log_cosh=log_cosh)


@_export("serialize")
def serialize(loss) -> dict:
    return {"module": "keras.losses", "class_name": type(loss).__name__,
            "config": loss.get_config(), "registered_name": None}


@_export("deserialize")
def deserialize(name, custom_objects=None):
    if isinstance(name, dict):
        cls = (custom_objects or {}).get(name["class_name"]) or _ALL.get(name["class_name"])
        if cls is None:
            raise ValueError(f"Could not interpret loss identifier: {name}")
        return cls.from_config(name["config"])
    fn = (custom_objects or {}).get(name) or _FUNCTIONS.get(name) or _ALL.get(name)
    if fn is None:
        raise ValueError(f"Could not interpret loss identifier: {name}")
    return fn


@_export("get")
def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        identifier = deserialize(identifier)   # a class name gives an instance, as Keras
        return identifier() if isinstance(identifier, type) else identifier
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier: {identifier}")


@_export("Reduction")
class Reduction:
    """The reduction names as constants (Keras 2's `tf.keras.losses.Reduction`; Keras 3
    losses take the strings directly): AUTO, NONE, SUM, SUM_OVER_BATCH_SIZE.

    `Reduction.all()` lists them; `Reduction.validate(key)` raises ValueError for another
    value.
    """

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


docstrings.attach(globals(), loss_docs.DOCS)
docstrings.attach(globals(), loss_class_docs.CLASS_DOCS)

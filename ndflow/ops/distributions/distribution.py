"""TF1's `tf.distributions.Distribution` base class and its reparameterization types.

A subclass implements `_batch_shape`/`_event_shape` (static), their `_tensor` forms, and any
of `_sample_n`, `_log_prob`/`_prob`, `_cdf`/`_log_cdf`, `_survival_function`, `_entropy`,
`_mean`, `_mode`, `_stddev`/`_variance`, `_covariance`; the public methods open the name
scopes TF opens (`<dist name>/<method>/`), convert `value` to the distribution's dtype and
fall back between the log and plain forms as TF's `distribution.py` does.
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.arithmetic import log
from ndflow.ops.array_core import constant, reshape, shape
from ndflow.ops.array_misc import broadcast_dynamic_shape, broadcast_static_shape
from ndflow.ops.array_slicing import concat
from ndflow.ops.distributions import kullback_leibler
from ndflow.ops.math import exp, log1p, sqrt, square
from ndflow.ops.reduction import reduce_prod

__all__ = ["ReparameterizationType", "FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED",
           "Distribution"]


@tf_export(v1=["distributions.ReparameterizationType"])
class ReparameterizationType:
    """Whether samples are differentiable functions of the parameters; compared by identity
    (`dist.reparameterization_type == tf.distributions.FULLY_REPARAMETERIZED`)."""

    def __init__(self, rep_type):
        self._rep_type = rep_type

    def __repr__(self):
        return f"<Reparameterization Type: {self._rep_type}>"

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")
tf_export(v1=["distributions.FULLY_REPARAMETERIZED"])(FULLY_REPARAMETERIZED)
tf_export(v1=["distributions.NOT_REPARAMETERIZED"])(NOT_REPARAMETERIZED)


def held(name: str, doc: str) -> property:
    """A read-only property of the attribute `_<name>`."""
    return property(lambda self: getattr(self, "_" + name), doc=doc)


def parameter(name: str) -> property:
    """A distribution's read-only parameter `name` (held as `_<name>`)."""
    return held(name, f"The `{name}` parameter.")


def param_shapes_of(*names):
    """A `_param_shapes` giving each named parameter the shape `sample_shape` (as TF's
    scalar-parameter distributions do)."""
    def _param_shapes(sample_shape):
        t = convert_to_tensor(sample_shape, dtype=dtypes.int32)
        return {n: t for n in names}
    return staticmethod(_param_shapes)


def _convert_value(value, dtype):
    """`value` as a tensor of the distribution's dtype; in eager mode a float value given to
    an integer distribution stays float (TF's workaround of a precision loss)."""
    if dtype is not None and (dtype.is_integer or dtype == dtypes.bool):
        v = convert_to_tensor(value, name="value")
        if v.dtype.is_floating:
            return v
    return convert_to_tensor(value, dtype_hint=dtype, name="value")


@tf_export(v1=["distributions.Distribution"])
class Distribution:
    """A batch of probability distributions (TF1's abstract base)."""

    def __init__(self, dtype, reparameterization_type, validate_args, allow_nan_stats,
                 parameters=None, graph_parents=None, name=None):
        graph_parents = [] if graph_parents is None else graph_parents
        for i, t in enumerate(graph_parents):
            if not isinstance(t, Tensor):
                raise ValueError(f"Graph parent item {i} is not a Tensor; {t}.")
        if context.executing_eagerly():
            name = None  # TF's eager name scopes yield None: an eager distribution has no name
        elif not name or name[-1] != "/":  # not yet a name scope
            with name_scope(name or type(self).__name__) as scope:
                name = scope
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._allow_nan_stats = allow_nan_stats
        self._validate_args = validate_args
        self._parameters = parameters or {}
        self._graph_parents = graph_parents
        self._name = name

    @property
    def _parameters(self):
        return self._parameter_dict

    @_parameters.setter
    def _parameters(self, value):
        value = dict(value)
        value.pop("self", None)
        value.pop("__class__", None)
        self._parameter_dict = value

    @classmethod
    def param_shapes(cls, sample_shape, name="DistributionParamShapes"):
        """The shapes of the parameters for samples of shape `sample_shape` (dict of
        tensors)."""
        with name_scope(name, "DistributionParamShapes"):
            return cls._param_shapes(sample_shape)

    @classmethod
    def param_static_shapes(cls, sample_shape):
        """`param_shapes` as TensorShapes, for a static `sample_shape`."""
        if isinstance(sample_shape, TensorShape):
            if not sample_shape.is_fully_defined():
                raise ValueError("TensorShape sample_shape must be fully defined")
            sample_shape = sample_shape.as_list()
        out = {}
        for name, s in cls.param_shapes(sample_shape).items():
            static = constant_value(s)
            if static is None:
                raise ValueError("sample_shape must be a fully-defined TensorShape or "
                                 "list/tuple")
            out[name] = TensorShape([int(d) for d in static])
        return out

    @staticmethod
    def _param_shapes(sample_shape):
        raise NotImplementedError("_param_shapes not implemented")

    name = held("name", "The distribution's name (its name scope's).")
    dtype = held("dtype", "The dtype of its samples.")

    @property
    def parameters(self):
        return {k: v for k, v in self._parameters.items()
                if not k.startswith("__") and k != "self"}

    reparameterization_type = held("reparameterization_type",
                                   "How its samples depend on its parameters.")
    allow_nan_stats = held("allow_nan_stats", "Whether undefined statistics give NaN (else "
                                              "raise).")
    validate_args = held("validate_args", "Whether its arguments are checked.")

    def copy(self, **override_parameters_kwargs):
        return type(self)(**dict(self.parameters, **override_parameters_kwargs))

    # Shapes.
    def _batch_shape_tensor(self):
        raise NotImplementedError(
            f"batch_shape_tensor is not implemented: {type(self).__name__}")

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return convert_to_tensor(self.batch_shape.as_list(), dtype=dtypes.int32,
                                         name="batch_shape")
            return self._batch_shape_tensor()

    def _batch_shape(self):
        return TensorShape(None)

    @property
    def batch_shape(self):
        return as_shape(self._batch_shape())

    def _event_shape_tensor(self):
        raise NotImplementedError(
            f"event_shape_tensor is not implemented: {type(self).__name__}")

    def event_shape_tensor(self, name="event_shape_tensor"):
        with self._name_scope(name):
            if self.event_shape.is_fully_defined():
                return convert_to_tensor(self.event_shape.as_list(), dtype=dtypes.int32,
                                         name="event_shape")
            return self._event_shape_tensor()

    def _event_shape(self):
        return TensorShape(None)

    @property
    def event_shape(self):
        return as_shape(self._event_shape())

    def is_scalar_event(self, name="is_scalar_event"):
        with self._name_scope(name):
            return convert_to_tensor(self._is_scalar(self.event_shape, self.event_shape_tensor),
                                     name="is_scalar_event")

    def is_scalar_batch(self, name="is_scalar_batch"):
        with self._name_scope(name):
            return convert_to_tensor(self._is_scalar(self.batch_shape, self.batch_shape_tensor),
                                     name="is_scalar_batch")

    @staticmethod
    def _is_scalar(static_shape, dynamic_shape_fn):
        if static_shape.rank is not None:
            return static_shape.rank == 0
        return shape(dynamic_shape_fn())[0] == 0

    # Sampling.
    def _sample_n(self, n, seed=None):
        raise NotImplementedError(f"sample_n is not implemented: {type(self).__name__}")

    def sample(self, sample_shape=(), seed=None, name="sample"):
        """Samples of shape `sample_shape + batch_shape + event_shape`."""
        with self._name_scope(name):
            sample_shape = convert_to_tensor(sample_shape, dtype=dtypes.int32,
                                             name="sample_shape")
            sample_shape, n = self._expand_sample_shape_to_vector(sample_shape, "sample_shape")
            samples = self._sample_n(n, seed)
            final_shape = concat([sample_shape, shape(samples)[1:]], 0)
            samples = reshape(samples, final_shape)
            return self._set_sample_static_shape(samples, sample_shape)

    @staticmethod
    def _expand_sample_shape_to_vector(x, name):
        static = constant_value(x)
        n = reduce_prod(x) if static is None else \
            np.prod(static, dtype=x.dtype.as_numpy_dtype)
        ndims = x.shape.rank
        if ndims is None:
            x = reshape(x, [-1])
        elif ndims == 0:
            x = convert_to_tensor(np.array([static], dtype=x.dtype.as_numpy_dtype), name=name) \
                if static is not None else reshape(x, [1])
        elif ndims != 1:
            raise ValueError("Input is neither scalar nor vector.")
        return x, n

    def _set_sample_static_shape(self, x, sample_shape):
        static = constant_value(sample_shape)
        sample_shape = TensorShape(None if static is None else [int(d) for d in static])
        ndims, sample_ndims = x.shape.rank, sample_shape.rank
        batch_ndims, event_ndims = self.batch_shape.rank, self.event_shape.rank
        if ndims is None and None not in (sample_ndims, batch_ndims, event_ndims):
            ndims = sample_ndims + batch_ndims + event_ndims
            x.set_shape([None] * ndims)
        if ndims is not None and sample_ndims is not None:
            x.set_shape(x.shape.merge_with(
                sample_shape.concatenate([None] * (ndims - sample_ndims))))
        if ndims is not None and event_ndims is not None:
            x.set_shape(x.shape.merge_with(
                TensorShape([None] * (ndims - event_ndims)).concatenate(self.event_shape)))
        if batch_ndims is not None and ndims is not None:
            if sample_ndims is None and event_ndims is not None:
                sample_ndims = ndims - batch_ndims - event_ndims
            elif event_ndims is None and sample_ndims is not None:
                event_ndims = ndims - batch_ndims - sample_ndims
            if sample_ndims is not None and event_ndims is not None:
                x.set_shape(x.shape.merge_with(TensorShape([None] * sample_ndims).concatenate(
                    self.batch_shape).concatenate([None] * event_ndims)))
        return x

    # Functions of a value, each with the fallback TF uses.
    def _call(self, name, value, first: str, fallback: str, transform):
        with self._name_scope(name):
            value = _convert_value(value, self.dtype)
            try:
                return getattr(self, first)(value)
            except NotImplementedError as original:
                try:
                    return transform(getattr(self, fallback)(value))
                except NotImplementedError:
                    raise original from None

    def _log_prob(self, value):
        raise NotImplementedError(f"log_prob is not implemented: {type(self).__name__}")

    def log_prob(self, value, name="log_prob"):
        return self._call(name, value, "_log_prob", "_prob", log)

    def _prob(self, value):
        raise NotImplementedError(f"prob is not implemented: {type(self).__name__}")

    def prob(self, value, name="prob"):
        return self._call(name, value, "_prob", "_log_prob", exp)

    def _log_cdf(self, value):
        raise NotImplementedError(f"log_cdf is not implemented: {type(self).__name__}")

    def log_cdf(self, value, name="log_cdf"):
        return self._call(name, value, "_log_cdf", "_cdf", log)

    def _cdf(self, value):
        raise NotImplementedError(f"cdf is not implemented: {type(self).__name__}")

    def cdf(self, value, name="cdf"):
        return self._call(name, value, "_cdf", "_log_cdf", exp)

    def _log_survival_function(self, value):
        raise NotImplementedError(
            f"log_survival_function is not implemented: {type(self).__name__}")

    def log_survival_function(self, value, name="log_survival_function"):
        return self._call(name, value, "_log_survival_function", "cdf", lambda c: log1p(-c))

    def _survival_function(self, value):
        raise NotImplementedError(
            f"survival_function is not implemented: {type(self).__name__}")

    def survival_function(self, value, name="survival_function"):
        return self._call(name, value, "_survival_function", "cdf", lambda c: 1.0 - c)

    def _quantile(self, value):
        raise NotImplementedError(f"quantile is not implemented: {type(self).__name__}")

    def quantile(self, value, name="quantile"):
        with self._name_scope(name):
            return self._quantile(_convert_value(value, self.dtype))

    # Statistics.
    def _stat(self, name, method: str):
        with self._name_scope(name):
            return getattr(self, method)()

    def _entropy(self):
        raise NotImplementedError(f"entropy is not implemented: {type(self).__name__}")

    def entropy(self, name="entropy"):
        return self._stat(name, "_entropy")

    def _mean(self):
        raise NotImplementedError(f"mean is not implemented: {type(self).__name__}")

    def mean(self, name="mean"):
        return self._stat(name, "_mean")

    def _mode(self):
        raise NotImplementedError(f"mode is not implemented: {type(self).__name__}")

    def mode(self, name="mode"):
        return self._stat(name, "_mode")

    def _covariance(self):
        raise NotImplementedError(f"covariance is not implemented: {type(self).__name__}")

    def covariance(self, name="covariance"):
        return self._stat(name, "_covariance")

    def _variance(self):
        raise NotImplementedError(f"variance is not implemented: {type(self).__name__}")

    def variance(self, name="variance"):
        with self._name_scope(name):
            try:
                return self._variance()
            except NotImplementedError as original:
                try:
                    return square(self._stddev())
                except NotImplementedError:
                    raise original from None

    def _stddev(self):
        raise NotImplementedError(f"stddev is not implemented: {type(self).__name__}")

    def stddev(self, name="stddev"):
        with self._name_scope(name):
            try:
                return self._stddev()
            except NotImplementedError as original:
                try:
                    return sqrt(self._variance())
                except NotImplementedError:
                    raise original from None

    def cross_entropy(self, other, name="cross_entropy"):
        with self._name_scope(name):
            return kullback_leibler.cross_entropy(self, other,
                                                  allow_nan_stats=self.allow_nan_stats)

    def kl_divergence(self, other, name="kl_divergence"):
        with self._name_scope(name):
            return kullback_leibler.kl_divergence(self, other,
                                                  allow_nan_stats=self.allow_nan_stats)

    def __str__(self):
        batch = f", batch_shape={self.batch_shape}" if self.batch_shape.rank is not None else ""
        event = f", event_shape={self.event_shape}" if self.event_shape.rank is not None else ""
        return (f'tfp.distributions.{type(self).__name__}("{self.name}"{batch}{event}, '
                f"dtype={self.dtype.name})")

    def __repr__(self):
        return (f"<tfp.distributions.{type(self).__name__} '{self.name}' "
                f"batch_shape={self.batch_shape} event_shape={self.event_shape} "
                f"dtype={self.dtype.name}>")

    @contextlib.contextmanager
    def _name_scope(self, name=None):
        """`<distribution name>/<name>/` (TF re-enters the distribution's scope)."""
        if self.name is None:  # eager
            yield ""
            return
        with name_scope(self.name):
            with name_scope(name) as scope:
                yield scope


class ScalarDistribution(Distribution):
    """A distribution of scalar events (event shape []) whose batch shape is the broadcast of
    the shapes of its parameters named in `_batch_parameters`."""

    _batch_parameters: tuple = ()

    def _batch_shape_tensor(self):
        return functools.reduce(broadcast_dynamic_shape,
                                [shape(getattr(self, n)) for n in self._batch_parameters])

    def _batch_shape(self):
        return functools.reduce(broadcast_static_shape,
                                [getattr(self, n).shape for n in self._batch_parameters])

    def _event_shape_tensor(self):
        return constant([], dtype=dtypes.int32)

    def _event_shape(self):
        return TensorShape([])


class LogitsAndProbs:
    """The `logits` and `probs` parameters of a discrete distribution (its constructor sets
    `_logits` and `_probs`)."""

    @property
    def logits(self):
        return self._logits

    @property
    def probs(self):
        return self._probs

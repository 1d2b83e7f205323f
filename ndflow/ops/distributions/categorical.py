"""`tf.distributions.Categorical`: a class index in [0, K) by `probs` (or softmax(`logits`))
over the last axis, and its registered KL(Categorical || Categorical)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import where
from ndflow.ops.array_builders import sequence_mask
from ndflow.ops.array_core import constant, identity, rank, reshape, shape
from ndflow.ops.array_fill import ones, ones_like, zeros_like
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.distributions import distribution, util
from ndflow.ops.distributions.kullback_leibler import RegisterKL
from ndflow.ops.nn_activation import log_softmax, softmax
from ndflow.ops.nn_loss import sparse_softmax_cross_entropy_with_logits
from ndflow.ops.random import multinomial
from ndflow.ops.reduction import argmax, reduce_sum


def _broadcast_cat_event_and_params(event, params, base_dtype):
    """`event` (as int32 when float) and `params` broadcast to event + [K]."""
    if event.dtype.is_integer:
        pass
    elif event.dtype.is_floating:
        event = cast(event, dtype=dtypes.int32)
    else:
        raise TypeError(f"`value` should have integer `dtype` or `self.dtype` ({base_dtype})")
    known = (params.shape.rank is not None and params.shape[:-1].is_fully_defined()
             and event.shape.is_fully_defined())
    if not known or params.shape[:-1] != event.shape:
        params = params * ones_like(event[..., None], dtype=params.dtype)
        event = event * ones(shape(params)[:-1], dtype=event.dtype)
        if params.shape.rank is not None:
            event.set_shape(TensorShape(params.shape[:-1]))
    return event, params


@tf_export(v1=["distributions.Categorical"])
class Categorical(distribution.LogitsAndProbs, distribution.ScalarDistribution):
    """A categorical distribution over the last axis of `logits` or `probs`."""

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Categorical"):
        parameters = dict(locals())
        with name_scope(name, "Categorical") as name:
            self._logits, self._probs = util.get_logits_and_probs(
                logits=logits, probs=probs, validate_args=validate_args,
                multidimensional=True, name=name)
            if validate_args:
                self._logits = util.embed_check_categorical_event_shape(self._logits)
            static = util.with_rank_at_least(self._logits.shape, 1)
            if static.rank is not None:
                self._batch_rank = convert_to_tensor(static.rank - 1, dtype=dtypes.int32,
                                                     name="batch_rank")
            else:
                with name_scope("batch_rank"):
                    self._batch_rank = rank(self._logits) - 1
            logits_shape = shape(self._logits, name="logits_shape")
            if static.rank is not None and static[-1] is not None:
                self._event_size = convert_to_tensor(static[-1], dtype=dtypes.int32,
                                                     name="event_size")
            else:
                with name_scope("event_size"):
                    self._event_size = logits_shape[self._batch_rank]
            if static[:-1].is_fully_defined():
                self._batch_shape_val = constant(static[:-1].as_list(), dtype=dtypes.int32,
                                                 name="batch_shape")
            else:
                with name_scope("batch_shape"):
                    self._batch_shape_val = logits_shape[:-1]
        super().__init__(dtype=dtypes.as_dtype(dtype),
                         reparameterization_type=distribution.NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._logits, self._probs],
                         name=name)

    @property
    def event_size(self):
        return self._event_size

    def _batch_shape_tensor(self):
        return identity(self._batch_shape_val)

    def _batch_shape(self):
        return self.logits.shape[:-1]

    def _sample_n(self, n, seed=None):
        if self.logits.shape.rank == 2:
            logits_2d = self.logits
        else:
            logits_2d = reshape(self.logits, [-1, self.event_size])
        sample_dtype = dtypes.int64 if self.dtype.size > 4 else dtypes.int32
        draws = multinomial(logits_2d, n, seed=seed, output_dtype=sample_dtype)
        draws = reshape(transpose(draws), concat([[n], self.batch_shape_tensor()], 0))
        return cast(draws, self.dtype)

    def _event_and(self, k, params):
        """(the event `k`, checked with `validate_args`, and `params`) broadcast together."""
        k = convert_to_tensor(k, name="k")
        if self.validate_args:
            k = util.embed_check_integer_casting_closed(k, target_dtype=dtypes.int32)
        return _broadcast_cat_event_and_params(k, params, base_dtype=self.dtype.base_dtype)

    def _cdf(self, k):
        k, probs = self._event_and(k, self.probs)
        flat_probs = reshape(probs, (-1, self._event_size))
        flat_k = reshape(k, [-1])
        to_sum_over = where(sequence_mask(flat_k, self._event_size), flat_probs,
                            zeros_like(flat_probs))
        return reshape(reduce_sum(to_sum_over, axis=-1), shape(k))

    def _log_prob(self, k):
        k, logits = self._event_and(k, self.logits)
        return -sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _entropy(self):
        return -reduce_sum(log_softmax(self.logits) * self.probs, axis=-1)

    def _mode(self):
        ret = cast(argmax(self.logits, axis=self._batch_rank), self.dtype)
        ret.set_shape(self.batch_shape)
        return ret


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a, b, name=None):
    """KL(a || b) = sum(p_a * (log p_a - log p_b)) over the classes."""
    with name_scope(name, "kl_categorical_categorical"):
        delta_log_probs1 = log_softmax(a.logits) - log_softmax(b.logits)
        return reduce_sum(softmax(a.logits) * delta_log_probs1, axis=-1)

"""`tf.distributions.Bernoulli`: 1 with probability `probs` (or sigmoid(`logits`)), and its
registered KL(Bernoulli || Bernoulli)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.ops.array_core import identity
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import less
from ndflow.ops.distributions import distribution, util
from ndflow.ops.distributions.kullback_leibler import RegisterKL
from ndflow.ops.math import sigmoid
from ndflow.ops.nn_activation import softplus
from ndflow.ops.nn_loss import sigmoid_cross_entropy_with_logits
from ndflow.ops.random import random_uniform


@tf_export(v1=["distributions.Bernoulli"])
class Bernoulli(distribution.LogitsAndProbs, distribution.ScalarDistribution):
    """Bernoulli trials: `dtype` (int32) 1 with probability `probs`, else 0."""

    _batch_parameters = ("logits",)
    _param_shapes = distribution.param_shapes_of("logits")

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Bernoulli"):
        parameters = dict(locals())
        with name_scope(name, "Bernoulli") as name:
            self._logits, self._probs = util.get_logits_and_probs(
                logits=logits, probs=probs, validate_args=validate_args, name=name)
        super().__init__(dtype=dtypes.as_dtype(dtype),
                         reparameterization_type=distribution.NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._logits, self._probs],
                         name=name)

    def _sample_n(self, n, seed=None):
        new_shape = concat([[n], self.batch_shape_tensor()], 0)
        uniform = random_uniform(new_shape, seed=seed, dtype=self.probs.dtype)
        return cast(less(uniform, self.probs), self.dtype)

    def _log_prob(self, event):
        if self.validate_args:
            event = util.embed_check_integer_casting_closed(event, target_dtype=dtypes.bool)
        event = cast(event, self.logits.dtype)
        logits = self.logits
        if not (event.shape.is_fully_defined() and logits.shape.is_fully_defined()
                and event.shape == logits.shape):
            logits, event = ones_like(event) * logits, ones_like(logits) * event
        return -sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self):
        return -self.logits * (sigmoid(self.logits) - 1) + softplus(-self.logits)

    def _mean(self):
        return identity(self.probs)

    def _variance(self):
        return self._mean() * (1.0 - self.probs)

    def _mode(self):
        return cast(self.probs > 0.5, self.dtype)


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    """KL(a || b) from the logits."""
    with name_scope(name, "kl_bernoulli_bernoulli"):
        delta_probs0 = softplus(-b.logits) - softplus(-a.logits)
        delta_probs1 = softplus(b.logits) - softplus(a.logits)
        return sigmoid(a.logits) * delta_probs0 + sigmoid(-a.logits) * delta_probs1

"""`tf.distributions.Dirichlet`: density prod(x**(c-1)) / B(c) on the simplex of the last
axis, and its registered KL(Dirichlet || Dirichlet)."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.ops.arithmetic import where
from ndflow.ops.array_core import shape
from ndflow.ops.array_fill import fill, ones
from ndflow.ops.cast import cast
from ndflow.ops.check_ops import (
    assert_less_v1,
    assert_near_v1,
    assert_positive_v1,
    assert_rank_at_least_v1,
)
from ndflow.ops.distributions import distribution, util
from ndflow.ops.distributions.concentration import ConcentrationShapes
from ndflow.ops.distributions.kullback_leibler import RegisterKL
from ndflow.ops.math import exp, rsqrt
from ndflow.ops.math_special import digamma, lbeta, xlogy
from ndflow.ops.random_gamma_poisson import random_gamma
from ndflow.ops.reduction import reduce_all, reduce_sum


@tf_export(v1=["distributions.Dirichlet"])
class Dirichlet(ConcentrationShapes):
    """The Dirichlet distribution with `concentration` over its last axis."""

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True,
                 name="Dirichlet"):
        parameters = dict(locals())
        with name_scope(name, "Dirichlet") as name:
            self._set_concentration(concentration, validate_args)
        super().__init__(dtype=self._concentration.dtype,
                         reparameterization_type=distribution.FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._concentration, self._total_concentration],
                         name=name)


    def _sample_n(self, n, seed=None):
        gamma_sample = random_gamma(shape=[n], alpha=self.concentration, dtype=self.dtype,
                                    seed=seed)
        return gamma_sample / reduce_sum(gamma_sample, -1, keepdims=True)

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _prob(self, x):
        return exp(self._log_prob(x))

    def _log_unnormalized_prob(self, x):
        x = self._maybe_assert_valid_sample(x)
        return reduce_sum(xlogy(self.concentration - 1.0, x), -1)

    def _log_normalization(self):
        return lbeta(self.concentration)

    def _entropy(self):
        k = cast(self.event_shape_tensor()[0], self.dtype)
        return (self._log_normalization()
                + (self.total_concentration - k) * digamma(self.total_concentration)
                - reduce_sum((self.concentration - 1.0) * digamma(self.concentration),
                             axis=-1))

    def _mean(self):
        return self.concentration / self.total_concentration[..., None]

    def _variance(self):
        scale = self._variance_scale_term()
        x = scale * self._mean()
        return x * (scale - x)

    def _variance_scale_term(self):
        return rsqrt(1.0 + self.total_concentration[..., None])

    def _mode(self):
        k = cast(self.event_shape_tensor()[0], self.dtype)
        mode = (self.concentration - 1.0) / (self.total_concentration[..., None] - k)
        if self.allow_nan_stats:
            nan = fill(shape(mode), np.array(np.nan, self.dtype.as_numpy_dtype), name="nan")
            return where(reduce_all(self.concentration > 1.0, axis=-1), mode, nan)
        return util.with_dependencies([assert_less_v1(
            ones([], self.dtype), self.concentration,
            message="Mode undefined when any concentration <= 1")], mode)

    @staticmethod
    def _maybe_assert_valid_concentration(concentration, validate_args):
        if not validate_args:
            return concentration
        return util.with_dependencies([
            assert_positive_v1(concentration,
                               message="Concentration parameter must be positive."),
            assert_rank_at_least_v1(concentration, 1,
                                    message="Concentration parameter must have >=1 "
                                            "dimensions."),
            assert_less_v1(1, shape(concentration)[-1],
                           message="Concentration parameter must have event_size >= 2."),
        ], concentration)

    def _maybe_assert_valid_sample(self, x):
        if not self.validate_args:
            return x
        return util.with_dependencies([
            assert_positive_v1(x, message="samples must be positive"),
            assert_near_v1(ones([], dtype=self.dtype), reduce_sum(x, -1),
                           message="sample last-dimension must sum to `1`"),
        ], x)


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(d1, d2, name=None):
    """KL(d1 || d2) = sum((a - b) (digamma(a) - digamma(sum a))) - lbeta(a) + lbeta(b)."""
    with name_scope(name, "kl_dirichlet_dirichlet"):
        digamma_sum_d1 = digamma(reduce_sum(d1.concentration, axis=-1, keepdims=True))
        digamma_diff = digamma(d1.concentration) - digamma_sum_d1
        concentration_diff = d1.concentration - d2.concentration
        return (reduce_sum(concentration_diff * digamma_diff, axis=-1)
                - lbeta(d1.concentration) + lbeta(d2.concentration))

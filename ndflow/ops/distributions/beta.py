"""`tf.distributions.Beta`: density x**(c1-1) (1-x)**(c0-1) / B(c1, c0) on (0, 1), and its
registered KL(Beta || Beta)."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import log, where
from ndflow.ops.array_fill import fill, ones, ones_like
from ndflow.ops.check_ops import assert_less_v1, assert_positive_v1, assert_same_float_dtype
from ndflow.ops.comparison import logical_and
from ndflow.ops.distributions import distribution, util
from ndflow.ops.distributions.kullback_leibler import RegisterKL
from ndflow.ops.math import exp, log1p
from ndflow.ops.math_special import betainc, digamma, lgamma, xlogy
from ndflow.ops.random_gamma_poisson import random_gamma


@tf_export(v1=["distributions.Beta"])
class Beta(distribution.ScalarDistribution):
    """The Beta distribution with concentrations `concentration1` (of x) and
    `concentration0` (of 1 - x)."""

    _batch_parameters = ("total_concentration",)
    _param_shapes = distribution.param_shapes_of("concentration1", "concentration0")

    def __init__(self, concentration1=None, concentration0=None, validate_args=False,
                 allow_nan_stats=True, name="Beta"):
        parameters = dict(locals())
        with name_scope(name, "Beta") as name:
            self._concentration1 = self._maybe_assert_valid_concentration(
                convert_to_tensor(concentration1, name="concentration1"), validate_args)
            self._concentration0 = self._maybe_assert_valid_concentration(
                convert_to_tensor(concentration0, name="concentration0"), validate_args)
            assert_same_float_dtype([self._concentration1, self._concentration0])
            self._total_concentration = self._concentration1 + self._concentration0
        super().__init__(dtype=self._total_concentration.dtype,
                         reparameterization_type=distribution.FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._concentration1, self._concentration0,
                                        self._total_concentration], name=name)

    @property
    def concentration1(self):
        return self._concentration1

    @property
    def concentration0(self):
        return self._concentration0

    @property
    def total_concentration(self):
        return self._total_concentration

    def _sample_n(self, n, seed=None):
        ones_ = ones_like(self.total_concentration, dtype=self.dtype)
        gamma1 = random_gamma(shape=[n], alpha=ones_ * self.concentration1, dtype=self.dtype,
                              seed=seed)
        gamma2 = random_gamma(shape=[n], alpha=ones_ * self.concentration0, dtype=self.dtype,
                              seed=util.gen_new_seed(seed, "beta"))
        return gamma1 / (gamma1 + gamma2)

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _prob(self, x):
        return exp(self._log_prob(x))

    def _log_cdf(self, x):
        return log(self._cdf(x))

    def _cdf(self, x):
        return betainc(self.concentration1, self.concentration0, x)

    def _log_unnormalized_prob(self, x):
        x = self._maybe_assert_valid_sample(x)
        return xlogy(self.concentration1 - 1.0, x) + (self.concentration0 - 1.0) * log1p(-x)

    def _log_normalization(self):
        return (lgamma(self.concentration1) + lgamma(self.concentration0)
                - lgamma(self.total_concentration))

    def _entropy(self):
        return (self._log_normalization()
                - (self.concentration1 - 1.0) * digamma(self.concentration1)
                - (self.concentration0 - 1.0) * digamma(self.concentration0)
                + (self.total_concentration - 2.0) * digamma(self.total_concentration))

    def _mean(self):
        return self._concentration1 / self._total_concentration

    def _variance(self):
        return self._mean() * (1.0 - self._mean()) / (1.0 + self.total_concentration)

    def _mode(self):
        mode = (self.concentration1 - 1.0) / (self.total_concentration - 2.0)
        if self.allow_nan_stats:
            nan = fill(self.batch_shape_tensor(), np.array(np.nan, self.dtype.as_numpy_dtype),
                       name="nan")
            is_defined = logical_and(self.concentration1 > 1.0, self.concentration0 > 1.0)
            return where(is_defined, mode, nan)
        one = ones([], dtype=self.dtype)
        return util.with_dependencies([
            assert_less_v1(one, self.concentration1,
                           message="Mode undefined for concentration1 <= 1."),
            assert_less_v1(one, self.concentration0,
                           message="Mode undefined for concentration0 <= 1.")], mode)

    @staticmethod
    def _maybe_assert_valid_concentration(concentration, validate_args):
        if not validate_args:
            return concentration
        return util.with_dependencies([assert_positive_v1(
            concentration, message="Concentration parameter must be positive.")],
            concentration)

    def _maybe_assert_valid_sample(self, x):
        if not self.validate_args:
            return x
        return util.with_dependencies([
            assert_positive_v1(x, message="sample must be positive"),
            assert_less_v1(x, ones([], self.dtype), message="sample must be less than `1`.")],
            x)


@RegisterKL(Beta, Beta)
def _kl_beta_beta(d1, d2, name=None):
    """KL(d1 || d2) in closed form."""
    with name_scope(name, "kl_beta_beta"):
        return ((d2._log_normalization() - d1._log_normalization())
                - digamma(d1.concentration1) * (d2.concentration1 - d1.concentration1)
                - digamma(d1.concentration0) * (d2.concentration0 - d1.concentration0)
                + digamma(d1.total_concentration)
                * (d2.total_concentration - d1.total_concentration))

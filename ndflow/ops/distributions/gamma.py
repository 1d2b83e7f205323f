"""`tf.distributions.Gamma`: density rate**c x**(c-1) exp(-rate x) / Gamma(c), and its
registered KL(Gamma || Gamma)."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.ops.arithmetic import log, where
from ndflow.ops.array_core import identity
from ndflow.ops.array_fill import fill, ones
from ndflow.ops.check_ops import assert_less_v1, assert_positive_v1, assert_same_float_dtype
from ndflow.ops.distributions import distribution, util
from ndflow.ops.distributions.kullback_leibler import RegisterKL
from ndflow.ops.math import sqrt, square
from ndflow.ops.math_special import digamma, igamma, lgamma, xlogy
from ndflow.ops.random_gamma_poisson import random_gamma


@tf_export(v1=["distributions.Gamma"])
class Gamma(distribution.ScalarDistribution):
    """The Gamma distribution with shape `concentration` and inverse scale `rate`."""

    _batch_parameters = ("concentration", "rate")
    _param_shapes = distribution.param_shapes_of("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True,
                 name="Gamma"):
        parameters = dict(locals())
        with name_scope(name, "Gamma") as name:
            deps = [assert_positive_v1(concentration), assert_positive_v1(rate)] \
                if validate_args else []
            with control_dependencies(deps):
                self._concentration = identity(concentration, name="concentration")
                self._rate = identity(rate, name="rate")
                assert_same_float_dtype([self._concentration, self._rate])
        super().__init__(dtype=self._concentration.dtype,
                         reparameterization_type=distribution.FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._concentration, self._rate], name=name)

    @property
    def concentration(self):
        return self._concentration

    @property
    def rate(self):
        return self._rate

    def _sample_n(self, n, seed=None):
        return random_gamma(shape=[n], alpha=self.concentration, beta=self.rate,
                            dtype=self.dtype, seed=seed)

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _cdf(self, x):
        x = self._maybe_assert_valid_sample(x)
        return igamma(self.concentration, self.rate * x)

    def _log_unnormalized_prob(self, x):
        x = self._maybe_assert_valid_sample(x)
        return xlogy(self.concentration - 1.0, x) - self.rate * x

    def _log_normalization(self):
        return lgamma(self.concentration) - self.concentration * log(self.rate)

    def _entropy(self):
        return (self.concentration - log(self.rate) + lgamma(self.concentration)
                + (1.0 - self.concentration) * digamma(self.concentration))

    def _mean(self):
        return self.concentration / self.rate

    def _variance(self):
        return self.concentration / square(self.rate)

    def _stddev(self):
        return sqrt(self.concentration) / self.rate

    def _mode(self):
        mode = (self.concentration - 1.0) / self.rate
        if self.allow_nan_stats:
            nan = fill(self.batch_shape_tensor(), np.array(np.nan, self.dtype.as_numpy_dtype),
                       name="nan")
            return where(self.concentration > 1.0, mode, nan)
        return util.with_dependencies([assert_less_v1(
            ones([], self.dtype), self.concentration,
            message="mode not defined when any concentration <= 1")], mode)

    def _maybe_assert_valid_sample(self, x):
        assert_same_float_dtype(tensors=[x], dtype=self.dtype)
        if not self.validate_args:
            return x
        return util.with_dependencies([assert_positive_v1(x)], x)


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(g0, g1, name=None):
    """KL(g0 || g1) in closed form."""
    with name_scope(name, "kl_gamma_gamma"):
        return ((g0.concentration - g1.concentration) * digamma(g0.concentration)
                + lgamma(g1.concentration) - lgamma(g0.concentration)
                + g1.concentration * log(g0.rate) - g1.concentration * log(g1.rate)
                + g0.concentration * (g1.rate / g0.rate - 1.0))

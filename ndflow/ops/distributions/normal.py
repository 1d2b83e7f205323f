"""`tf.distributions.Normal`: N(loc, scale**2), and its registered KL(Normal || Normal)."""

from __future__ import annotations

import math

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.ops.arithmetic import log, squared_difference
from ndflow.ops.array_core import constant
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_slicing import concat
from ndflow.ops.distributions import special_math
from ndflow.ops.distributions.kullback_leibler import RegisterKL
from ndflow.ops.distributions.loc_scale import LocScale
from ndflow.ops.math import square
from ndflow.ops.random import random_normal


@tf_export(v1=["distributions.Normal"])
class Normal(LocScale):
    """The normal distribution with mean `loc` and standard deviation `scale`."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Normal"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name, dict(locals()))

    def _sample_n(self, n, seed=None):
        shape_ = concat([[n], self.batch_shape_tensor()], 0)
        sampled = random_normal(shape=shape_, mean=0.0, stddev=1.0, dtype=self.loc.dtype,
                                seed=seed)
        return sampled * self.scale + self.loc

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _log_cdf(self, x):
        return special_math.log_ndtr(self._z(x))

    def _cdf(self, x):
        return special_math.ndtr(self._z(x))

    def _log_survival_function(self, x):
        return special_math.log_ndtr(-self._z(x))

    def _survival_function(self, x):
        return special_math.ndtr(-self._z(x))

    def _log_unnormalized_prob(self, x):
        return -0.5 * square(self._z(x))

    def _log_normalization(self):
        return 0.5 * math.log(2.0 * math.pi) + log(self.scale)

    def _entropy(self):
        scale = self.scale * ones_like(self.loc)
        return 0.5 * math.log(2.0 * math.pi * math.e) + log(scale)

    def _mean(self):
        return self.loc * ones_like(self.scale)

    def _quantile(self, p):
        return self._inv_z(special_math.ndtri(p))

    def _stddev(self):
        return self.scale * ones_like(self.loc)

    def _mode(self):
        return self._mean()

    def _z(self, x):
        with name_scope("standardize"):
            return (x - self.loc) / self.scale

    def _inv_z(self, z):
        with name_scope("reconstruct"):
            return z * self.scale + self.loc


@RegisterKL(Normal, Normal)
def _kl_normal_normal(n_a, n_b, name=None):
    """KL(n_a || n_b) in closed form."""
    with name_scope(name, "kl_normal_normal"):
        one = constant(1, dtype=n_a.dtype)
        two = constant(2, dtype=n_a.dtype)
        half = constant(0.5, dtype=n_a.dtype)
        s_a_squared = square(n_a.scale)
        s_b_squared = square(n_b.scale)
        ratio = s_a_squared / s_b_squared
        return (squared_difference(n_a.loc, n_b.loc) / (two * s_b_squared)
                + half * (ratio - one - log(ratio)))

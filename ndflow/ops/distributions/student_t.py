"""`tf.distributions.StudentT`: Student's t with `df` degrees of freedom, shifted by `loc`
and scaled by `scale`."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.ops.arithmetic import log, where
from ndflow.ops.array_core import identity
from ndflow.ops.array_fill import fill, ones, ones_like
from ndflow.ops.array_slicing import concat
from ndflow.ops.check_ops import assert_less_v1, assert_positive_v1, assert_same_float_dtype
from ndflow.ops.comparison import greater, less
from ndflow.ops.distributions import distribution, util
from ndflow.ops.math import abs as abs_
from ndflow.ops.math import log1p, rsqrt, square
from ndflow.ops.math_special import betainc, digamma, lbeta, lgamma
from ndflow.ops.random import random_normal
from ndflow.ops.random_gamma_poisson import random_gamma


@tf_export(v1=["distributions.StudentT"])
class StudentT(distribution.ScalarDistribution):
    """Student's t distribution."""

    _batch_parameters = ("df", "loc", "scale")
    _param_shapes = distribution.param_shapes_of("df", "loc", "scale")

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="StudentT"):
        parameters = dict(locals())
        with name_scope(name, "StudentT") as name:
            with control_dependencies([assert_positive_v1(df)] if validate_args else []):
                self._df = identity(df, name="df")
                self._loc = identity(loc, name="loc")
                self._scale = identity(scale, name="scale")
                assert_same_float_dtype((self._df, self._loc, self._scale))
        super().__init__(dtype=self._scale.dtype,
                         reparameterization_type=distribution.FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._df, self._loc, self._scale], name=name)

    df = distribution.parameter("df")
    loc = distribution.parameter("loc")
    scale = distribution.parameter("scale")

    def _sample_n(self, n, seed=None):
        shape_ = concat([[n], self.batch_shape_tensor()], 0)
        normal_sample = random_normal(shape_, dtype=self.dtype, seed=seed)
        df = self.df * ones(self.batch_shape_tensor(), dtype=self.dtype)
        gamma_sample = random_gamma([n], 0.5 * df, beta=0.5, dtype=self.dtype,
                                    seed=util.gen_new_seed(seed, salt="student_t"))
        samples = normal_sample * rsqrt(gamma_sample / df)
        return samples * self.scale + self.loc

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _log_unnormalized_prob(self, x):
        y = (x - self.loc) / self.scale
        return -0.5 * (self.df + 1.0) * log1p(y ** 2.0 / self.df)

    def _log_normalization(self):
        return (log(abs_(self.scale)) + 0.5 * log(self.df) + float(0.5 * np.log(np.pi))
                + lgamma(0.5 * self.df) - lgamma(0.5 * (self.df + 1.0)))

    def _cdf(self, x):
        y = (x - self.loc) / abs_(self.scale)
        x_t = self.df / (y ** 2.0 + self.df)
        neg_cdf = 0.5 * betainc(0.5 * self.df, 0.5, x_t)
        return where(less(y, 0.0), neg_cdf, 1.0 - neg_cdf)

    def _entropy(self):
        v = ones(self.batch_shape_tensor(), dtype=self.dtype)[..., None]
        u = v * self.df[..., None]
        beta_arg = concat([u, v], -1) / 2.0
        return (log(abs_(self.scale)) + 0.5 * log(self.df) + lbeta(beta_arg)
                + 0.5 * (self.df + 1.0)
                * (digamma(0.5 * (self.df + 1.0)) - digamma(0.5 * self.df)))

    def _nan(self):
        return fill(self.batch_shape_tensor(), np.array(np.nan, self.dtype.as_numpy_dtype),
                    name="nan")

    def _mean(self):
        mean = self.loc * ones(self.batch_shape_tensor(), dtype=self.dtype)
        if self.allow_nan_stats:
            return where(greater(self.df, ones(self.batch_shape_tensor(), dtype=self.dtype)),
                         mean, self._nan())
        return util.with_dependencies([assert_less_v1(
            ones([], dtype=self.dtype), self.df,
            message="mean not defined for components of df <= 1")], mean)

    def _variance(self):
        denom = where(greater(self.df, 2.0), self.df - 2.0, ones_like(self.df))
        var = (ones(self.batch_shape_tensor(), dtype=self.dtype) * square(self.scale)
               * self.df / denom)
        inf = np.array(np.inf, self.dtype.as_numpy_dtype)
        defined = where(self.df > fill(self.batch_shape_tensor(), 2.0), var,
                        fill(self.batch_shape_tensor(), inf, name="inf"))
        if self.allow_nan_stats:
            return where(greater(self.df, ones(self.batch_shape_tensor(), dtype=self.dtype)),
                         defined, self._nan())
        return util.with_dependencies([assert_less_v1(
            ones([], dtype=self.dtype), self.df,
            message="variance not defined for components of df <= 1")], defined)

    def _mode(self):
        return identity(self.loc)

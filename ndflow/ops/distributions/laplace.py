"""`tf.distributions.Laplace`: density exp(-|x - loc| / scale) / (2 scale)."""

from __future__ import annotations

import math

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.ops.arithmetic import log
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.array_slicing import concat
from ndflow.ops.distributions import special_math
from ndflow.ops.distributions.loc_scale import LocScale
from ndflow.ops.math import abs as abs_
from ndflow.ops.math import exp, log1p, sign
from ndflow.ops.random import random_uniform


@tf_export(v1=["distributions.Laplace"])
class Laplace(LocScale):
    """The Laplace distribution with location `loc` and scale `scale`."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Laplace"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name, dict(locals()))

    def _sample_n(self, n, seed=None):
        shape_ = concat([[n], self.batch_shape_tensor()], 0)
        np_dtype = self.dtype.as_numpy_dtype
        u = random_uniform(shape=shape_, minval=np.nextafter(np_dtype(-1.0), np_dtype(0.0)),
                           maxval=1.0, dtype=self.dtype, seed=seed)
        return self.loc - self.scale * sign(u) * log1p(-abs_(u))

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._log_normalization()

    def _prob(self, x):
        return exp(self._log_prob(x))

    def _log_cdf(self, x):
        return special_math.log_cdf_laplace(self._z(x))

    def _log_survival_function(self, x):
        return special_math.log_cdf_laplace(-self._z(x))

    def _cdf(self, x):
        z = self._z(x)
        return 0.5 + 0.5 * sign(z) * (1.0 - exp(-abs_(z)))

    def _log_unnormalized_prob(self, x):
        return -abs_(self._z(x))

    def _log_normalization(self):
        return math.log(2.0) + log(self.scale)

    def _entropy(self):
        scale = self.scale + zeros_like(self.loc)
        return math.log(2.0) + 1.0 + log(scale)

    def _mean(self):
        return self.loc + zeros_like(self.scale)

    def _stddev(self):
        return math.sqrt(2.0) * self.scale + zeros_like(self.loc)

    def _median(self):
        return self._mean()

    def _mode(self):
        return self._mean()

    def _z(self, x):
        return (x - self.loc) / self.scale

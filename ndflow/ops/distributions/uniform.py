"""`tf.distributions.Uniform`: uniform on [low, high)."""

from __future__ import annotations

import math

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.ops.arithmetic import log, where
from ndflow.ops.array_core import identity, shape
from ndflow.ops.array_fill import ones, ones_like, zeros, zeros_like
from ndflow.ops.array_misc import broadcast_dynamic_shape
from ndflow.ops.array_slicing import concat
from ndflow.ops.check_ops import assert_less_v1, assert_same_float_dtype
from ndflow.ops.comparison import is_nan, logical_or
from ndflow.ops.distributions import distribution
from ndflow.ops.math import square
from ndflow.ops.random import random_uniform


@tf_export(v1=["distributions.Uniform"])
class Uniform(distribution.ScalarDistribution):
    """The uniform distribution on [low, high)."""

    _batch_parameters = ("low", "high")
    _param_shapes = distribution.param_shapes_of("low", "high")

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True,
                 name="Uniform"):
        parameters = dict(locals())
        with name_scope(name, "Uniform") as name:
            deps = [assert_less_v1(low, high, message="uniform not defined when low >= high.")
                    ] if validate_args else []
            with control_dependencies(deps):
                self._low = identity(low, name="low")
                self._high = identity(high, name="high")
                assert_same_float_dtype([self._low, self._high])
        super().__init__(dtype=self._low.dtype,
                         reparameterization_type=distribution.FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._low, self._high],
                         name=name)

    @property
    def low(self):
        return self._low

    @property
    def high(self):
        return self._high

    def range(self, name="range"):
        """high - low."""
        with self._name_scope(name):
            return self.high - self.low

    def _sample_n(self, n, seed=None):
        shape_ = concat([[n], self.batch_shape_tensor()], 0)
        samples = random_uniform(shape=shape_, dtype=self.dtype, seed=seed)
        return self.low + self.range() * samples

    def _prob(self, x):
        bx = x * ones(self.batch_shape_tensor(), dtype=x.dtype)
        return where(is_nan(bx), bx,
                     where(logical_or(bx < self.low, bx >= self.high), zeros_like(bx),
                           ones_like(bx) / self.range()))

    def _cdf(self, x):
        bshape = broadcast_dynamic_shape(shape(x), self.batch_shape_tensor())
        zeros_, ones_ = zeros(bshape, dtype=self.dtype), ones(bshape, dtype=self.dtype)
        bx = x * ones_
        below = where(x < self.low, zeros_, (bx - self.low) / self.range())
        return where(x >= self.high, ones_, below)

    def _entropy(self):
        return log(self.range())

    def _mean(self):
        return (self.low + self.high) / 2.0

    def _variance(self):
        return square(self.range()) / 12.0

    def _stddev(self):
        return self.range() / math.sqrt(12.0)

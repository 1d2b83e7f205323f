"""`tf.distributions.Exponential`: Gamma(1, rate), sampled as -log(U) / rate."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import log
from ndflow.ops.array_core import shape
from ndflow.ops.array_fill import ones
from ndflow.ops.array_slicing import concat
from ndflow.ops.distributions import distribution
from ndflow.ops.distributions.gamma import Gamma
from ndflow.ops.random import random_uniform


@tf_export(v1=["distributions.Exponential"])
class Exponential(Gamma):
    """The exponential distribution with inverse scale `rate`."""

    _param_shapes = distribution.param_shapes_of("rate")

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        parameters = dict(locals())
        with name_scope(name, "Exponential") as name:
            self._rate = convert_to_tensor(rate, name="rate")
        super().__init__(concentration=ones([], dtype=self._rate.dtype), rate=self._rate,
                         allow_nan_stats=allow_nan_stats, validate_args=validate_args,
                         name=name)
        self._parameters = parameters
        self._graph_parents += [self._rate]

    @property
    def rate(self):
        return self._rate

    def _log_survival_function(self, value):
        return self._log_prob(value) - log(self._rate)

    def _sample_n(self, n, seed=None):
        shape_ = concat([[n], shape(self._rate)], 0)
        sampled = random_uniform(shape_, minval=np.finfo(self.dtype.as_numpy_dtype).tiny,
                                 maxval=1.0, seed=seed, dtype=self.dtype)
        return -log(sampled) / self._rate

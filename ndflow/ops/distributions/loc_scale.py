"""A scalar location-scale distribution's shared parts (Normal, Laplace): the `loc` and
`scale` parameters (identities in the distribution's name scope, a positive scale asserted
with `validate_args`), their broadcast batch shape and the empty event shape."""

from __future__ import annotations

from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.ops.array_core import identity
from ndflow.ops.check_ops import assert_positive_v1, assert_same_float_dtype
from ndflow.ops.distributions import distribution


class LocScale(distribution.ScalarDistribution):
    """A scalar distribution of a location and a positive scale (reparameterized)."""

    _batch_parameters = ("loc", "scale")
    _param_shapes = distribution.param_shapes_of("loc", "scale")

    def __init__(self, loc, scale, validate_args, allow_nan_stats, name, parameters):
        with name_scope(name, type(self).__name__) as name:
            with control_dependencies([assert_positive_v1(scale)] if validate_args else []):
                self._loc = identity(loc, name="loc")
                self._scale = identity(scale, name="scale")
                assert_same_float_dtype([self._loc, self._scale])
        super().__init__(dtype=self._scale.dtype,
                         reparameterization_type=distribution.FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._loc, self._scale],
                         name=name)

    loc = distribution.parameter("loc")
    scale = distribution.parameter("scale")

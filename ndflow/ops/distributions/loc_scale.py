"""A scalar location-scale distribution's shared parts (Normal, Laplace): the `loc` and
`scale` parameters (identities in the distribution's name scope, a positive scale asserted
with `validate_args`), their broadcast batch shape and the empty event shape."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.array_core import constant, identity, shape
from ndflow.ops.array_misc import broadcast_dynamic_shape, broadcast_static_shape
from ndflow.ops.check_ops import assert_positive_v1, assert_same_float_dtype
from ndflow.ops.distributions import distribution


class LocScale(distribution.Distribution):
    """A scalar distribution of a location and a positive scale (reparameterized)."""

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

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def _batch_shape_tensor(self):
        return broadcast_dynamic_shape(shape(self.loc), shape(self.scale))

    def _batch_shape(self):
        return broadcast_static_shape(self.loc.shape, self.scale.shape)

    def _event_shape_tensor(self):
        return constant([], dtype=dtypes.int32)

    def _event_shape(self):
        return TensorShape([])

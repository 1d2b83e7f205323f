"""The shared parts of the distributions parameterized by a concentration vector (Dirichlet,
DirichletMultinomial): the `concentration` and its sum over the last axis, the batch shape
that sum's and the event shape the last axis."""

from __future__ import annotations

from ndflow.ops.array_core import shape
from ndflow.ops.distributions import distribution, util


class ConcentrationShapes(distribution.Distribution):
    """Sets `_concentration` and `_total_concentration` in the subclass's constructor."""

    @property
    def concentration(self):
        return self._concentration

    @property
    def total_concentration(self):
        return self._total_concentration

    def _batch_shape_tensor(self):
        return shape(self.total_concentration)

    def _batch_shape(self):
        return self.total_concentration.shape

    def _event_shape_tensor(self):
        return shape(self.concentration)[-1:]

    def _event_shape(self):
        return util.with_rank_at_least(self.concentration.shape, 1)[-1:]

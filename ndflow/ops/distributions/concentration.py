"""The shared parts of the distributions parameterized by a concentration vector (Dirichlet,
DirichletMultinomial): the `concentration` and its sum over the last axis, the batch shape
that sum's and the event shape the last axis."""

from __future__ import annotations

from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import shape
from ndflow.ops.distributions import distribution, util
from ndflow.ops.linalg import matmul
from ndflow.ops.linalg_diag import matrix_set_diag
from ndflow.ops.reduction import reduce_sum


class ConcentrationShapes(distribution.Distribution):
    """Sets `_concentration` and `_total_concentration` in the subclass's constructor
    (`_set_concentration`)."""

    def _set_concentration(self, concentration, validate_args) -> None:
        """`concentration` as a tensor (checked by the subclass's
        `_maybe_assert_valid_concentration` with `validate_args`) and its sum."""
        self._concentration = self._maybe_assert_valid_concentration(
            convert_to_tensor(concentration, name="concentration"), validate_args)
        self._total_concentration = reduce_sum(self._concentration, -1)

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

    def _covariance(self):
        """From the subclass's `_mean`, `_variance` and `_variance_scale_term`."""
        x = self._variance_scale_term() * self._mean()
        return matrix_set_diag(-matmul(x[..., None], x[..., None, :]), self._variance())

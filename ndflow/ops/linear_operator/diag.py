"""`tf.linalg.LinearOperatorDiag`: a [batch] diagonal matrix given by its diagonal
[B1,...,Bb, N]; every method is elementwise, O(N) per column."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.ops import check_ops
from ndflow.ops.arithmetic import log
from ndflow.ops.array_core import expand_dims, shape
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.complex_ops import conj, real
from ndflow.ops.linalg_diag import matrix_diag, matrix_diag_part, matrix_set_diag
from ndflow.ops.linear_operator import base, util
from ndflow.ops.linear_operator.full_matrix import LinearOperatorLowerTriangular
from ndflow.ops.math import abs as math_abs
from ndflow.ops.math import sqrt
from ndflow.ops.reduction import reduce_max, reduce_min, reduce_prod, reduce_sum

__all__ = ["LinearOperatorDiag"]


def commuting_hints(left, right) -> dict:
    return dict(is_non_singular=util.combined_non_singular_hint(left, right),
                is_self_adjoint=util.combined_commuting_self_adjoint_hint(left, right),
                is_positive_definite=util.combined_commuting_positive_definite_hint(
                    left, right))


@tf_export("linalg.LinearOperatorDiag")
@base.register("Diag")
class LinearOperatorDiag(base.LinearOperator):
    """`A = diag(d)` for `d` [B1,...,Bb, N]; real diagonals are self-adjoint."""

    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorDiag"):
        parameters = base.constructor_parameters(locals())
        self._diag = util.convert_nonref_to_tensor(diag, name="diag")
        self._check_diag(self._diag)
        if not self._diag.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A real diagonal operator is always self adjoint.")
            is_self_adjoint = True
        if is_square is False:
            raise ValueError("Only square diagonal operators currently supported.")
        self._init_from_parameters(self._diag.dtype, parameters, is_self_adjoint=is_self_adjoint,
                                   is_square=True)

    def _check_diag(self, diag):
        if diag.shape.ndims is not None and diag.shape.ndims < 1:
            raise ValueError(f"Argument diag must have at least 1 dimension.  Found: {diag!s}")

    @property
    def diag(self):
        return self._diag

    def _d(self, conjugate=False):
        d = util.as_tensor(self._diag)
        return conj(d) if conjugate and d.dtype.is_complex else d

    def _shape(self):
        s = self._diag.shape
        return s.concatenate(s[-1:])

    def _shape_tensor(self):
        s = shape(util.as_tensor(self._diag))
        return concat((s, [s[-1]]), 0)

    # -- operators of operators -------------------------------------------------------------

    def _linop_inverse(self):
        return LinearOperatorDiag(1.0 / self._d(), is_non_singular=self.is_non_singular,
                                  is_self_adjoint=self.is_self_adjoint,
                                  is_positive_definite=self.is_positive_definite,
                                  is_square=True)

    def _linop_matmul(self, left, right):
        hints = commuting_hints(left, right)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(diag=left.diag * right.diag, is_square=True, **hints)
        if hasattr(right, "_ones_diag") and hasattr(right, "multiplier"):
            return LinearOperatorDiag(diag=left.diag * right.multiplier, is_square=True,
                                      **hints)
        if isinstance(right, LinearOperatorLowerTriangular):
            return LinearOperatorLowerTriangular(
                tril=expand_dims(util.as_tensor(left.diag), -1) * right.to_dense(),
                is_non_singular=hints["is_non_singular"],
                is_self_adjoint=hints["is_self_adjoint"], is_positive_definite=None,
                is_square=True)
        return super()._linop_matmul(left, right)

    def _linop_solve(self, left, right):
        hints = commuting_hints(left, right)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(diag=right.diag / left.diag, is_square=True, **hints)
        if hasattr(right, "_ones_diag") and hasattr(right, "multiplier"):
            return LinearOperatorDiag(diag=right.multiplier / left.diag, is_square=True,
                                      **hints)
        if isinstance(right, LinearOperatorLowerTriangular):
            return LinearOperatorLowerTriangular(
                tril=right.to_dense() / expand_dims(util.as_tensor(left.diag), -1),
                is_non_singular=hints["is_non_singular"],
                is_self_adjoint=hints["is_self_adjoint"], is_positive_definite=None,
                is_square=True)
        return super()._linop_solve(left, right)

    def _linop_adjoint(self):
        return LinearOperatorDiag(diag=self._d(conjugate=True),
                                  is_non_singular=self.is_non_singular,
                                  is_self_adjoint=self.is_self_adjoint,
                                  is_positive_definite=self.is_positive_definite,
                                  is_square=True)

    def _linop_cholesky(self):
        return LinearOperatorDiag(sqrt(self._d()), is_non_singular=True, is_self_adjoint=True,
                                  is_positive_definite=True, is_square=True)

    # -- asserts ----------------------------------------------------------------------------

    def _assert_non_singular(self):
        return util.assert_no_entries_with_modulus_zero(
            self._diag, message="Singular operator:  Diagonal contained zero values.")

    def _assert_positive_definite(self):
        if self.dtype.is_complex:
            message = ("Diagonal operator had diagonal entries with non-positive real part, "
                       "thus was not positive definite.")
        else:
            message = ("Real diagonal operator had non-positive diagonal entries, thus was "
                       "not positive definite.")
        return check_ops.assert_positive(real(self._d()), message=message)

    def _assert_self_adjoint(self):
        return util.assert_zero_imag_part(
            self._diag, message="This diagonal operator contained non-zero imaginary values. "
                                "  Thus it was not self-adjoint.")

    # -- methods ----------------------------------------------------------------------------

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = util.adjoint_if(x, adjoint_arg)
        return expand_dims(self._d(adjoint), -1) * x

    def _matvec(self, x, adjoint=False):
        return self._d(adjoint) * x

    def _determinant(self):
        return reduce_prod(self._d(), axis=[-1])

    def _log_abs_determinant(self):
        log_det = reduce_sum(log(math_abs(self._d())), axis=[-1])
        return cast(log_det, self.dtype) if self.dtype.is_complex else log_det

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = util.adjoint_if(rhs, adjoint_arg)
        return rhs * expand_dims(1.0 / self._d(adjoint), -1)

    def _to_dense(self):
        return matrix_diag(self._d())

    def _diag_part(self):
        return self.diag

    def _add_to_tensor(self, x):
        return matrix_set_diag(x, self._d() + matrix_diag_part(x))

    def _eigvals(self):
        return self._d()

    def _cond(self):
        a = math_abs(self._d())
        return reduce_max(a, axis=-1) / reduce_min(a, axis=-1)

    @property
    def _composite_tensor_fields(self):
        return ("diag",)

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"diag": 1}

"""`tf.linalg.LinearOperatorFullMatrix` (a dense [batch] matrix) and
`tf.linalg.LinearOperatorLowerTriangular` (the lower triangle of one, used by triangular
solves; also what `cholesky()` returns)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops.arithmetic import log
from ndflow.ops.array_core import shape
from ndflow.ops.linalg_decomp import matrix_triangular_solve
from ndflow.ops.linalg_diag import band_part, matrix_diag_part
from ndflow.ops.linear_operator import base, util
from ndflow.ops.math import abs as math_abs
from ndflow.ops.reduction import reduce_prod, reduce_sum

__all__ = ["LinearOperatorFullMatrix", "LinearOperatorLowerTriangular"]

_FULL_MATRIX_DTYPES = [dtypes.float16, dtypes.float32, dtypes.float64, dtypes.complex64,
                       dtypes.complex128]


@tf_export("linalg.LinearOperatorFullMatrix")
@base.register("FullMatrix")
class LinearOperatorFullMatrix(base.LinearOperator):
    """`A` given by its entries, a [batch] matrix [B1,...,Bb, M, N]."""

    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorFullMatrix"):
        parameters = base.constructor_parameters(locals())
        self._matrix = util.convert_nonref_to_tensor(matrix, name="matrix")
        if self._matrix.dtype not in _FULL_MATRIX_DTYPES:
            raise TypeError(f"Argument `matrix` must have dtype in "
                            f"{_FULL_MATRIX_DTYPES}. Received: {self._matrix.dtype}.")
        if self._matrix.shape.ndims is not None and self._matrix.shape.ndims < 2:
            raise ValueError(f"Argument `matrix` must have at least 2 dimensions. "
                             f"Received: {self._matrix}.")
        self._init_from_parameters(self._matrix.dtype, parameters)

    @property
    def matrix(self):
        return self._matrix

    def _shape(self):
        return self._matrix.shape

    def _shape_tensor(self):
        return shape(util.as_tensor(self._matrix))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return base.matmul(self._matrix, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._dense_solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _to_dense(self):
        return util.as_tensor(self._matrix)

    @property
    def _composite_tensor_fields(self):
        return ("matrix",)

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"matrix": 2}


@tf_export("linalg.LinearOperatorLowerTriangular")
@base.register("LowerTriangular")
class LinearOperatorLowerTriangular(base.LinearOperator):
    """The lower triangle of `tril` (entries above the diagonal are ignored): matmul and
    solve in O(N^2 R), determinants from the diagonal."""

    def __init__(self, tril, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowerTriangular"):
        parameters = base.constructor_parameters(locals())
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported at this time.")
        self._tril = util.convert_nonref_to_tensor(tril, name="tril")
        if self._tril.shape.ndims is not None and self._tril.shape.ndims < 2:
            raise ValueError(f"Argument tril must have at least 2 dimensions.  Found: "
                             f"{self._tril!s}")
        self._init_from_parameters(self._tril.dtype, parameters, is_square=True)

    @property
    def tril(self):
        return self._tril

    def _get_tril(self):
        return band_part(util.as_tensor(self._tril), -1, 0)

    def _get_diag(self):
        return matrix_diag_part(util.as_tensor(self._tril))

    def _shape(self):
        return self._tril.shape

    def _shape_tensor(self):
        return shape(util.as_tensor(self._tril))

    def _assert_non_singular(self):
        return util.assert_no_entries_with_modulus_zero(
            self._get_diag(), message="Singular operator:  Diagonal contained zero values.")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return base.matmul(self._get_tril(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _linop_matmul(self, left, right):
        if hasattr(right, "_check_diag"):   # a diagonal on the right scales the columns
            return LinearOperatorLowerTriangular(
                tril=left.to_dense() * right.diag,
                is_non_singular=util.combined_non_singular_hint(right, left),
                is_self_adjoint=util.combined_commuting_self_adjoint_hint(right, left),
                is_positive_definite=None, is_square=True)
        return super()._linop_matmul(left, right)

    def _determinant(self):
        return reduce_prod(self._get_diag(), axis=[-1])

    def _log_abs_determinant(self):
        return reduce_sum(log(math_abs(self._get_diag())), axis=[-1])

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = util.adjoint_if(rhs, adjoint_arg)
        tril, rhs = util.broadcast_matrix_batch_dims([self._get_tril(), rhs]) \
            if rhs.shape.rank != self._tril.shape.rank else (self._get_tril(), rhs)
        return matrix_triangular_solve(tril, rhs, lower=True, adjoint=adjoint)

    def _to_dense(self):
        return self._get_tril()

    def _eigvals(self):
        return self._get_diag()

    @property
    def _composite_tensor_fields(self):
        return ("tril",)

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"tril": 2}

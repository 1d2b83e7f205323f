"""`tf.linalg.LinearOperatorIdentity` and `tf.linalg.LinearOperatorScaledIdentity`: [batch]
identity matrices, plain or times a [batch] scalar, known by their size alone (nothing of
size N x N is ever made)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.dimension import dimension_value
from ndflow.core.shapes import TensorShape, broadcast_shapes
from ndflow.ops import check_ops
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.arithmetic import log, where
from ndflow.ops.array_core import expand_dims, no_op, shape, stack
from ndflow.ops.array_fill import ones, zeros
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal
from ndflow.ops.complex_ops import conj, imag, real
from ndflow.ops.linalg_diag import matrix_diag_part, matrix_set_diag
from ndflow.ops.linear_operator import base, util
from ndflow.ops.linear_operator.diag import LinearOperatorDiag, commuting_hints
from ndflow.ops.linear_operator.slicing import sliced_batch_shape
from ndflow.ops.linear_operator.util import with_dependencies
from ndflow.ops.math import abs as math_abs
from ndflow.ops.math import sqrt
from ndflow.ops.reduction import reduce_min

__all__ = ["LinearOperatorIdentity", "LinearOperatorScaledIdentity"]


def check_size_arg(value, static, arg: str, rank: int) -> None:
    """TF's checks of num_rows (rank 0) / batch_shape (rank 1): integer, right rank, >= 0."""
    if not value.dtype.is_integer:
        raise TypeError(f"Argument {arg} must be integer type.  Found: {value!s}")
    if static is None:
        return
    static = np.asarray(static)
    if static.ndim != rank:
        raise ValueError(f"Argument {arg} must be a {rank}-D Tensor.  Found: {static}")
    if np.any(static < 0):
        sep = ":" if rank == 1 else ": "   # TF's batch_shape message has no space
        raise ValueError(f"Argument {arg} must be non-negative.  Found{sep}{static}")


def runtime_size_checks(value, arg: str, rank: int):
    """`value` after run-time checks of its rank and sign (assert_proper_shapes)."""
    return with_dependencies(
        [check_ops.assert_rank(value, rank, message=f"Argument {arg} must be a {rank}-D "
                                                    f"Tensor."),
         check_ops.assert_non_negative(value, message=f"Argument {arg} must be "
                                                      f"non-negative.")], value)


class SizedOperator(base.LinearOperator):
    """An operator known by its size alone (Identity, ScaledIdentity, Zeros): its diagonal
    and batch of constants."""

    def _min_matrix_dim(self):
        d, r = dimension_value(self.domain_dimension), dimension_value(self.range_dimension)
        if d is None or r is None:
            return None
        return min(d, r)

    def _min_matrix_dim_tensor(self):
        return reduce_min(self.shape_tensor()[-2:])

    def _constant_diag(self, fill):
        """`fill(shape, dtype)` (ones or zeros) of the diagonal's shape."""
        if self.shape.is_fully_defined():
            d_shape = self.batch_shape.concatenate([self._min_matrix_dim()]).as_list()
        else:
            d_shape = concat([self.batch_shape_tensor(), [self._min_matrix_dim_tensor()]], 0)
        return fill(shape=d_shape, dtype=self.dtype)

    def _constant_batch(self, fill):
        batch = self.batch_shape
        return fill(shape=batch.as_list() if batch.is_fully_defined()
                    else self.batch_shape_tensor(), dtype=self.dtype)

    def _possibly_broadcast_batch_shape(self, x):
        """`x` broadcast against the batch shape (when a `batch_shape` was given)."""
        if getattr(self, "_batch_shape_arg", None) is None:
            return x
        special = self.batch_shape.concatenate([1, 1])
        if special.is_fully_defined():
            if broadcast_shapes(x.shape, special) == x.shape:
                return x
            return x + zeros(shape=special.as_list(), dtype=self.dtype)
        special = concat((self.batch_shape_tensor(), [1, 1]), 0)
        return x + zeros(shape=special, dtype=self.dtype)


class BaseLinearOperatorIdentity(SizedOperator):
    """What the identity and the scaled identity share: the size argument and the diagonal
    of ones."""

    def _check_num_rows_possibly_add_asserts(self):
        if self._assert_proper_shapes:
            self._num_rows = runtime_size_checks(self._num_rows, "num_rows", 0)
        check_size_arg(self._num_rows, self._num_rows_static, "num_rows", 0)

    def _ones_diag(self):
        return self._constant_diag(ones)

    def _batch_of_ones(self):
        return self._constant_batch(ones)

    def _min_dim_as_dtype(self):
        n = self._min_matrix_dim()
        return n if n is not None else cast(self._min_matrix_dim_tensor(), self.dtype)


def set_batch_shape_arg(op, batch_shape) -> None:
    """The `batch_shape` argument of Identity and Zeros, checked as TF checks it."""
    op._batch_shape_arg = None
    if batch_shape is not None:
        op._batch_shape_arg, op._batch_shape_static = _size_tensor(batch_shape,
                                                                   "batch_shape_arg")
        if op._assert_proper_shapes:
            op._batch_shape_arg = runtime_size_checks(op._batch_shape_arg, "batch_shape", 1)
        check_size_arg(op._batch_shape_arg, op._batch_shape_static, "batch_shape", 1)


def shape_from_args(op, rows_static, columns_static) -> TensorShape:
    def as_int(v):
        return None if v is None else int(v)
    matrix_shape = TensorShape((as_int(rows_static), as_int(columns_static)))
    if op._batch_shape_arg is None:
        return matrix_shape
    batch = None if op._batch_shape_static is None else \
        [int(d) for d in op._batch_shape_static]
    return TensorShape(batch).concatenate(matrix_shape)


def shape_tensor_from_args(op, rows, columns):
    matrix_shape = stack((rows, columns), axis=0)
    if op._batch_shape_arg is None:
        return matrix_shape
    return concat((op._batch_shape_arg, matrix_shape), 0)


def _size_tensor(value, name):
    util.assert_not_ref_type(value, name)
    t = util.shape_tensor(value, name=name)
    return t, constant_value(t)


@tf_export("linalg.LinearOperatorIdentity")
@base.register("Identity")
class LinearOperatorIdentity(BaseLinearOperatorIdentity):
    """The [batch] identity of size `num_rows` (with `batch_shape`, a batch of them)."""

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True,
                 is_self_adjoint=True, is_positive_definite=True, is_square=True,
                 assert_proper_shapes=False, name="LinearOperatorIdentity"):
        parameters = base.constructor_parameters(locals())
        dtype = dtypes.as_dtype(dtype or dtypes.float32)
        self._assert_proper_shapes = assert_proper_shapes
        if not is_self_adjoint:
            raise ValueError("An identity operator is always self adjoint.")
        if not is_non_singular:
            raise ValueError("An identity operator is always non-singular.")
        if not is_positive_definite:
            raise ValueError("An identity operator is always positive-definite.")
        if not is_square:
            raise ValueError("An identity operator is always square.")
        self._init_from_parameters(dtype, parameters)
        util.assert_not_ref_type(batch_shape, "batch_shape")
        self._num_rows, self._num_rows_static = _size_tensor(num_rows, "num_rows")
        self._check_num_rows_possibly_add_asserts()
        set_batch_shape_arg(self, batch_shape)

    def _shape(self):
        return shape_from_args(self, self._num_rows_static, self._num_rows_static)

    def _shape_tensor(self):
        return shape_tensor_from_args(self, self._num_rows, self._num_rows)

    def _linop_adjoint(self):
        return self

    def _linop_cholesky(self):
        return LinearOperatorIdentity(num_rows=self._num_rows, batch_shape=self.batch_shape,
                                      dtype=self.dtype, is_non_singular=True,
                                      is_self_adjoint=True, is_positive_definite=True,
                                      is_square=True)

    def _linop_inverse(self):
        return self

    def _linop_matmul(self, left, right):
        return right

    def _linop_solve(self, left, right):
        return right

    def _assert_non_singular(self):
        return no_op(name="assert_non_singular")

    def _assert_positive_definite(self):
        return no_op(name="assert_positive_definite")

    def _assert_self_adjoint(self):
        return no_op(name="assert_self_adjoint")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = util.adjoint_if(x, adjoint_arg)
        if self._assert_proper_shapes:
            x = with_dependencies(
                [util.assert_compatible_matrix_dimensions(self, x)], x)
        return self._possibly_broadcast_batch_shape(x)

    def _determinant(self):
        return ones(shape=self.batch_shape_tensor(), dtype=self.dtype)

    def _log_abs_determinant(self):
        return zeros(shape=self.batch_shape_tensor(), dtype=self.dtype)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _trace(self):
        return self._min_dim_as_dtype() * self._batch_of_ones()

    def _diag_part(self):
        return self._ones_diag()

    def add_to_tensor(self, mat, name="add_to_tensor"):
        """`I + mat`."""
        with self._name_scope(name):
            mat = convert_to_tensor(mat, name="mat")
            return matrix_set_diag(mat, 1 + matrix_diag_part(mat))

    def _eigvals(self):
        return self._ones_diag()

    def _cond(self):
        return ones(self.batch_shape_tensor(), dtype=self.dtype)

    @property
    def _composite_tensor_prefer_static_fields(self):
        return ("num_rows", "batch_shape")

    @property
    def _composite_tensor_fields(self):
        return ("num_rows", "batch_shape", "dtype", "assert_proper_shapes")

    def __getitem__(self, slices):
        parameters = dict(self.parameters,
                          batch_shape=sliced_batch_shape(self._batch_shape_arg, slices))
        return LinearOperatorIdentity(**parameters)


@tf_export("linalg.LinearOperatorScaledIdentity")
@base.register("ScaledIdentity")
class LinearOperatorScaledIdentity(BaseLinearOperatorIdentity):
    """`multiplier * I` of size `num_rows`; the batch shape is the multiplier's shape."""

    def __init__(self, num_rows, multiplier, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorScaledIdentity"):
        parameters = base.constructor_parameters(locals())
        self._assert_proper_shapes = assert_proper_shapes
        self._multiplier = util.convert_nonref_to_tensor(multiplier, name="multiplier")
        if not self._multiplier.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A real diagonal operator is always self adjoint.")
            is_self_adjoint = True
        if not is_square:
            raise ValueError("A ScaledIdentity operator is always square.")
        util.assert_not_ref_type(num_rows, "num_rows")
        self._init_from_parameters(self._multiplier.dtype.base_dtype, parameters,
                                   is_self_adjoint=is_self_adjoint)
        self._num_rows, self._num_rows_static = _size_tensor(num_rows, "num_rows")
        self._check_num_rows_possibly_add_asserts()

    @property
    def multiplier(self):
        return self._multiplier

    def _m(self):
        return util.as_tensor(self._multiplier)

    def _shape(self):
        n = None if self._num_rows_static is None else int(self._num_rows_static)
        return self._multiplier.shape.concatenate(TensorShape((n, n)))

    def _shape_tensor(self):
        matrix_shape = stack((self._num_rows, self._num_rows), axis=0)
        return concat((shape(self._m()), matrix_shape), 0)

    def _assert_non_singular(self):
        return check_ops.assert_positive(math_abs(self._m()),
                                         message="LinearOperator was singular")

    def _assert_positive_definite(self):
        return check_ops.assert_positive(real(self._m()),
                                         message="LinearOperator was not positive definite.")

    def _assert_self_adjoint(self):
        im = imag(self._m())
        return check_ops.assert_equal(im * 0, im, message="LinearOperator was not "
                                                          "self-adjoint")

    def _multiplier_matrix(self, conjugate=False):
        m = expand_dims(expand_dims(self._m(), -1), -1)
        return conj(m) if conjugate and m.dtype.is_complex else m

    def _linop_adjoint(self):
        m = self._m()
        return LinearOperatorScaledIdentity(
            num_rows=self._num_rows, multiplier=conj(m) if m.dtype.is_complex else m,
            is_non_singular=self.is_non_singular, is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite, is_square=True)

    def _linop_cholesky(self):
        return LinearOperatorScaledIdentity(
            num_rows=self._num_rows, multiplier=sqrt(self._m()), is_non_singular=True,
            is_self_adjoint=True, is_positive_definite=True, is_square=True)

    def _linop_inverse(self):
        return LinearOperatorScaledIdentity(
            num_rows=self._num_rows, multiplier=1.0 / self._m(),
            is_non_singular=self.is_non_singular, is_self_adjoint=True,
            is_positive_definite=self.is_positive_definite, is_square=True)

    def _linop_matmul(self, left, right):
        hints = commuting_hints(left, right)
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorScaledIdentity(
                num_rows=left.domain_dimension_tensor(),
                multiplier=left.multiplier * right.multiplier, is_square=True, **hints)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(diag=right.diag * left.multiplier, is_square=True,
                                      **hints)
        return super()._linop_matmul(left, right)

    def _linop_solve(self, left, right):
        hints = commuting_hints(left, right)
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorScaledIdentity(
                num_rows=left.domain_dimension_tensor(),
                multiplier=right.multiplier / left.multiplier, is_square=True, **hints)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(diag=right.diag / left.multiplier, is_square=True,
                                      **hints)
        return super()._linop_solve(left, right)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = util.adjoint_if(x, adjoint_arg)
        if self._assert_proper_shapes:
            x = with_dependencies(
                [util.assert_compatible_matrix_dimensions(self, x)], x)
        return x * self._multiplier_matrix(conjugate=adjoint)

    def _determinant(self):
        return self._m() ** cast(self._num_rows, self.dtype)

    def _log_abs_determinant(self):
        return cast(self._num_rows, self.dtype.real_dtype) * log(math_abs(self._m()))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = util.adjoint_if(rhs, adjoint_arg)
        if self._assert_proper_shapes:
            rhs = with_dependencies(
                [util.assert_compatible_matrix_dimensions(self, rhs)], rhs)
        return rhs / self._multiplier_matrix(conjugate=adjoint)

    def _trace(self):
        return self._m() * self._min_dim_as_dtype() * self._batch_of_ones()

    def _diag_part(self):
        return self._ones_diag() * expand_dims(self._m(), -1)

    def add_to_tensor(self, mat, name="add_to_tensor"):
        """`multiplier * I + mat`."""
        with self._name_scope(name):
            mat = convert_to_tensor(mat, name="mat")
            return matrix_set_diag(mat, expand_dims(self._m(), -1) + matrix_diag_part(mat))

    def _eigvals(self):
        return self._ones_diag() * expand_dims(self._m(), -1)

    def _cond(self):
        m = self._m()
        return where(equal(m, 0.0), cast(np.nan, self.dtype), cast(1.0, self.dtype))

    @property
    def _composite_tensor_prefer_static_fields(self):
        return ("num_rows",)

    @property
    def _composite_tensor_fields(self):
        return ("num_rows", "multiplier", "assert_proper_shapes")

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"multiplier": 0}

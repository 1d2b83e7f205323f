"""`tf.linalg.LinearOperatorZeros`: the [batch] zero matrix of `num_rows` x `num_columns`,
known by its size alone."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops.array_core import no_op, shape
from ndflow.ops.array_fill import zeros
from ndflow.ops.array_slicing import concat
from ndflow.ops.linear_operator import base, util
from ndflow.ops.linear_operator.identity import (
    SizedOperator,
    _size_tensor,
    check_size_arg,
    runtime_size_checks,
    set_batch_shape_arg,
    shape_from_args,
    shape_tensor_from_args,
)
from ndflow.ops.linear_operator.slicing import sliced_batch_shape
from ndflow.ops.linear_operator.util import with_dependencies

__all__ = ["LinearOperatorZeros"]


@tf_export("linalg.LinearOperatorZeros")
@base.register("Zeros")
class LinearOperatorZeros(SizedOperator):
    """The zero operator: matmul gives zeros, determinant and trace 0, add_to_tensor the
    tensor itself."""

    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None,
                 is_non_singular=False, is_self_adjoint=True, is_positive_definite=False,
                 is_square=True, assert_proper_shapes=False, name="LinearOperatorZeros"):
        parameters = base.constructor_parameters(locals())
        dtype = dtypes.as_dtype(dtype or dtypes.float32)
        self._assert_proper_shapes = assert_proper_shapes
        if not is_self_adjoint and is_square:
            raise ValueError("A zero operator is always self adjoint.")
        if is_non_singular:
            raise ValueError("A zero operator is always singular.")
        if is_positive_definite:
            raise ValueError("A zero operator is always not positive-definite.")
        self._init_from_parameters(dtype, parameters)
        util.assert_not_ref_type(num_columns, "num_columns")
        util.assert_not_ref_type(batch_shape, "batch_shape")
        self._num_rows, self._num_rows_static = _size_tensor(num_rows, "num_rows")
        self._num_columns, self._num_columns_static = _size_tensor(
            num_rows if num_columns is None else num_columns, "num_columns")
        if self._assert_proper_shapes:
            self._num_rows = runtime_size_checks(self._num_rows, "num_rows", 0)
            self._num_columns = runtime_size_checks(self._num_columns, "num_columns", 0)
        for arg, value, static in (("num_rows", self._num_rows, self._num_rows_static),
                                   ("num_columns", self._num_columns,
                                    self._num_columns_static)):
            if not value.dtype.is_integer:
                raise TypeError(f"Argument {arg} must be integer type.  Found: {value!s}")
            if static is not None:
                check_size_arg(value, static, arg, 0)
        if self._num_rows_static is not None and self._num_columns_static is not None and \
                is_square and self._num_rows_static != self._num_columns_static:
            raise ValueError(f"LinearOperatorZeros initialized as is_square=True, but got "
                             f"num_rows({self._num_rows_static}) != "
                             f"num_columns({self._num_columns_static})")
        set_batch_shape_arg(self, batch_shape)

    def _shape(self):
        return shape_from_args(self, self._num_rows_static, self._num_columns_static)

    def _shape_tensor(self):
        return shape_tensor_from_args(self, self._num_rows, self._num_columns)

    def _assert_non_singular(self):
        raise InvalidArgumentError(None, None, "Zero operators are always non-invertible.")

    def _assert_positive_definite(self):
        raise InvalidArgumentError(None, None,
                                   "Zero operators are always non-positive definite.")

    def _assert_self_adjoint(self):
        return no_op(name="assert_self_adjoint")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        if self._assert_proper_shapes:
            x = util.adjoint_if(x, adjoint_arg)
            x = with_dependencies([util.assert_compatible_matrix_dimensions(self, x)], x)
        x_shape = shape(x)
        if self.is_square:
            out = concat([x_shape[:-2], [x_shape[-1], x_shape[-2]]], 0) if adjoint_arg \
                else x_shape
            return self._possibly_broadcast_batch_shape(zeros(shape=out, dtype=x.dtype))
        n = self._num_columns if adjoint else self._num_rows
        m = x_shape[-2] if adjoint_arg else x_shape[-1]
        out = concat([x_shape[:-2], [n, m]], 0)
        return self._possibly_broadcast_batch_shape(zeros(shape=out, dtype=x.dtype))

    def _linop_matmul(self, left, right):
        if not left.is_square or not right.is_square:
            raise ValueError("Matmul with non-square `LinearOperator`s or non-square "
                             "`LinearOperatorZeros` not supported at this time.")
        return left

    def _batch_zeros(self):
        return self._constant_batch(zeros)

    def _determinant(self):
        return self._batch_zeros()

    def _trace(self):
        return self._batch_zeros()

    def _diag_part(self):
        return self._zeros_diag()

    def add_to_tensor(self, mat, name="add_to_tensor"):
        """`0 + mat` (broadcast against the batch shape)."""
        return self._possibly_broadcast_batch_shape(mat)

    def _zeros_diag(self):
        return self._constant_diag(zeros)

    def _eigvals(self):
        return self._zeros_diag()

    @property
    def _composite_tensor_prefer_static_fields(self):
        return ("num_rows", "num_columns", "batch_shape")

    @property
    def _composite_tensor_fields(self):
        return ("num_rows", "num_columns", "batch_shape", "dtype", "assert_proper_shapes")

    def __getitem__(self, slices):
        parameters = dict(self.parameters,
                          batch_shape=sliced_batch_shape(self._batch_shape_arg, slices))
        return LinearOperatorZeros(**parameters)

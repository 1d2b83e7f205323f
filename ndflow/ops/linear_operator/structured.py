"""Three structured square operators: `tf.linalg.LinearOperatorTridiag` (tridiagonal, on
the tridiagonal matmul and solve kernels), `tf.linalg.LinearOperatorPermutation` (a row
permutation, by gathering) and `tf.linalg.LinearOperatorHouseholder` (the reflection
I - 2 v v^H / |v|^2)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import broadcast_shapes
from ndflow.ops import check_ops
from ndflow.ops.apply import constant_value
from ndflow.ops.arithmetic import maximum
from ndflow.ops.array_core import group, no_op, reshape, shape, stack, unstack
from ndflow.ops.array_fill import broadcast_to, ones, zeros, zeros_like
from ndflow.ops.array_misc import broadcast_dynamic_shape
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.array_reorder import roll
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal
from ndflow.ops.complex_ops import conj, real
from ndflow.ops.gather_batch import gather
from ndflow.ops.linalg_diag import adjoint as matrix_adjoint
from ndflow.ops.linalg_diag import matrix_diag, matrix_diag_part, matrix_set_diag
from ndflow.ops.linalg_tridiag import tridiagonal_matmul, tridiagonal_solve
from ndflow.ops.linear_operator import base, util
from ndflow.ops.math import rsqrt
from ndflow.ops.norms import l2_normalize
from ndflow.ops.reduction import reduce_sum
from ndflow.ops.sort import argsort

__all__ = ["LinearOperatorTridiag", "LinearOperatorPermutation", "LinearOperatorHouseholder"]

_COMPACT, _MATRIX, _SEQUENCE = "compact", "matrix", "sequence"


def _conj(x):
    return conj(x) if x.dtype.is_complex else x


@tf_export("linalg.LinearOperatorTridiag")
@base.register("Tridiag")
class LinearOperatorTridiag(base.LinearOperator):
    """A [batch] tridiagonal matrix from its diagonals: `compact` [..., 3, N] (super, main,
    sub; the superdiagonal's last and the subdiagonal's first entries unused), `sequence`
    (those three vectors) or `matrix` (the full matrix, only its band read)."""

    def __init__(self, diagonals, diagonals_format=_COMPACT, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorTridiag"):
        parameters = base.constructor_parameters(locals())
        if diagonals_format not in (_COMPACT, _MATRIX, _SEQUENCE):
            raise ValueError(f"Argument `diagonals_format` must be one of compact, matrix, or "
                             f"sequence. Received : {diagonals_format}.")
        if diagonals_format == _SEQUENCE:
            self._diagonals = [util.convert_nonref_to_tensor(d, name=f"diag_{i}")
                               for i, d in enumerate(diagonals)]
            dtype = self._diagonals[0].dtype
        else:
            self._diagonals = util.convert_nonref_to_tensor(diagonals, name="diagonals")
            dtype = self._diagonals.dtype
        self._diagonals_format = diagonals_format
        self._init_from_parameters(dtype, parameters)

    @property
    def diagonals(self):
        return self._diagonals

    @property
    def diagonals_format(self):
        return self._diagonals_format

    def _diags(self):
        if self.diagonals_format == _SEQUENCE:
            return [util.as_tensor(d) for d in self._diagonals]
        return util.as_tensor(self._diagonals)

    def _shape(self):
        if self.diagonals_format == _MATRIX:
            return self.diagonals.shape
        if self.diagonals_format == _COMPACT:
            s = self.diagonals.shape
            d_shape = s[:-2].concatenate(s[-1:])
        else:
            d0, d1, d2 = (d.shape for d in self.diagonals)
            batch = broadcast_shapes(broadcast_shapes(d0[:-1], d1[:-1]), d2[:-1])
            d_shape = batch.concatenate(d1[-1:])
        return d_shape.concatenate(d_shape[-1:])

    def _shape_tensor(self, diagonals=None):
        diagonals = self._diags() if diagonals is None else diagonals
        if self.diagonals_format == _MATRIX:
            return shape(diagonals)
        if self.diagonals_format == _COMPACT:
            d_shape = shape(diagonals[..., 0, :])
        else:
            s = [shape(d) for d in diagonals]
            batch = broadcast_dynamic_shape(broadcast_dynamic_shape(s[0][:-1], s[1][:-1]),
                                            s[2][:-1])
            d_shape = concat([batch, [s[1][-1]]], 0)
        return concat([d_shape, [d_shape[-1]]], axis=-1)

    def _assert_self_adjoint(self):
        diag_message = ("This tridiagonal operator contained non-zero imaginary values on "
                        "the diagonal.")
        off_message = "This tridiagonal operator has non-conjugate subdiagonal and superdiagonal."
        d = self._diags()
        if self.diagonals_format == _MATRIX:
            return group([check_ops.assert_equal(d, matrix_adjoint(d), message="Matrix was "
                                                 "not equal to its adjoint.")])
        if self.diagonals_format == _COMPACT:
            superdiag, diag, subdiag = d[..., 0, :], d[..., 1, :], d[..., 2, :]
        else:
            superdiag, diag, subdiag = d
        sub = roll(subdiag, shift=-1, axis=-1)
        return group([util.assert_zero_imag_part(diag, message=diag_message),
                      check_ops.assert_equal(_conj(sub[..., :-1]), superdiag[..., :-1],
                                             message=off_message)])

    def _adjoint_diagonals(self, diagonals):
        """The diagonals of A^H in this operator's format."""
        if self.diagonals_format == _SEQUENCE:
            superdiag, diag, subdiag = (_conj(d) for d in diagonals)
            return [roll(subdiag, shift=-1, axis=-1), diag, roll(superdiag, shift=1, axis=-1)]
        if self.diagonals_format == _MATRIX:
            return matrix_adjoint(diagonals)
        superdiag, diag, subdiag = unstack(_conj(diagonals), num=3, axis=-2)
        return stack([roll(subdiag, shift=-1, axis=-1), diag,
                      roll(superdiag, shift=1, axis=-1)], axis=-2)

    def _compact(self, diagonals):
        """[super, main, sub] vectors of `diagonals` in this operator's format."""
        if self.diagonals_format == _SEQUENCE:
            return list(diagonals)
        if self.diagonals_format == _MATRIX:
            return unstack(matrix_diag_part(diagonals, k=(-1, 1), align="LEFT_RIGHT"),
                           num=3, axis=-2)
        return unstack(diagonals, num=3, axis=-2)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        diagonals = self._diags()
        if adjoint:
            diagonals = self._adjoint_diagonals(diagonals)
        x = util.adjoint_if(x, adjoint_arg)
        if not self.dtype.is_complex:
            return tridiagonal_matmul(diagonals, x, diagonals_format=self.diagonals_format)
        # ndflow's TridiagonalMatMul kernel is real: three shifted products instead.
        superdiag, diag, subdiag = (d[..., None] for d in self._compact(diagonals))
        zero = zeros_like(x[..., :1, :])
        below = concat([x[..., 1:, :], zero], axis=-2)     # x[i + 1]
        above = concat([zero, x[..., :-1, :]], axis=-2)    # x[i - 1]
        return diag * x + superdiag * below + subdiag * above

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        diagonals = self._diags()
        if adjoint:
            diagonals = self._adjoint_diagonals(diagonals)
        rhs_shape = shape(rhs)
        op_shape = self._shape_tensor(diagonals)
        k = op_shape[-1]
        batch = broadcast_dynamic_shape(op_shape[:-2], rhs_shape[:-2])
        rhs = broadcast_to(rhs, concat([batch, rhs_shape[-2:]], axis=-1))
        if self.diagonals_format == _MATRIX:
            diagonals = broadcast_to(diagonals, concat([batch, [k, k]], axis=-1))
        elif self.diagonals_format == _COMPACT:
            diagonals = broadcast_to(diagonals, concat([batch, [3, k]], axis=-1))
        else:
            diagonals = [broadcast_to(d, concat([batch, [k]], axis=-1)) for d in diagonals]
        if self.dtype.is_complex:   # ndflow's TridiagonalSolve kernel is real: dense LU
            superdiag, diag, subdiag = self._compact(diagonals)
            dense = matrix_diag(stack([superdiag, diag, subdiag], axis=-2), k=(-1, 1),
                                align="LEFT_RIGHT")
            return util.matrix_solve_with_broadcast(dense, util.adjoint_if(rhs, adjoint_arg))
        return tridiagonal_solve(diagonals, rhs, diagonals_format=self.diagonals_format,
                                 transpose_rhs=adjoint_arg, conjugate_rhs=adjoint_arg)

    def _diag_part(self):
        if self.diagonals_format == _MATRIX:
            return matrix_diag_part(self._diags())
        if self.diagonals_format == _SEQUENCE:
            return broadcast_to(self._diags()[1], self.shape_tensor()[:-1])
        return self._diags()[..., 1, :]

    def _to_dense(self):
        if self.diagonals_format == _MATRIX:
            return self._diags()
        d = self._diags()
        if self.diagonals_format == _SEQUENCE:
            d = stack(d, axis=-2)
        return matrix_diag(d, k=(-1, 1), align="LEFT_RIGHT")

    @property
    def _composite_tensor_fields(self):
        return ("diagonals", "diagonals_format")

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"diagonals": [1, 1, 1] if self.diagonals_format == _SEQUENCE else 2}


@tf_export("linalg.LinearOperatorPermutation")
@base.register("Permutation")
class LinearOperatorPermutation(base.LinearOperator):
    """The permutation matrix P with (P x)[i] = x[perm[i]], for `perm` [B1,...,Bb, N]."""

    def __init__(self, perm, dtype=dtypes.float32, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorPermutation"):
        parameters = base.constructor_parameters(locals())
        self._perm = util.convert_nonref_to_tensor(perm, name="perm")
        self._check_perm(self._perm)
        if is_non_singular is False:
            raise ValueError(f"A Permutation operator is always non-singular. Expected "
                             f"argument `is_non_singular` to be True. Received: "
                             f"{is_non_singular}.")
        if is_square is False:
            raise ValueError(f"A Permutation operator is always square. Expected argument "
                             f"`is_square` to be True. Received: {is_square}.")
        self._init_from_parameters(dtype, parameters, is_square=True)

    def _check_perm(self, perm):
        if perm.shape.ndims is not None and perm.shape.ndims < 1:
            raise ValueError(f"Argument `perm` must have at least 1 dimension. Received: "
                             f"{perm}.")
        if not perm.dtype.is_integer:
            raise TypeError(f"Argument `perm` must be integer dtype. Received: {perm}.")
        static = constant_value(perm) if not util.is_ref(perm) else None
        if static is not None:
            if np.any(np.sort(static, axis=-1) != np.arange(0, static.shape[-1])):
                raise ValueError(f"Argument `perm` must be a vector of unique integers from 0 "
                                 f"to {static.shape[-1] - 1}.")

    @property
    def perm(self):
        return self._perm

    def _shape(self):
        s = self._perm.shape
        return s.concatenate(s[-1:])

    def _shape_tensor(self):
        s = shape(util.as_tensor(self._perm))
        return concat((s, [s[-1]]), 0)

    def _assert_non_singular(self):
        return no_op(name="assert_non_singular")

    def _domain_dimension_tensor(self, perm=None):
        perm = util.as_tensor(self.perm) if perm is None else perm
        return shape(perm)[-1]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        perm = util.as_tensor(self.perm)
        if adjoint and not self.is_self_adjoint:
            perm = argsort(perm, axis=-1)
        x = util.adjoint_if(x, adjoint_arg)
        batch = broadcast_dynamic_shape(shape(x)[:-1], shape(perm))
        k = shape(x)[-1]
        x_shape = concat([batch, [k]], axis=-1)
        x = broadcast_to(x, x_shape)
        perm = broadcast_to(perm, batch)
        m = shape(x)[-2]
        y = gather(reshape(x, concat([[-1], [m, k]], 0)), reshape(perm, concat([[-1], [m]], 0)),
                   axis=-2, batch_dims=1)
        return reshape(y, x_shape)

    def _log_abs_determinant(self):
        return ones_like_batch(self, 0.0)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _to_dense(self):
        perm = util.as_tensor(self.perm)
        rng = tf_range(0, self._domain_dimension_tensor(perm))
        return cast(equal(rng, perm[..., None]), self.dtype)

    def _diag_part(self):
        perm = util.as_tensor(self.perm)
        rng = tf_range(0, self._domain_dimension_tensor(perm))
        return cast(equal(rng, perm), self.dtype)

    def _cond(self):
        return ones_like_batch(self, 1.0)

    @property
    def _composite_tensor_fields(self):
        return ("perm", "dtype")

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"perm": 1}


def ones_like_batch(op, value):
    """A tensor of `value` (0 or 1) of the operator's batch shape and dtype."""
    return (ones if value else zeros)(shape=op.batch_shape_tensor(), dtype=op.dtype)


@tf_export("linalg.LinearOperatorHouseholder")
@base.register("Householder")
class LinearOperatorHouseholder(base.LinearOperator):
    """The reflection through the hyperplane orthogonal to `reflection_axis` [..., N]:
    self-adjoint, its own inverse, determinant -1."""

    def __init__(self, reflection_axis, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorHouseholder"):
        parameters = base.constructor_parameters(locals())
        self._reflection_axis = util.convert_nonref_to_tensor(reflection_axis,
                                                              name="reflection_axis")
        axis = self._reflection_axis
        if axis.shape.ndims is not None and axis.shape.ndims < 1:
            raise ValueError(f"Argument reflection_axis must have at least 1 dimension.  "
                             f"Found: {axis!s}")
        if is_self_adjoint is False:
            raise ValueError("A Householder operator is always self adjoint.")
        if is_positive_definite is True:
            raise ValueError("A Householder operator is always non-positive definite.")
        if is_square is False:
            raise ValueError("A Householder operator is always square.")
        self._init_from_parameters(axis.dtype, parameters, is_self_adjoint=True,
                                   is_positive_definite=False, is_square=True, name=name)

    @property
    def reflection_axis(self):
        return self._reflection_axis

    def _shape(self):
        s = self._reflection_axis.shape
        return s.concatenate(s[-1:])

    def _shape_tensor(self):
        s = shape(util.as_tensor(self._reflection_axis))
        return concat((s, [s[-1]]), 0)

    def _assert_non_singular(self):
        return no_op(name="assert_non_singular")

    def _assert_positive_definite(self):
        raise InvalidArgumentError(None, None, "Householder operators are always "
                                               "non-positive definite.")

    def _assert_self_adjoint(self):
        return no_op(name="assert_self_adjoint")

    def _linop_adjoint(self):
        return self

    def _linop_inverse(self):
        return self

    def _unit_axis(self):
        v = util.as_tensor(self.reflection_axis)
        if not v.dtype.is_complex:
            return l2_normalize(v, axis=-1)
        # tf.math.l2_normalize of a complex vector: v / max(|v|^2, 1e-12)^(1/2)
        square_sum = reduce_sum(real(v * conj(v)), axis=-1, keepdims=True)
        inv_norm = rsqrt(maximum(square_sum, 1e-12))
        return v * cast(inv_norm, v.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = util.adjoint_if(x, adjoint_arg)
        v = self._unit_axis()[..., None]
        return x - 2 * v * base.matmul(v, x, adjoint_a=True)

    def _trace(self):
        s = self.shape_tensor()
        n = cast(self._domain_dimension_tensor(shape=s) - 2, self.dtype)
        return n * ones(shape=self._batch_shape_tensor(shape=s), dtype=self.dtype)

    def _determinant(self):
        return -ones(shape=self.batch_shape_tensor(), dtype=self.dtype)

    def _log_abs_determinant(self):
        return ones_like_batch(self, 0.0)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint, adjoint_arg)

    def _to_dense(self):
        v = self._unit_axis()[..., None]
        matrix = -2 * base.matmul(v, v, adjoint_b=True)
        return matrix_set_diag(matrix, 1.0 + matrix_diag_part(matrix))

    def _diag_part(self):
        v = self._unit_axis()
        return 1.0 - 2 * v * _conj(v)

    def _eigvals(self):
        s = shape(util.as_tensor(self.reflection_axis))
        n = s[-1]
        rest = ones(shape=concat([s[:-1], [n - 1]], axis=-1), dtype=self.dtype)
        first = -ones(shape=concat([s[:-1], [1]], axis=-1), dtype=self.dtype)
        return concat([first, rest], axis=-1)

    def _cond(self):
        return ones_like_batch(self, 1.0)

    @property
    def _composite_tensor_fields(self):
        return ("reflection_axis",)

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"reflection_axis": 1}

"""`tf.linalg.LinearOperatorLowRankUpdate`: A = L + U D V^H for an operator L, U and V
[batch] N x K matrices and D a K x K diagonal (the identity when not given; V = U when not
given). Solves and determinants go through the K x K capacitance matrix
C = D^{-1} + V^H L^{-1} U (Woodbury and the matrix determinant lemma), never through an
N x N matrix: O(N K^2) on top of L's own cost."""

from __future__ import annotations

from ndflow.core import tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.dimension import Dimension, dimension_value
from ndflow.core.shapes import broadcast_shapes
from ndflow.ops.arithmetic import log
from ndflow.ops.array_core import expand_dims, shape
from ndflow.ops.array_misc import broadcast_dynamic_shape
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.complex_ops import conj
from ndflow.ops.linalg_decomp import cholesky as tf_cholesky
from ndflow.ops.linalg_decomp import cholesky_solve, matrix_determinant
from ndflow.ops.linalg_diag import matrix_diag_part
from ndflow.ops.linear_operator import base, util
from ndflow.ops.linear_operator.diag import LinearOperatorDiag
from ndflow.ops.linear_operator.identity import LinearOperatorIdentity
from ndflow.ops.math import abs as math_abs
from ndflow.ops.math import exp
from ndflow.ops.reduction import reduce_sum

__all__ = ["LinearOperatorLowRankUpdate"]


@tf_export("linalg.LinearOperatorLowRankUpdate")
@base.register("LowRankUpdate")
class LinearOperatorLowRankUpdate(base.LinearOperator):
    """`base_operator + u @ diag(diag_update) @ v^H`. With L self-adjoint positive definite,
    V = U and a positive diagonal, the operator is too, and the capacitance is solved by
    Cholesky."""

    def __init__(self, base_operator, u, diag_update=None, v=None,
                 is_diag_update_positive=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowRankUpdate"):
        parameters = base.constructor_parameters(locals())
        dtype = base_operator.dtype
        if diag_update is not None and is_diag_update_positive and dtype.is_complex:
            tf_logging.warning("Note: setting is_diag_update_positive with a complex dtype "
                               "means that diagonal is real and positive.")
        if diag_update is None:
            if is_diag_update_positive is False:
                raise ValueError("Default diagonal is the identity, which is positive.  "
                                 "However, user set 'is_diag_update_positive' to False.")
            is_diag_update_positive = True
        self._use_cholesky = bool(base_operator.is_positive_definite and
                                  base_operator.is_self_adjoint and
                                  is_diag_update_positive and v is None)
        if base_operator.is_self_adjoint and v is None and not dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A = L + UDU^H, with L self-adjoint and D real diagonal.  "
                                 "Since UDU^H is self-adjoint, this must be a self-adjoint "
                                 "operator.")
            is_self_adjoint = True
        if self._use_cholesky:
            if is_positive_definite is False or is_self_adjoint is False or \
                    is_non_singular is False:
                raise ValueError("Arguments imply this is self-adjoint positive-definite "
                                 "operator.")
            is_positive_definite = True
            is_self_adjoint = True
        self._u = util.convert_nonref_to_tensor(u, name="u")
        self._v = self._u if v is None else util.convert_nonref_to_tensor(v, name="v")
        self._diag_update = None if diag_update is None else \
            util.convert_nonref_to_tensor(diag_update, name="diag_update")
        self._base_operator = base_operator
        self._init_from_parameters(dtype, parameters, is_self_adjoint=is_self_adjoint,
                                   is_positive_definite=is_positive_definite)
        if self._diag_update is not None:
            self._diag_operator = LinearOperatorDiag(
                self._diag_update, is_positive_definite=is_diag_update_positive)
        else:
            r = dimension_value(self._u.shape[-1])
            self._diag_operator = LinearOperatorIdentity(
                num_rows=r if r is not None else shape(util.as_tensor(self._u))[-1],
                dtype=self.dtype)
        self._is_diag_update_positive = is_diag_update_positive
        self._check_shapes()

    def _check_shapes(self):
        uv = broadcast_shapes(self._u.shape, self._v.shape)
        batch = broadcast_shapes(self.base_operator.batch_shape, uv[:-2])
        Dimension(self.base_operator.domain_dimension).assert_is_compatible_with(uv[-2])
        if self._diag_update is not None:
            Dimension(uv[-1]).assert_is_compatible_with(self._diag_update.shape[-1])
            broadcast_shapes(batch, self._diag_update.shape[:-1])

    @property
    def u(self):
        return self._u

    @property
    def v(self):
        return self._v

    @property
    def is_diag_update_positive(self):
        return self._is_diag_update_positive

    @property
    def diag_update(self):
        return self._diag_update

    @property
    def diag_operator(self):
        return self._diag_operator

    @property
    def base_operator(self):
        return self._base_operator

    def _assert_self_adjoint(self):
        if self.u is self.v and self.diag_update is None:
            return self.base_operator.assert_self_adjoint()
        return super()._assert_self_adjoint()

    def _shape(self):
        batch = broadcast_shapes(self.base_operator.batch_shape,
                                 self.diag_operator.batch_shape)
        batch = broadcast_shapes(batch, self._u.shape[:-2])
        batch = broadcast_shapes(batch, self._v.shape[:-2])
        return batch.concatenate(self.base_operator.shape[-2:])

    def _shape_tensor(self):
        batch = broadcast_dynamic_shape(self.base_operator.batch_shape_tensor(),
                                        self.diag_operator.batch_shape_tensor())
        batch = broadcast_dynamic_shape(batch, shape(util.as_tensor(self._u))[:-2])
        batch = broadcast_dynamic_shape(batch, shape(util.as_tensor(self._v))[:-2])
        return concat([batch, self.base_operator.shape_tensor()[-2:]], axis=0)

    def _uv(self):
        u = util.as_tensor(self._u)
        return u, (u if self._v is self._u else util.as_tensor(self._v))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        u, v = self._uv()
        if adjoint:   # A^H = L^H + V D^H U^H
            u, v = v, u
        leading = self.base_operator.matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        vh_x = base.matmul(v, x, adjoint_a=True, adjoint_b=adjoint_arg)
        d_vh_x = self.diag_operator.matmul(vh_x, adjoint=adjoint)
        return leading + base.matmul(u, d_vh_x)

    def _capacitance(self, u, v, adjoint=False):
        """C = D^{-1} + V^H L^{-1} U (or, with `adjoint`, its counterpart for A^H:
        D^{-H} + U^H L^{-H} V)."""
        if adjoint:
            u, v = v, u
        linv_u = self.base_operator.solve(u, adjoint=adjoint)
        vh_linv_u = base.matmul(v, linv_u, adjoint_a=True)
        d_inv = self.diag_operator.inverse()
        if adjoint:
            d_inv = d_inv.adjoint()
        return d_inv.add_to_tensor(vh_linv_u)

    def _determinant(self):
        if self.is_positive_definite:
            return exp(self.log_abs_determinant())
        u, v = self._uv()
        det_c = matrix_determinant(self._capacitance(u, v))
        return det_c * self.diag_operator.determinant() * self.base_operator.determinant()

    def _diag_part(self):
        u, v = self._uv()
        product = u * conj(v) if v.dtype.is_complex else u * v
        if self.diag_update is not None:
            product = product * expand_dims(util.as_tensor(self.diag_update), -2)
        return reduce_sum(product, axis=-1) + self.base_operator.diag_part()

    def _log_abs_determinant(self):
        u, v = self._uv()
        lad_d = self.diag_operator.log_abs_determinant()
        lad_l = self.base_operator.log_abs_determinant()
        capacitance = self._capacitance(u, v)
        if self._use_cholesky:
            chol_diag = matrix_diag_part(tf_cholesky(capacitance))
            lad_c = 2 * reduce_sum(log(chol_diag), axis=[-1])
        else:
            lad_c = log(math_abs(matrix_determinant(capacitance)))
            if self.dtype.is_complex:
                lad_c = cast(lad_c, self.dtype)
        return lad_c + lad_d + lad_l

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        """Woodbury: A^{-1} = L^{-1} - L^{-1} U C^{-1} V^H L^{-1} (U and V swapped, and L^H,
        D^H for the adjoint)."""
        if self.base_operator.is_non_singular is False:
            raise ValueError("Solve not implemented unless this is a perturbation of a "
                             "non-singular LinearOperator.")
        l_op = self.base_operator
        u, v = self._uv()
        capacitance = self._capacitance(u, v, adjoint=adjoint)
        if adjoint:
            u, v = v, u
        linv_rhs = l_op.solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        vh_linv_rhs = base.matmul(v, linv_rhs, adjoint_a=True)
        if self._use_cholesky:
            cap_inv = cholesky_solve(tf_cholesky(capacitance), vh_linv_rhs)
        else:
            cap_inv = util.matrix_solve_with_broadcast(capacitance, vh_linv_rhs)
        return linv_rhs - l_op.solve(base.matmul(u, cap_inv), adjoint=adjoint)

    @property
    def _composite_tensor_fields(self):
        return ("base_operator", "u", "diag_update", "v", "is_diag_update_positive")

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"base_operator": 0, "u": 2, "diag_update": 1, "v": 2}

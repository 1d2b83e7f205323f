"""`tf.linalg.LinearOperatorAdjoint` (A^H of an operator, acting through its adjoint
methods) and `tf.linalg.LinearOperatorInversion` (A^{-1}: matmul is A's solve, solve A's
matmul)."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.ops.array_slicing import concat
from ndflow.ops.complex_ops import conj
from ndflow.ops.linalg_diag import adjoint as matrix_adjoint
from ndflow.ops.linear_operator import base, util

__all__ = ["LinearOperatorAdjoint", "LinearOperatorInversion"]


def _combined_hints(operator, provided: dict, relation: str) -> dict:
    """The operator's hints merged with the provided ones (the constructor's `parameters`; a
    contradiction raises)."""
    out = {}
    for hint, word in (("is_square", "square"), ("is_non_singular", "non-singular"),
                       ("is_self_adjoint", "self-adjoint"),
                       ("is_positive_definite", "positive-definite")):
        out[hint] = util.use_operator_or_provided_hint_unless_contradicting(
            operator, hint, provided[hint],
            f"An operator is {word} if and only if its {relation} is {word}.")
    return out


class _OperatorOf(base.LinearOperator):
    """An operator defined by one other operator (`operator`), whose asserts it asks."""

    @property
    def operator(self):
        return self._operator

    def _assert_non_singular(self):
        return self.operator.assert_non_singular()

    def _assert_positive_definite(self):
        return self.operator.assert_positive_definite()

    def _assert_self_adjoint(self):
        return self.operator.assert_self_adjoint()

    def _cond(self):
        return self.operator.cond()

    @property
    def _composite_tensor_fields(self):
        return ("operator",)

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"operator": 0}


@tf_export("linalg.LinearOperatorAdjoint")
@base.register("Adjoint")
class LinearOperatorAdjoint(_OperatorOf):
    """The adjoint (conjugate transpose) of `operator`."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        parameters = base.constructor_parameters(locals())
        self._operator = operator
        hints = _combined_hints(operator, parameters, "adjoint")
        super().__init__(dtype=operator.dtype, parameters=parameters,
                         name=operator.name + "_adjoint" if name is None else name, **hints)

    def _linop_adjoint(self):
        return self.operator

    def _shape(self):
        s = self.operator.shape
        if s.rank is None:
            return s
        return s[:-2].concatenate([s[-1], s[-2]])

    def _shape_tensor(self):
        s = self.operator.shape_tensor()
        return concat([s[:-2], [s[-1], s[-2]]], axis=-1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self.operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False):
        return self.operator.matvec(x, adjoint=not adjoint)

    def _determinant(self):
        if self.is_self_adjoint:
            return self.operator.determinant()
        return conj(self.operator.determinant())

    def _log_abs_determinant(self):
        return self.operator.log_abs_determinant()

    def _trace(self):
        if self.is_self_adjoint:
            return self.operator.trace()
        return conj(self.operator.trace())

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self.operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs, adjoint=False):
        return self.operator.solvevec(rhs, adjoint=not adjoint)

    def _to_dense(self):
        if self.is_self_adjoint:
            return self.operator.to_dense()
        return matrix_adjoint(self.operator.to_dense())

    def _add_to_tensor(self, x):
        return self.to_dense() + x

    def _eigvals(self):
        eigvals = self.operator.eigvals()
        if not self.operator.is_self_adjoint:
            eigvals = conj(eigvals)
        return eigvals



@tf_export("linalg.LinearOperatorInversion")
@base.register("Inversion")
class LinearOperatorInversion(_OperatorOf):
    """The inverse of a square, non-singular `operator`."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        parameters = base.constructor_parameters(locals())
        self._operator = operator
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(
                f"Argument `is_non_singular` or argument `operator` must have supplied hint "
                f"`is_non_singular` equal to `True` or `None`. Found "
                f"`operator.is_non_singular`: {operator.is_non_singular}, "
                f"`is_non_singular`: {is_non_singular}.")
        if operator.is_square is False or is_square is False:
            raise ValueError(
                f"Argument `is_square` or argument `operator` must have supplied hint "
                f"`is_square` equal to `True` or `None`. Found `operator.is_square`: "
                f"{operator.is_square}, `is_square`: {is_square}.")
        hints = _combined_hints(operator, parameters, "inverse")
        super().__init__(dtype=operator.dtype, parameters=parameters,
                         name=operator.name + "_inv" if name is None else name, **hints)

    def _linop_inverse(self):
        return self.operator

    def _linop_solve(self, left, right):
        # (A^{-1})^{-1} B = A B.  TF takes `left.operator`, which is this operator itself
        # when `left` is its adjoint; the same is done here.
        return left.operator.matmul(right)

    def _shape(self):
        return self.operator.shape

    def _shape_tensor(self):
        return self.operator.shape_tensor()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self.operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return 1.0 / self.operator.determinant()

    def _log_abs_determinant(self):
        return -1.0 * self.operator.log_abs_determinant()

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self.operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _eigvals(self):
        return 1.0 / self.operator.eigvals()

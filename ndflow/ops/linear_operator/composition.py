"""`tf.linalg.LinearOperatorComposition`: the product A1 A2 ... An of operators, applied
right to left (solved left to right); also what `A @ B` of two operators gives by default."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.dimension import dimension_value
from ndflow.core.shapes import TensorShape, broadcast_shapes
from ndflow.ops import check_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, group, stack
from ndflow.ops.array_misc import broadcast_dynamic_shape
from ndflow.ops.array_slicing import concat
from ndflow.ops.linalg_decomp import cholesky as tf_cholesky
from ndflow.ops.linear_operator import base, util
from ndflow.ops.linear_operator.full_matrix import LinearOperatorLowerTriangular
from ndflow.ops.math import sign

__all__ = ["LinearOperatorComposition"]


def _same_dtype_message(names) -> str:
    return "Expected all operators to have the same dtype.  Found " + "   ".join(names)


def checked_operators(operators,
                      empty_message: str = "Expected a non-empty list of operators. Found: {}",
                      dtype_message=_same_dtype_message):
    """(the operators as a non-empty list, their one dtype), by TF's checks: `empty_message`
    formats the list; `dtype_message(names)` is the message of differing dtypes (defaults:
    the words of TF's composition and block diagonal)."""
    check_ops.assert_proper_iterable(operators)
    operators = list(operators)
    if not operators:
        raise ValueError(empty_message.format(operators))
    dtype = operators[0].dtype
    for operator in operators:
        if operator.dtype != dtype:
            raise TypeError(dtype_message([str((o.name, o.dtype)) for o in operators]))
    return operators, dtype


_HINT_WORDS = (("is_non_singular", "non-singular"), ("is_self_adjoint", "self-adjoint"),
               ("is_positive_definite", "positive definite"))


def all_hints(operators, message: str, parameters: dict, words=_HINT_WORDS) -> dict:
    """The non-singular, self-adjoint and positive-definite hints given in the constructor's
    `parameters`, each set True when every operator has it (a False hint then raises
    `message`, formatted with the property's `what` word, the `hint`'s name and its
    `value`)."""
    out = {}
    for hint, what in words:
        value = parameters[hint]
        if all(getattr(o, hint) for o in operators):
            if value is False:
                raise ValueError(message.format(what=what, hint=hint, value=value))
            value = True
        out[hint] = value
    return out


class OperatorsOperator(base.LinearOperator):
    """An operator made of the list `operators` (a composition, Kronecker product, block
    diagonal or block lower-triangular operator), which is what rebuilds it."""

    @property
    def operators(self):
        return self._operators

    @property
    def _composite_tensor_fields(self):
        return ("operators",)

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"operators": [0] * len(self.operators)}


class FactorwiseOperator(OperatorsOperator):
    """An operator whose adjoint, inverse and Cholesky factor are made of its operators' (a
    Kronecker product, a block diagonal)."""

    def _linop_adjoint(self):
        return map_operators(self, "adjoint")

    def _linop_cholesky(self):
        return map_operators(self, "cholesky", cholesky=True)

    def _linop_inverse(self):
        return map_operators(self, "inverse")


def batch_shape_of(operators) -> TensorShape:
    batch = operators[0].batch_shape
    for operator in operators[1:]:
        batch = broadcast_shapes(batch, operator.batch_shape)
    return batch


def batch_shape_tensor_of(operators):
    batch = operators[0].batch_shape_tensor()
    for operator in operators[1:]:
        batch = broadcast_dynamic_shape(batch, operator.batch_shape_tensor())
    return batch


def product(values):
    """values[0] * values[1] * ... (tensors of broadcastable shapes)."""
    result = values[0]
    for v in values[1:]:
        result = result * v
    return result


def total(values):
    """values[0] + values[1] + ..."""
    result = values[0]
    for v in values[1:]:
        result = result + v
    return result


def map_operators(op, method: str, cholesky: bool = False):
    """An operator of `op`'s class made of `getattr(factor, method)()` of each of its
    `operators` (a block diagonal's or Kronecker product's adjoint, inverse, Cholesky
    factor), with TF's hints for it."""
    factors = [getattr(o, method)() for o in op.operators]
    if cholesky:
        return type(op)(operators=factors, is_non_singular=True, is_self_adjoint=None,
                        is_square=True)
    return type(op)(operators=factors, is_non_singular=op.is_non_singular,
                    is_self_adjoint=op.is_self_adjoint,
                    is_positive_definite=op.is_positive_definite, is_square=True)


def _must_be_self_adjoint(operators) -> bool:
    if len(operators) == 1 and operators[0].is_self_adjoint:
        return True
    return util.is_aat_form(operators)


@tf_export("linalg.LinearOperatorComposition")
@base.register("Composition")
class LinearOperatorComposition(OperatorsOperator):
    """`A1 @ A2 @ ... @ An` for operators of compatible shapes (batch shapes broadcast)."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        parameters = base.constructor_parameters(locals())
        operators, dtype = checked_operators(operators)
        self._operators = operators
        if all(o.is_non_singular for o in operators):
            if is_non_singular is False:
                raise ValueError("The composition of non-singular operators is always "
                                 "non-singular.")
            is_non_singular = True
        if _must_be_self_adjoint(operators):
            if is_self_adjoint is False:
                raise ValueError("The composition was determined to be self-adjoint but user "
                                 "provided incorrect `False` hint.")
            is_self_adjoint = True
        aat = util.is_aat_form(operators)
        if aat:
            if is_square is False:
                raise ValueError("The composition was determined have the form A @ A.H, "
                                 "hence it must be square. The user provided an incorrect "
                                 "`False` hint.")
            is_square = True
        if aat and is_non_singular:
            if is_positive_definite is False:
                raise ValueError("The composition was determined to be non-singular and have "
                                 "the form A @ A.H, hence it must be positive-definite. The "
                                 "user provided an incorrect `False` hint.")
            is_positive_definite = True
        if name is None:
            name = "_o_".join(o.name for o in operators)
        self._init_from_parameters(dtype, parameters, is_non_singular=is_non_singular,
                                   is_self_adjoint=is_self_adjoint,
                                   is_positive_definite=is_positive_definite, is_square=is_square,
                                   name=name)

    def _shape(self):
        domain = self.operators[0].domain_dimension
        for operator in self.operators[1:]:
            domain.assert_is_compatible_with(operator.range_dimension)
            domain = operator.domain_dimension
        matrix_shape = TensorShape([dimension_value(self.operators[0].range_dimension),
                                    dimension_value(self.operators[-1].domain_dimension)])
        return batch_shape_of(self.operators).concatenate(matrix_shape)

    def _shape_tensor(self):
        if self.shape.is_fully_defined():
            return convert_to_tensor(self.shape.as_list(), dtype=dtypes.int32, name="shape")
        matrix_shape = stack([self.operators[0].range_dimension_tensor(),
                              self.operators[-1].domain_dimension_tensor()])
        return concat((batch_shape_tensor_of(self.operators), matrix_shape), 0)

    def _linop_cholesky(self):
        ops = self.operators
        llt = len(ops) == 2 and util.is_aat_form(ops) and \
            isinstance(ops[0], LinearOperatorLowerTriangular)
        if not llt:
            return LinearOperatorLowerTriangular(tf_cholesky(self.to_dense()),
                                                 is_non_singular=True, is_self_adjoint=False,
                                                 is_square=True)
        left = ops[0]
        if left.is_positive_definite:
            return left
        diag_sign = expand_dims(sign(left.diag_part()), axis=-2)
        return LinearOperatorLowerTriangular(
            tril=left.tril / diag_sign, is_non_singular=left.is_non_singular,
            is_self_adjoint=left.is_self_adjoint,
            is_positive_definite=True if left.is_positive_definite else None, is_square=True)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        order = self.operators if adjoint else list(reversed(self.operators))
        result = order[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for operator in order[1:]:
            result = operator.matmul(result, adjoint=adjoint)
        return result

    def _determinant(self):
        return product([o.determinant() for o in self.operators])

    def _log_abs_determinant(self):
        return total([o.log_abs_determinant() for o in self.operators])

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        order = list(reversed(self.operators)) if adjoint else self.operators
        solution = order[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for operator in order[1:]:
            solution = operator.solve(solution, adjoint=adjoint)
        return solution

    def _assert_non_singular(self):
        if all(o.is_square for o in self.operators):
            return group([o.assert_non_singular() for o in self.operators])
        return super()._assert_non_singular()

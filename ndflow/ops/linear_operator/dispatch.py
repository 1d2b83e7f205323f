"""The `tf.linalg` functions that accept operators, as TF's `linear_operator.py` registers
them (`dispatch_for_types`): `tf.linalg.matmul(op, x)` (either side an operator),
`solve`, `adjoint`, `cholesky`, `diag_part`, `det`, `inv`, `logdet` and `trace` call the
operator's methods; and `tensor @ op`, which TF's dispatching matmul also takes."""

from __future__ import annotations

from ndflow.core.tensor import OPERATORS
from ndflow.ops.api_dispatch import dispatch_for_types
from ndflow.ops.linalg import matmul
from ndflow.ops.linalg_decomp import (
    cholesky,
    logdet,
    matrix_determinant,
    matrix_inverse,
    matrix_solve,
)
from ndflow.ops.linalg_diag import adjoint, matrix_diag_part, trace
from ndflow.ops.linear_operator.base import LinearOperator


@dispatch_for_types(adjoint, LinearOperator)
def _adjoint(matrix, name=None):
    return matrix.adjoint(name)


@dispatch_for_types(cholesky, LinearOperator)
def _cholesky(input, name=None):  # noqa: A002 - TF's parameter name
    return input.cholesky(name)


@dispatch_for_types(matrix_diag_part, LinearOperator)
def _diag_part(input, name="diag_part", k=0, padding_value=0,  # noqa: A002
               align="RIGHT_LEFT"):
    return input.diag_part(name)


@dispatch_for_types(matrix_determinant, LinearOperator)
def _det(input, name=None):  # noqa: A002
    return input.determinant(name)


@dispatch_for_types(matrix_inverse, LinearOperator)
def _inverse(input, adjoint=False, name=None):  # noqa: A002
    inv = input.inverse(name)
    return inv.adjoint() if adjoint else inv


@dispatch_for_types(logdet, LinearOperator)
def _logdet(matrix, name=None):
    if matrix.is_positive_definite and matrix.is_self_adjoint:
        return matrix.log_abs_determinant(name)
    raise ValueError("Expected matrix to be self-adjoint positive definite.")


@dispatch_for_types(matmul, LinearOperator)
def _matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
            a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False,
            grad_b=False, name=None):
    if transpose_a or transpose_b:
        raise ValueError("Transposing not supported at this time.")
    if a_is_sparse or b_is_sparse:
        raise ValueError("Sparse methods not supported at this time.")
    if not isinstance(a, LinearOperator):   # a @ B = (B^H a^H)^H
        return adjoint(b.matmul(a, adjoint=not adjoint_b, adjoint_arg=not adjoint_a,
                                name=name))
    return a.matmul(b, adjoint=adjoint_a, adjoint_arg=adjoint_b, name=name)


@dispatch_for_types(matrix_solve, LinearOperator)
def _solve(matrix, rhs, adjoint=False, name=None):
    if not isinstance(matrix, LinearOperator):
        raise ValueError("Passing in `matrix` as a Tensor and `rhs` as a LinearOperator is "
                         "not supported.")
    return matrix.solve(rhs, adjoint=adjoint, name=name)


@dispatch_for_types(trace, LinearOperator)
def _trace(x, name=None):
    return x.trace(name)


_TENSOR_MATMUL = OPERATORS["matmul"]


def _tensor_at(x, y):
    """`x @ y` for a tensor (or variable) x: an operator y goes through tf.linalg.matmul's
    dispatch, anything else is a plain MatMul."""
    if isinstance(y, LinearOperator):
        return _matmul(x, y)
    return _TENSOR_MATMUL(x, y)


OPERATORS["matmul"] = _tensor_at

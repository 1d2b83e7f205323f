"""`tf.linalg.eigh_tridiagonal`: eigenvalues (and eigenvectors) of the Hermitian tridiagonal
matrix with diagonal `alpha` [n] and superdiagonal `beta` [n - 1] (the subdiagonal conj(beta);
the imaginary part of a complex alpha is ignored for the eigenvalues), all of them
(select='a'), those in (lo, hi] ('v') or those of indices lo..hi ('i').

TF's function is a Python composite (bisection with Sturm counts in a while loop, inverse
iteration with TridiagonalSolve and Qr); here it is one op, `_EighTridiagonal`, whose kernel
(kernels/eigh_tridiagonal.py) runs the same arithmetic in numba loops. The Python checks are
TF's: n = alpha.shape[0] must be static and n <= 1 returns real(alpha) itself (one tensor,
even with eigvals_only=False); alpha and beta of one type (ValueError); float16, float32,
float64, complex64 or complex128 (another: ValueError "data type ... not inexact"); select in
{'a', 'i', 'v'} (ValueError). The kernel raises TF's InvalidArgumentErrors: an empty
select_range ("Got empty index range" / "Got empty interval"), eigenvectors of no eigenvalue,
beta not of length n - 1.

Gradients: TF's composite differentiates its bisection, which gives the derivative of the
starting Gershgorin bounds instead of the eigenvalues' (its gradient of sum(eigvals) with
respect to alpha is 2 at the ends of the Gershgorin interval, 0 elsewhere). ndflow gives the
derivative: d(lambda_i) = v_i^H dT v_i (alpha: |v_i|^2, beta: 2 v_i[k] conj(v_i[k+1])), and for
the eigenvectors the first-order perturbation sum over the whole spectrum (a dense eigh of T in
the gradient, O(n^3); a repeated eigenvalue gives inf, as tf.linalg.eigh's gradient).
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops import array_core
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import add, multiply, select_v2, subtract, truediv
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.array_gather import one_hot
from ndflow.ops.cast import cast
from ndflow.ops.complex_ops import conj, real
from ndflow.ops.linalg import matmul
from ndflow.ops.linalg_decomp import self_adjoint_eig
from ndflow.ops.linalg_diag import matrix_diag, matrix_diag_part
from ndflow.ops.math import abs as abs_
from ndflow.ops.op_def import op_def
from ndflow.ops.reduction import argmin, reduce_sum

_SELECTS = ("a", "i", "v")
_SOLVE_TYPES = "double, float, complex64, complex128"


def _shape(ctx):
    alpha = ctx.shapes[0]
    n = alpha[0] if alpha.rank == 1 else None
    select = ctx.attrs["select"]
    k = None
    if select == "a":
        k = n
    elif select == "i":
        bounds = ctx.value(2)
        if bounds is not None and bounds.shape == (2,):
            k = max(int(bounds[1]) - int(bounds[0]) + 1, 0)
    values = TensorShape([k])
    vectors = TensorShape([0]) if ctx.attrs["eigvals_only"] else TensorShape([n, k])
    return [values, vectors]


EighTridiagonal = op_def(
    "_EighTridiagonal",
    inputs=["alpha: T", "beta: T", "select_range: Trange", "tol: Treal"],
    outputs=["eigvals: Treal", "eigvectors: T"],
    attrs=["T: {half, float, double, complex64, complex128}", "Treal: {half, float, double}",
           "Trange: {int32, int64, half, float, double}", "select: {'a', 'i', 'v'} = 'a'",
           "eigvals_only: bool = true"],
    shape=_shape)


def _no_half_solve(dtype) -> Exception:
    """TF's error where its inverse iteration calls TridiagonalSolve on float16."""
    if context.executing_eagerly():
        return InvalidArgumentError(None, None, (
            f"Value for attr 'T' of {dtype.name if dtype.name != 'float16' else 'half'} is not "
            f"in the list of allowed values: {_SOLVE_TYPES}\n\t; NodeDef: {{{{node "
            f"TridiagonalSolve}}}}; Op<name=TridiagonalSolve; signature=diagonals:T, rhs:T -> "
            f"output:T> [Op:TridiagonalSolve] name: "))
    return TypeError(f"Value passed to parameter 'diagonals' has DataType {dtype.name} not in "
                     f"list of allowed values: {_SOLVE_TYPES}")


def _check_shapes(alpha, beta, n) -> None:
    """A rank-1 beta of n - 1 values (TF's composite fails on a sum of mismatched shapes)."""
    m = beta.shape[0] if beta.shape.rank == 1 else None
    if alpha.shape.rank == 1 and beta.shape.rank in (None, 1) and m in (None, n - 1):
        return
    got = beta.shape.as_list() if beta.shape.rank is not None else "?"
    if context.executing_eagerly():
        raise InvalidArgumentError(None, None, f"Incompatible shapes: {alpha.shape.as_list()} "
                                               f"vs. {got} (beta must be [{n - 1}])")
    raise ValueError(f"Dimensions must be equal: alpha {alpha.shape.as_list()}, beta {got} "
                     f"(beta must be [{n - 1}])")


@tf_export("linalg.eigh_tridiagonal")
def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None, tol=None,
                     name=None):
    """`tf.linalg.eigh_tridiagonal`: the eigenvalues (ascending) of the Hermitian tridiagonal
    matrix, and its eigenvectors (columns) with eigvals_only=False."""
    with name_scope(name or "eigh_tridiagonal"):
        alpha = convert_to_tensor(alpha, name="alpha")
        if alpha.shape.rank == 0:
            raise IndexError("tuple index out of range")
        n = alpha.shape[0] if alpha.shape.rank is not None else None
        if n <= 1:
            return real(alpha)
        beta = convert_to_tensor(beta, name="beta")
        if alpha.dtype != beta.dtype:
            raise ValueError("'alpha' and 'beta' must have the same type.")
        real_dtype = alpha.dtype.real_dtype
        if real_dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
            kind = alpha.dtype.as_numpy_dtype
            raise ValueError(f"data type {kind} not inexact")
        if select not in _SELECTS:
            raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
        _check_shapes(alpha, beta, n)
        if select == "a":
            bounds = convert_to_tensor([0, 0], dtype=dtypes.int32)
        elif select == "i":
            bounds = convert_to_tensor([select_range[0], select_range[1]],
                                       dtype_hint=dtypes.int32)
        else:
            bounds = convert_to_tensor([select_range[0], select_range[1]], dtype=real_dtype)
        tol = convert_to_tensor(tol if tol is not None and bool(tol) else 0, dtype=real_dtype)
        if not eigvals_only and real_dtype is dtypes.float16:
            # TF computes the eigenvalues, then its TridiagonalSolve refuses half
            raise _no_half_solve(real_dtype)
        e, v = apply_op(EighTridiagonal, [alpha, beta, bounds, tol],
                        {"Treal": real_dtype, "select": select,
                         "eigvals_only": bool(eigvals_only)}).outputs
        return e if eigvals_only else (e, v)


def _dense(alpha, beta):
    """The tridiagonal matrix (real diagonal, superdiagonal beta, subdiagonal conj(beta))."""
    main = cast(real(alpha), alpha.dtype) if alpha.dtype.is_complex else alpha
    return add(matrix_diag(main), add(matrix_diag(beta, k=1), matrix_diag(conj(beta), k=-1)))


@EighTridiagonal.def_grad
def _eigh_tridiagonal_grad(op, grad_e, grad_v):
    alpha, beta = op.inputs[0], op.inputs[1]
    dtype = alpha.dtype
    e = op.outputs[0]
    if op.get_attr("eigvals_only"):
        grad_v = None
        v = apply_op(EighTridiagonal, list(op.inputs),
                     {"Treal": e.dtype, "select": op.get_attr("select"),
                      "eigvals_only": False}).outputs[1]
    else:
        v = op.outputs[1]
    grad_alpha = grad_beta = None
    if grad_e is not None:       # d(lambda_i) = v_i^H dT v_i
        weights = array_core.expand_dims(cast(grad_e, dtype), 0)
        grad_alpha = real(reduce_sum(multiply(multiply(v, conj(v)), weights), axis=1))
        grad_beta = multiply(2.0, reduce_sum(multiply(multiply(v[:-1], conj(v[1:])), weights),
                                             axis=1))
    if grad_v is not None:       # dv_i = sum_(j != i) w_j w_j^H dT v_i / (lambda_i - mu_j)
        mu, w = self_adjoint_eig(_dense(alpha, beta))
        mu = real(mu)              # eigh's eigenvalues of a complex matrix are complex
        diff = subtract(array_core.expand_dims(e, 0), array_core.expand_dims(mu, 1))
        own = one_hot(argmin(abs_(diff), axis=0), array_core.shape(mu)[0], axis=0,
                      on_value=True, off_value=False)
        f = select_v2(own, zeros_like(diff), truediv(1.0, diff))
        u = matmul(w, multiply(cast(f, dtype), matmul(w, grad_v, adjoint_a=True)))
        g = matmul(u, v, adjoint_b=True)
        ga = real(matrix_diag_part(g))
        gb = add(matrix_diag_part(g, k=1), conj(matrix_diag_part(g, k=-1)))
        grad_alpha = ga if grad_alpha is None else add(grad_alpha, ga)
        grad_beta = gb if grad_beta is None else add(grad_beta, gb)
    if grad_alpha is not None and dtype.is_complex:
        grad_alpha = cast(grad_alpha, dtype)
    return [grad_alpha, grad_beta, None, None]

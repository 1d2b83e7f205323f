"""Solvers and decompositions of batched matrices [..., M, N]: MatrixInverse, MatrixSolve,
MatrixDeterminant, LogMatrixDeterminant, Cholesky, MatrixTriangularSolve, Qr, Svd,
SelfAdjointEigV2 and MatrixSolveLs, with TF's public functions (`tf.linalg.inv`, ...) and
the Python composites TF builds on them (`logdet`, `cholesky_solve`, `lstsq`, `eigvalsh`).

Shape functions say what TF's do (graph build: ValueError; eager: the kernel's
InvalidArgumentError wording). Gradients are in linalg_grad.py.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape, broadcast_shapes, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, linalg_decomp_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import add, log, maximum, multiply, select_v2, truediv
from ndflow.ops.array_builders import eye
from ndflow.ops.cast import cast
from ndflow.ops.comparison import greater
from ndflow.ops.complex_ops import real
from ndflow.ops.linalg import matmul
from ndflow.ops.linalg_diag import matrix_diag_part
from ndflow.ops.op_def import op_def
from ndflow.ops.reduction import reduce_max, reduce_sum

_T = "T: {double, float, half}"  # TF also takes complex64, complex128
_T_COMPLEX = "T: {double, float, half, complex64, complex128}"


def _rank2(s: TensorShape) -> None:
    if s.rank is not None and s.rank < 2:
        if context.executing_eagerly():
            raise ValueError(f"Input tensor 0 must have rank >= 2, got {s.rank}")
        raise ValueError(f"Shape must be at least rank 2 but is rank {s.rank}")


def _square(s: TensorShape, reverse: bool = False) -> TensorShape:
    """`s` as a batch of square matrices (TF's MakeBatchSquareMatrix)."""
    _rank2(s)
    if s.rank is None:
        return s
    a, b = s[-2], s[-1]
    if a is not None and b is not None and a != b:
        if context.executing_eagerly():
            raise ValueError("Input matrix must be square.")
        raise ValueError(f"Dimensions must be equal, but are {b if reverse else a} and "
                         f"{a if reverse else b}")
    n = a if a is not None else b
    return s[:-2].concatenate([n, n])


def _square_shape(ctx):
    return [_square(ctx.shapes[0])]


def _det_shape(ctx):
    s = _square(ctx.shapes[0], reverse=True)
    return [s[:-2] if s.rank is not None else TensorShape(None)]


def _log_det_shape(ctx):
    out = _det_shape(ctx)[0]
    return [out, out]


def _solve_shape(ctx, triangular: bool = False):
    """MatrixSolve (equal batch dims) and MatrixTriangularSolve (broadcast batch dims)."""
    eager = context.executing_eagerly()
    a, rhs = ctx.shapes
    if triangular and eager and a.rank is not None and a.rank >= 2 and None not in a[-2:] \
            and a[-2] != a[-1]:
        raise ValueError(f"In[0] matrices in the last dimensions must be square "
                         f"({a[-1]} =/= {a[-2]})")
    m = _square(a)
    _rank2(rhs)
    if m.rank is None or rhs.rank is None:
        return [TensorShape(None)]
    if m[-1] is not None and rhs[-2] is not None and m[-1] != rhs[-2]:
        if eager and triangular:
            raise ValueError(f"In[0] mismatch In[1] shape: {m[-1]} vs. {rhs[-2]}: {fmt(m)} "
                             f"{fmt(rhs)} {int(ctx.attrs['lower'])} "
                             f"{int(ctx.attrs['adjoint'])}")
        if eager:
            raise ValueError("Input matrix and rhs are incompatible.")
        raise ValueError(f"Dimensions must be equal, but are {m[-1]} and {rhs[-2]}")
    rows = m[-1] if m[-1] is not None else rhs[-2]
    mb, rb = m[:-2], rhs[:-2]
    if triangular:
        try:
            batch = broadcast_shapes(mb, rb)
        except ValueError:
            if eager:
                raise ValueError(f"In[0] and In[1] must have compatible batch dimensions: "
                                 f"{fmt(m)} vs. {fmt(rhs)}") from None
            d = next((x, y) for x, y in zip(mb.as_list()[::-1], rb.as_list()[::-1])
                     if x is not None and y is not None and x != y and 1 not in (x, y))
            raise ValueError(f"Dimensions must be equal, but are {d[0]} and {d[1]}") from None
        return [batch.concatenate([rows, rhs[-1]])]
    if mb.rank != rb.rank:
        raise ValueError("All input tensors must have the same rank." if eager else
                         f"Shapes must be equal rank, but are {mb.rank} and {rb.rank}")
    for i, (x, y) in enumerate(zip(mb.as_list(), rb.as_list())):
        if x is not None and y is not None and x != y:
            raise ValueError("All input tensors must have the same outer dimensions." if eager
                             else f"Dimension {i} in both shapes must be equal, but are {x} "
                             f"and {y}. Shapes are {fmt(mb)} and {fmt(rb)}.")
    return [mb.merge_with(rb).concatenate([rows, rhs[-1]])]


def _qr_shape(ctx):
    s = ctx.shapes[0]
    _rank2(s)
    if s.rank is None:
        return [TensorShape(None), TensorShape(None)]
    m, n = s[-2], s[-1]
    p = None if m is None or n is None else min(m, n)
    if ctx.attrs["full_matrices"]:
        return [s[:-2].concatenate([m, m]), s]
    return [s[:-2].concatenate([m, p]), s[:-2].concatenate([p, n])]


def _svd_shape(ctx):
    s = ctx.shapes[0]
    _rank2(s)
    if s.rank is None:
        return [TensorShape(None)] * 3
    m, n = s[-2], s[-1]
    p = None if m is None or n is None else min(m, n)
    batch = s[:-2]
    if not ctx.attrs["compute_uv"]:
        return [batch.concatenate([p]), TensorShape([0]), TensorShape([0])]
    full = ctx.attrs["full_matrices"]
    return [batch.concatenate([p]), batch.concatenate([m, m if full else p]),
            batch.concatenate([n, n if full else p])]


def _eig_shape(ctx):
    s = _square(ctx.shapes[0])
    if s.rank is None:
        return [TensorShape(None), TensorShape(None)]
    v = s if ctx.attrs["compute_v"] else TensorShape([0])
    return [s[:-1], v]


def _solve_ls_shape(ctx):
    m, rhs, l2 = ctx.shapes
    _rank2(m)
    _rank2(rhs)
    if l2.rank is not None and l2.rank != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {l2.rank}")
    if m.rank is None or rhs.rank is None:
        return [TensorShape(None)]
    if m[-2] is not None and rhs[-2] is not None and m[-2] != rhs[-2]:
        if context.executing_eagerly():
            raise ValueError("Input matrix and rhs are incompatible.")
        raise ValueError(f"Dimensions must be equal, but are {m[-2]} and {rhs[-2]}")
    return [m[:-2].merge_with(rhs[:-2]).concatenate([m[-1], rhs[-1]])]


MatrixInverse = op_def("MatrixInverse", inputs=["input: T"], outputs=["output: T"],
                       attrs=["adjoint: bool = false", _T_COMPLEX], shape=_square_shape)
MatrixSolve = op_def("MatrixSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
                     attrs=["adjoint: bool = false", _T_COMPLEX], shape=_solve_shape)
MatrixDeterminant = op_def("MatrixDeterminant", inputs=["input: T"], outputs=["output: T"],
                           attrs=[_T_COMPLEX], shape=_det_shape)
LogMatrixDeterminant = op_def(
    "LogMatrixDeterminant", inputs=["input: T"], outputs=["sign: T", "log_abs_determinant: T"],
    attrs=[_T_COMPLEX], shape=_log_det_shape)
Cholesky = op_def("Cholesky", inputs=["input: T"], outputs=["output: T"], attrs=[_T_COMPLEX],
                  shape=_square_shape)
MatrixTriangularSolve = op_def(
    "MatrixTriangularSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
    attrs=["lower: bool = true", "adjoint: bool = false",
           "T: {bfloat16, double, float, half, complex64, complex128}"],
    shape=lambda ctx: _solve_shape(ctx, triangular=True))
Qr = op_def("Qr", inputs=["input: T"], outputs=["q: T", "r: T"],
            attrs=["full_matrices: bool = false", _T_COMPLEX], shape=_qr_shape)
Svd = op_def("Svd", inputs=["input: T"], outputs=["s: T", "u: T", "v: T"],
             attrs=["compute_uv: bool = true", "full_matrices: bool = false", _T_COMPLEX],
             shape=_svd_shape)
SelfAdjointEigV2 = op_def("SelfAdjointEigV2", inputs=["input: T"], outputs=["e: T", "v: T"],
                          attrs=["compute_v: bool = true", _T_COMPLEX], shape=_eig_shape)
Eig = op_def("Eig", inputs=["input: T"], outputs=["e: Tout", "v: Tout"],
             attrs=["compute_v: bool = true", "T: {float, double, complex64, complex128}",
                    "Tout: {complex64, complex128}"], shape=_eig_shape)
MatrixSolveLs = op_def(
    "MatrixSolveLs", inputs=["matrix: T", "rhs: T", "l2_regularizer: double"],
    outputs=["output: T"], attrs=[_T, "fast: bool = true"], shape=_solve_ls_shape)


@tf_export("linalg.inv", v1=["linalg.inv", "matrix_inverse"])
def matrix_inverse(input, adjoint: bool = False, name=None) -> Tensor:  # noqa: A002
    """`tf.linalg.inv`: the inverse (or the inverse's adjoint) of each square matrix."""
    return apply_op(MatrixInverse, [input], {"adjoint": adjoint}, name=name).outputs[0]


@tf_export("linalg.solve", v1=["linalg.solve", "matrix_solve"])
def matrix_solve(matrix, rhs, adjoint: bool = False, name=None) -> Tensor:
    """`tf.linalg.solve`: X with `matrix @ X = rhs` (or `adjoint(matrix) @ X = rhs`)."""
    return apply_op(MatrixSolve, [matrix, rhs], {"adjoint": adjoint}, name=name).outputs[0]


@tf_export("linalg.det", v1=["linalg.det", "matrix_determinant"])
def matrix_determinant(input, name=None) -> Tensor:  # noqa: A002
    """`tf.linalg.det`: the determinant of each square matrix."""
    return apply_op(MatrixDeterminant, [input], name=name).outputs[0]


@tf_export("linalg.slogdet")
def log_matrix_determinant(input, name=None):  # noqa: A002
    """`tf.linalg.slogdet`: (sign, log|det|) of each square matrix."""
    return tuple(apply_op(LogMatrixDeterminant, [input], name=name).outputs)


@tf_export("linalg.logdet")
def logdet(matrix, name=None) -> Tensor:
    """`tf.linalg.logdet`: log det of Hermitian positive definite matrices (via Cholesky)."""
    with name_scope(name, "logdet"):
        chol = cholesky(matrix)
        # the diagonal of a Cholesky factor is real: a complex matrix's logdet is real
        return 2.0 * reduce_sum(log(real(matrix_diag_part(chol))), axis=[-1])


@tf_export("linalg.cholesky", v1=["linalg.cholesky", "cholesky"])
def cholesky(input, name=None) -> Tensor:  # noqa: A002
    """`tf.linalg.cholesky`: the lower-triangular L with L L^H = input (NaNs where it fails)."""
    return apply_op(Cholesky, [input], name=name).outputs[0]


@tf_export("linalg.triangular_solve", v1=["linalg.triangular_solve", "matrix_triangular_solve"])
def matrix_triangular_solve(matrix, rhs, lower: bool = True, adjoint: bool = False,
                            name=None) -> Tensor:
    """`tf.linalg.triangular_solve`: solves with the lower (or upper) triangle of `matrix`;
    batch dimensions broadcast."""
    with name_scope(name, "triangular_solve"):
        return apply_op(MatrixTriangularSolve, [matrix, rhs],
                        {"lower": lower, "adjoint": adjoint}).outputs[0]


@tf_export("linalg.cholesky_solve", v1=["linalg.cholesky_solve", "cholesky_solve"])
def cholesky_solve(chol, rhs, name=None) -> Tensor:
    """`tf.linalg.cholesky_solve`: X with A X = rhs, given A's Cholesky factor `chol`."""
    with name_scope(name, "cholesky_solve"):
        y = apply_op(MatrixTriangularSolve, [chol, rhs],
                     {"lower": True, "adjoint": False}).outputs[0]
        return apply_op(MatrixTriangularSolve, [chol, y],
                        {"lower": True, "adjoint": True}).outputs[0]


@tf_export("linalg.qr", v1=["linalg.qr", "qr"])
def qr(input, full_matrices: bool = False, name=None):  # noqa: A002
    """`tf.linalg.qr`: (q, r) with q orthonormal columns and r upper triangular."""
    return tuple(apply_op(Qr, [input], {"full_matrices": full_matrices}, name=name).outputs)


@tf_export("linalg.svd", v1=["linalg.svd", "svd"])
def svd(tensor, full_matrices: bool = False, compute_uv: bool = True, name=None):
    """`tf.linalg.svd`: (s, u, v) with tensor = u diag(s) v^H — TF's order, `v` not `v^H`;
    `s` alone when not `compute_uv`."""
    op = apply_op(Svd, [tensor], {"full_matrices": full_matrices, "compute_uv": compute_uv},
                  name=name)
    s = op.outputs[0]
    s = real(s) if s.dtype.is_complex else s  # the op's are complex, TF's function's real
    if compute_uv:
        return (s,) + tuple(op.outputs[1:])
    return s


@tf_export("linalg.eigh", v1=["linalg.eigh", "self_adjoint_eig"])
def self_adjoint_eig(tensor, name=None):
    """`tf.linalg.eigh`: (e, v), ascending eigenvalues and eigenvectors (lower triangle read)."""
    return tuple(apply_op(SelfAdjointEigV2, [tensor], {"compute_v": True}, name=name).outputs)


def _eig_out_dtype(tensor):
    return dtypes.complex64 if tensor.dtype in (dtypes.float32, dtypes.complex64) \
        else dtypes.complex128


@tf_export("linalg.eig", "eig", v1=[])
def eig(tensor, name=None) -> tuple:
    """`tf.linalg.eig`: (e, v), the complex eigenvalues and right eigenvectors (unit
    columns) of general square matrices, in no particular order."""
    tensor = convert_to_tensor(tensor)
    return tuple(apply_op(Eig, [tensor], {"compute_v": True,
                                          "Tout": _eig_out_dtype(tensor)}, name=name).outputs)


@tf_export("linalg.eigvals", "eigvals", v1=[])
def eigvals(tensor, name=None) -> Tensor:
    """`tf.linalg.eigvals`: the complex eigenvalues of general square matrices."""
    tensor = convert_to_tensor(tensor)
    return apply_op(Eig, [tensor], {"compute_v": False, "Tout": _eig_out_dtype(tensor)},
                    name=name).outputs[0]


@tf_export("linalg.eigvalsh", v1=["linalg.eigvalsh", "self_adjoint_eigvals"])
def self_adjoint_eigvals(tensor, name=None) -> Tensor:
    """`tf.linalg.eigvalsh`: the ascending eigenvalues of self-adjoint matrices."""
    return apply_op(SelfAdjointEigV2, [tensor], {"compute_v": False}, name=name).outputs[0]


def gramian_cholesky(matrix, l2_regularizer, first_kind: bool):
    """Cholesky of A^H A (first kind) or A A^H, plus l2 * I when the regularizer may be > 0."""
    gramian = matmul(matrix, matrix, adjoint_a=first_kind, adjoint_b=not first_kind)
    if isinstance(l2_regularizer, Tensor) or l2_regularizer != 0:
        n = gramian.shape[-1]
        with name_scope(None, "eye"):
            identity = eye(n, dtype=matrix.dtype)
        gramian = add(gramian, multiply(convert_to_tensor(l2_regularizer, matrix.dtype),
                                        identity))
    return cholesky(gramian)


def _io_bound(matrix) -> bool:
    """TF's heuristic: a large batch of small matrices goes to the MatrixSolveLs kernel."""
    s = matrix.shape
    if not s.is_fully_defined():
        return False
    batch = s[:-2].num_elements()
    return s.num_elements() * matrix.dtype.size > 256000 and batch > min(s[-2], s[-1])


@tf_export("linalg.lstsq", v1=["linalg.lstsq", "matrix_solve_ls"])
def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast: bool = True, name=None) -> Tensor:
    """`tf.linalg.lstsq`: least-squares solutions. With `fast` and a known matrix shape this
    is TF's composite (Cholesky of the regularized Gramian); else the MatrixSolveLs op."""
    matrix = convert_to_tensor(matrix, name="matrix")
    if matrix.dtype.name == "complex128" and l2_regularizer != 0:
        raise NotImplementedError("matrix_solve_ls is currently disabled for complex128 and "
                                  "l2_regularizer != 0 due to poor accuracy.")
    dims = matrix.shape[-2:] if matrix.shape.rank is not None else TensorShape(None)
    if not fast or not dims.is_fully_defined() or _io_bound(matrix):
        return apply_op(MatrixSolveLs, [matrix, rhs, l2_regularizer], {"fast": fast},
                        name=name).outputs[0]
    with name_scope(name, "matrix_solve_ls"):
        if dims[0] >= dims[1]:
            chol = gramian_cholesky(matrix, l2_regularizer, True)
            return cholesky_solve(chol, matmul(matrix, rhs, adjoint_a=True))
        chol = gramian_cholesky(matrix, l2_regularizer, False)
        return matmul(matrix, cholesky_solve(chol, rhs), adjoint_a=True)



def _max_rows_cols(a):
    """max(M, N), a Python int when both are static, else an int32 tensor."""
    dims = [a.shape[i] if a.shape.rank is not None else None for i in (-2, -1)]
    if None not in dims:
        return max(dims)
    s = array_core.shape(a)
    return maximum(s[-2], s[-1])


@tf_export("linalg.matrix_rank")
def matrix_rank(a, tol=None, validate_args: bool = False, name=None) -> Tensor:
    """`tf.linalg.matrix_rank`: the number of singular values above `tol` (by default
    eps * max(M, N) * the largest singular value)."""
    with name_scope(name or "matrix_rank"):
        a = convert_to_tensor(a, dtype_hint=dtypes.float32, name="a")
        s = svd(a, compute_uv=False)
        if tol is None:
            m = _max_rows_cols(a)
            eps = float(np.finfo(a.dtype.np_dtype).eps)
            tol = multiply(multiply(eps, cast(m, a.dtype)),
                           reduce_max(s, axis=-1, keepdims=True))
        return reduce_sum(cast(greater(s, tol), dtypes.int32), axis=-1)


@tf_export("linalg.pinv")
def pinv(a, rcond=None, validate_args: bool = False, name=None) -> Tensor:
    """`tf.linalg.pinv`: the Moore-Penrose pseudo-inverse via the SVD, singular values at or
    below `rcond` times the largest treated as zero."""
    with name_scope(name or "pinv"):
        a = convert_to_tensor(a, name="a")
        if rcond is None:
            m, eps = _max_rows_cols(a), float(np.finfo(a.dtype.np_dtype).eps)
            rcond = (10.0 * float(m) * eps if isinstance(m, int)
                     else multiply(10.0 * eps, cast(m, a.dtype)))
        rcond = convert_to_tensor(rcond, dtype=a.dtype, name="rcond")
        s, u, v = svd(a, full_matrices=False, compute_uv=True)
        cutoff = multiply(rcond, reduce_max(s, axis=-1))
        s = select_v2(greater(s, array_core.expand_dims(cutoff, -1)), s,
                      np.array(np.inf, a.dtype.np_dtype))
        out = matmul(truediv(v, array_core.expand_dims(s, -2)), u, adjoint_b=True)
        if a.shape.rank is not None and hasattr(out, "set_shape"):
            out.set_shape(a.shape[:-2].concatenate([a.shape[-1], a.shape[-2]]))
        return out


MatrixSquareRoot = op_def("MatrixSquareRoot", inputs=["input: T"], outputs=["output: T"],
                          attrs=[_T], shape=_square_shape)


@tf_export("linalg.sqrtm", "matrix_square_root")
def matrix_square_root(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.linalg.sqrtm`: the principal square root of each square matrix (NaN where it has
    no real one, e.g. a negative real eigenvalue)."""
    return apply_op(MatrixSquareRoot, [input], name=name).outputs[0]


def _banded_shape(ctx):
    bands, rhs = ctx.shapes
    _rank2(bands)
    if rhs.rank is not None and rhs.rank < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {rhs.rank}")
    if bands.rank is None or rhs.rank is None:
        return [TensorShape(None)]
    m, n = bands[-1], rhs[-2]
    if m is not None and n is not None and m != n:
        raise ValueError(f"Dimensions must be equal, but are {m} and {n}")
    return [broadcast_shapes(bands[:-2], rhs[:-2]).concatenate(rhs[-2:])]


BandedTriangularSolve = op_def(
    "BandedTriangularSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
    attrs=["lower: bool = true", "adjoint: bool = false", _T], shape=_banded_shape)


@tf_export("linalg.banded_triangular_solve", v1=[])
def banded_triangular_solve(bands, rhs, lower: bool = True, adjoint: bool = False,
                            name=None) -> Tensor:
    """`tf.linalg.banded_triangular_solve`: solves with the triangular matrix whose K bands
    are the rows of `bands` [..., K, M] (the diagonal first when `lower`, last otherwise;
    aligned LEFT_RIGHT as for `tf.linalg.set_diag`)."""
    with name_scope(name, "banded_triangular_solve"):
        return apply_op(BandedTriangularSolve, [bands, rhs],
                        {"lower": lower, "adjoint": adjoint}).outputs[0]


attach(globals(), linalg_decomp_docs.DOCS)

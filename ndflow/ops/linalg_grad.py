"""Gradients of the matrix products (MatMul, BatchMatMulV2) and of Einsum, as TensorFlow's
math_grad.py and `_EinsumGrad` write them.

Operands broadcast along batch dimensions get their gradients summed back over those
dimensions (statically when the shapes say how, else with BroadcastGradientArgs).
"""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops import einsum, linalg
from ndflow.ops import linalg_decomp as ld
from ndflow.ops import linalg_diag as ldiag
from ndflow.ops import linalg_tridiag as ltri
from ndflow.ops.apply import apply_op
from ndflow.ops.arithmetic import add, multiply, negative, reciprocal, subtract
from ndflow.ops.array_builders import eye
from ndflow.ops.array_core import expand_dims, reshape, shape, stack
from ndflow.ops.array_fill import (
    broadcast_gradient_args,
    broadcast_to,
    ones,
    pad,
    zeros_like,
)
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.complex_ops import conj, real
from ndflow.ops.linalg_extra import matrix_transpose
from ndflow.ops.math import square
from ndflow.ops.op_def import input_needed
from ndflow.ops.reduction import reduce_sum


@linalg.MatMul.def_grad
def _matmul_grad(op, grad):
    a, b = (conj(t) for t in op.inputs)  # TF's convention for complex operands
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    ga = gb = None
    if input_needed(op, 0):
        ga = (linalg.matmul(grad, b, transpose_b=True) if not ta and not tb else
              linalg.matmul(grad, b) if not ta else
              linalg.matmul(b, grad, transpose_b=True) if not tb else
              linalg.matmul(b, grad, transpose_a=True, transpose_b=True))
    if input_needed(op, 1):
        gb = (linalg.matmul(a, grad, transpose_a=True) if not ta and not tb else
              linalg.matmul(grad, a, transpose_a=True) if not ta else
              linalg.matmul(a, grad) if not tb else
              linalg.matmul(grad, a, transpose_a=True, transpose_b=True))
    return [ga, gb]


@linalg.BatchMatMulV2.def_grad
def _batch_matmul_grad(op, grad):
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not adj_x:
        if not adj_y:
            gx, gy = linalg.matmul(grad, y, adjoint_b=True), linalg.matmul(x, grad, adjoint_a=True)
        else:
            gx, gy = linalg.matmul(grad, y), linalg.matmul(grad, x, adjoint_a=True)
    elif not adj_y:
        gx, gy = linalg.matmul(y, grad, adjoint_b=True), linalg.matmul(x, grad)
    else:
        gx, gy = (linalg.matmul(y, grad, adjoint_a=True, adjoint_b=True),
                  linalg.matmul(grad, x, adjoint_a=True, adjoint_b=True))
    sx, sy = x.shape, y.shape
    maybe_batch = sx.rank is None or sx.rank > 2 or sy.rank is None or sy.rank > 2
    if not maybe_batch or (sx[:-2].is_fully_defined() and sy[:-2].is_fully_defined()
                           and sx[:-2] == sy[:-2]):
        return [gx, gy]
    if sx.is_fully_defined() and sy.is_fully_defined():
        return [_sum_batch(gx, sx, sy), _sum_batch(gy, sy, sx)]
    shape_x, shape_y = shape(x), shape(y)
    rx, ry = broadcast_gradient_args(shape_x[:-2], shape_y[:-2])
    return [reshape(reduce_sum(gx, rx), shape_x),
            reshape(reduce_sum(gy, ry), shape_y)]


def _sum_batch(g, own: TensorShape, other: TensorShape):
    """Sums `g` (batch shape = broadcast of both) over the batch dims `own` was broadcast in."""
    gb = g.shape.as_list()[:-2]
    ob = [1] * (len(gb) - (own.rank - 2)) + own.as_list()[:-2]
    axes = [i for i, (d, o) in enumerate(zip(gb, ob)) if o == 1 and d != 1]
    axes += [i for i in range(len(gb) - (own.rank - 2)) if i not in axes]
    if not axes:
        return g
    return reshape(reduce_sum(g, sorted(axes)), own.as_list())


# -- Einsum --------------------------------------------------------------------------------------

def _axis_of(subs: str, label: str):
    """TF's _GetAxisFromLabel: index before the ellipsis, negative index after it."""
    splits = subs.split(einsum.ELLIPSIS)
    index = splits[0].find(label)
    if index != -1:
        return index
    if len(splits) < 2:
        return None
    index = splits[1].find(label)
    return index - len(splits[1]) if index != -1 else None


def _bcast_subshape(subs: str) -> tuple:
    start = subs.find(einsum.ELLIPSIS)
    if start == -1:
        return 0, 0
    remaining = len(subs) - (start + len(einsum.ELLIPSIS))
    return start, (-remaining if remaining > 0 else None)


def _grad_reduced(output_grad, output_subs: str, input_subs: str, input_shape,
                  reduced: list):
    """VJP of a unary einsum that sums out the labels in `reduced` (TF's _GetGradReduced)."""
    axes = [_axis_of(input_subs, c) for c in reduced]
    repeated = (len(set(input_subs)) + len(set(output_subs))
                < len(input_subs) + len(output_subs))
    without = "".join(c for c in input_subs if c not in reduced)
    if not repeated and without == output_subs:
        g = output_grad
        for ax in sorted(a for a in axes if a >= 0):
            g = expand_dims(g, ax)
        for ax in sorted((a for a in axes if a < 0), reverse=True):
            g = expand_dims(g, ax)
        return broadcast_to(g, input_shape)
    reduced_dims = stack([input_shape[ax] for ax in axes])
    grad_shape = shape(output_grad)
    full = concat([reduced_dims, grad_shape], 0)
    ones_dims = ones([len(reduced)], dtype=grad_shape.dtype)
    g = broadcast_to(reshape(output_grad, concat([ones_dims, grad_shape], 0)), full)
    return einsum.einsum_op([g], f"{''.join(reduced) + output_subs}->{input_subs}")


def _grad_wrt(output_grad, other, input_shape, input_subs, other_subs, output_subs):
    reduced = sorted(set(input_subs) - set(output_subs + other_subs + "."))
    left = "".join(c for c in input_subs if c not in reduced)
    g = einsum.einsum_op([output_grad, other], f"{output_subs},{other_subs}->{left}")
    if not reduced:
        return g
    return _grad_reduced(g, left, input_subs, input_shape, reduced)


@einsum.Einsum.def_grad
def _einsum_grad(op, grad):
    equation = op.get_attr("equation")
    input_subs, output_subs = equation.split("->")
    if len(op.inputs) == 1:
        reduced = sorted(set(input_subs) - set(output_subs + einsum.ELLIPSIS))
        if not reduced:
            return [einsum.einsum_op([grad], f"{output_subs}->{input_subs}")]
        return [_grad_reduced(grad, output_subs, input_subs, shape(op.inputs[0]),
                              reduced)]
    x_subs, y_subs = input_subs.split(",")
    if einsum.ELLIPSIS in output_subs:
        x_subs += "" if einsum.ELLIPSIS in x_subs else einsum.ELLIPSIS
        y_subs += "" if einsum.ELLIPSIS in y_subs else einsum.ELLIPSIS
    x, y = op.inputs
    x_shape, y_shape = shape(x), shape(y)
    gx = (_grad_wrt(grad, y, x_shape, x_subs, y_subs, output_subs)
          if input_needed(op, 0) else None)
    gy = (_grad_wrt(grad, x, y_shape, y_subs, x_subs, output_subs)
          if input_needed(op, 1) else None)
    if einsum.ELLIPSIS not in output_subs:
        return [gx, gy]
    bx0, bx1 = _bcast_subshape(x_subs)
    by0, by1 = _bcast_subshape(y_subs)
    sx, sy = x.shape, y.shape
    if (sx.is_fully_defined() and sy.is_fully_defined()
            and sx.as_list()[bx0:bx1] == sy.as_list()[by0:by1]):
        return [gx, gy]
    rx, ry = broadcast_gradient_args(x_shape[bx0:bx1], y_shape[by0:by1])
    if gx is not None:
        gx = reshape(reduce_sum(gx, add(rx, bx0)), x_shape)
    if gy is not None:
        gy = reshape(reduce_sum(gy, add(ry, by0)), y_shape)
    return [gx, gy]


# -- Solvers and decompositions (TF's linalg_grad.py) --------------------------------------------

_matmul = linalg.matmul


def _adjoint(x):
    return matrix_transpose(x, conjugate=True)


def _unbroadcast(ga, gb, a, b):
    """Sums the gradients of a batch-broadcasting op back to its operands' shapes."""
    if (a.shape.is_fully_defined() and b.shape.is_fully_defined()
            and a.shape[:-2] == b.shape[:-2]):
        return ga, gb
    sa, sb = shape(a), shape(b)
    ra, rb = broadcast_gradient_args(sa[:-2], sb[:-2])
    return reshape(reduce_sum(ga, ra), sa), reshape(reduce_sum(gb, rb), sb)


@ld.MatrixInverse.def_grad
def _matrix_inverse_grad(op, grad):
    ainv = op.outputs[0]
    adj = op.get_attr("adjoint")
    inner = _matmul(grad, ainv, adjoint_a=adj, adjoint_b=not adj)
    return [negative(_matmul(ainv, inner, adjoint_a=not adj))]


@ld.MatrixSolve.def_grad
def _matrix_solve_grad(op, grad):
    a, c = op.inputs[0], op.outputs[0]
    adj = op.get_attr("adjoint")
    grad_b = ld.matrix_solve(a, grad, adjoint=not adj)
    grad_a = (negative(_matmul(c, grad_b, adjoint_b=True)) if adj else
              negative(_matmul(grad_b, c, adjoint_b=True)))
    return [grad_a, grad_b]


def _det_scale(g, a):
    """g [...] times inverse(a)^H [..., N, N]."""
    g = reshape(g, concat([shape(g), [1, 1]], 0))
    return multiply(g, ld.matrix_inverse(a, adjoint=True))


@ld.MatrixDeterminant.def_grad
def _matrix_determinant_grad(op, grad):
    return [_det_scale(multiply(grad, op.outputs[0]), op.inputs[0])]


@ld.LogMatrixDeterminant.def_grad
def _log_matrix_determinant_grad(op, _, grad_b):
    return [_det_scale(grad_b, op.inputs[0])]


@ld.Cholesky.def_grad
def _cholesky_grad(op, grad):
    chol = op.outputs[0]
    s = shape(chol)
    l_inv = ld.matrix_triangular_solve(
        chol, eye(s[-1], batch_shape=s[:-2], dtype=chol.dtype))
    middle = _matmul(chol, grad, adjoint_a=True)
    middle = ldiag.matrix_set_diag(middle, multiply(0.5, ldiag.matrix_diag_part(middle)))
    middle = ldiag.band_part(middle, -1, 0)
    grad_a = _matmul(_matmul(l_inv, middle, adjoint_a=True), l_inv)
    return [multiply(add(grad_a, _adjoint(grad_a)), 0.5)]


@ld.MatrixTriangularSolve.def_grad
def _matrix_triangular_solve_grad(op, grad):
    a, b = op.inputs
    adj, lower = op.get_attr("adjoint"), op.get_attr("lower")
    c = op.outputs[0]
    grad_b = ld.matrix_triangular_solve(a, grad, lower=lower, adjoint=not adj)
    grad_a = (negative(_matmul(c, grad_b, adjoint_b=True)) if adj else
              negative(_matmul(grad_b, c, adjoint_b=True)))
    grad_a = ldiag.band_part(grad_a, -1, 0) if lower else ldiag.band_part(grad_a, 0, -1)
    return list(_unbroadcast(grad_a, grad_b, a, b))


@ld.BandedTriangularSolve.def_grad
def _banded_triangular_solve_grad(op, grad):
    a, b = op.inputs
    adj, lower = op.get_attr("adjoint"), op.get_attr("lower")
    c = op.outputs[0]
    num_bands = shape(a)[-2]
    grad_b = ld.banded_triangular_solve(a, grad, lower=lower, adjoint=not adj)
    grad_a = (negative(_matmul(c, grad_b, adjoint_b=True)) if adj else
              negative(_matmul(grad_b, c, adjoint_b=True)))
    k = stack([1 - num_bands, 0]) if lower else stack([0, num_bands - 1])
    grad_a = ldiag.matrix_diag_part(grad_a, k=k, align="LEFT_RIGHT")
    return list(_unbroadcast(grad_a, grad_b, a, b))


def _r_inv_t(x, r):
    """x @ inverse(r)^H for upper-triangular r."""
    return _adjoint(ld.matrix_triangular_solve(r, _adjoint(x), lower=False))


def _qr_grad_deep(q, r, dq, dr):
    qdq = _matmul(q, dq, adjoint_a=True)
    rdr = _matmul(r, dr, adjoint_b=True)
    tril = ldiag.band_part(add(subtract(qdq, _adjoint(qdq)), subtract(rdr, _adjoint(rdr))),
                           -1, 0)
    grad_a = _matmul(q, add(dr, _r_inv_t(tril, r)))
    grad = add(grad_a, _r_inv_t(subtract(dq, _matmul(q, qdq)), r))
    if q.dtype.is_complex:  # TF's correction: the imaginary part of diag(R dR^H - Q^H dQ)
        m = subtract(rdr, _adjoint(qdq))
        eyem = ldiag.matrix_set_diag(zeros_like(m), ldiag.matrix_diag_part(m))
        correction = subtract(eyem, cast(real(eyem), q.dtype))
        grad = add(grad, _r_inv_t(_matmul(q, _adjoint(correction)), r))
    return grad


@ld.Qr.def_grad
def _qr_grad(op, dq, dr):
    q, r = op.outputs
    if r.shape.rank is None or r.shape[-2] is None or r.shape[-1] is None:
        raise NotImplementedError(f"QrGrad not implemented with dynamic shapes. Received "
                                  f"r.shape: {r.shape}")
    rows, cols = q.shape[-2], r.shape[-1]
    if r.shape[-2] > r.shape[-1] and q.shape[-2] == q.shape[-1]:
        raise NotImplementedError(
            f"QrGrad not implemented when nrows > ncols and full_matrices is true. Received "
            f"r.shape={r.shape} with nrows={r.shape[-2]}and ncols={r.shape[-1]}.")
    if rows >= cols:
        return [_qr_grad_deep(q, r, dq, dr)]
    a = op.inputs[0]
    y, u = a[..., :, rows:], r[..., :, :rows]
    dv, du = dr[..., :, rows:], dr[..., :, :rows]
    dx = _qr_grad_deep(q, u, add(dq, _matmul(y, dv, adjoint_b=True)), du)
    return [concat([dx, _matmul(q, dv)], -1)]


def _safe_reciprocal(x, eps=1e-20):
    return multiply(x, reciprocal(add(multiply(x, x), eps)))


def _pair_reciprocals(e):
    """1 / (e_j - e_i) off the diagonal, 0 on it."""
    diff = subtract(expand_dims(e, -2), expand_dims(e, -1))
    return ldiag.matrix_set_diag(_safe_reciprocal(diff), zeros_like(e))


@ld.SelfAdjointEigV2.def_grad
def _self_adjoint_eig_grad(op, grad_e, grad_v):
    e = op.outputs[0]
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        f = _pair_reciprocals(e)
        inner = add(ldiag.matrix_diag(grad_e),
                    multiply(f, _matmul(v, grad_v, adjoint_a=True)))
    else:
        _, v = ld.self_adjoint_eig(op.inputs[0])
        inner = ldiag.matrix_diag(grad_e)
    grad_a = _matmul(v, _matmul(inner, v, adjoint_b=True))
    grad_a = ldiag.band_part(add(grad_a, _adjoint(grad_a)), -1, 0)
    return [ldiag.matrix_set_diag(grad_a, multiply(0.5, ldiag.matrix_diag_part(grad_a)))]


@ld.Eig.def_grad
def _eig_grad(op, grad_e, grad_v):
    """TF's eigen-decomposition gradient for distinct eigenvalues (Boeddeker et al., eq.
    4.77): A's gradient V^-H (diag(gE) + F* o (V^H gV - V^H V diag(Re diag(V^H gV)))) V^H,
    the real part for a real input."""
    e = op.outputs[0]
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        vt = _adjoint(v)
        f = conj(_pair_reciprocals(e))
        vgv = _matmul(vt, grad_v)
        diag_part = ldiag.matrix_diag(ldiag.matrix_diag_part(cast(real(vgv), vgv.dtype)))
        mid = add(ldiag.matrix_diag(grad_e),
                  multiply(f, subtract(vgv, _matmul(_matmul(vt, v), diag_part))))
    else:
        _, v = ld.eig(op.inputs[0])
        vt = _adjoint(v)
        mid = ldiag.matrix_diag(grad_e)
    grad_a = ld.matrix_solve(vt, _matmul(mid, vt))
    return [cast(real(grad_a) if not op.inputs[0].dtype.is_complex else grad_a,
                 op.inputs[0].dtype)]


@ld.Svd.def_grad
def _svd_grad(op, grad_s, grad_u, grad_v):
    a = op.inputs[0]
    grad_s_mat = ldiag.matrix_diag(cast(grad_s, a.dtype))
    if not op.get_attr("compute_uv"):
        _, u, v = ld.svd(a, compute_uv=True)
        return [_matmul(u, _matmul(grad_s_mat, v, adjoint_b=True))]
    m, n = a.shape[-2] if a.shape.rank else None, a.shape[-1] if a.shape.rank else None
    if m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with "
                                  "unknown inner matrix shape.")
    full = op.get_attr("full_matrices")
    s, u, v = op.outputs
    transposed = m > n
    if transposed:
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    if full and abs(m - n) > 1:
        raise NotImplementedError(
            f"svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True. "
            f"Received: m={m} and n={n} from op input={a} with shape={a.shape}.")
    s_mat = ldiag.matrix_diag(s)
    f = _pair_reciprocals(square(s))
    s_inv_mat = ldiag.matrix_diag(_safe_reciprocal(s))
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    v_gv = _matmul(v1, grad_v1, adjoint_a=True)
    f_u = multiply(f, _matmul(u, grad_u, adjoint_a=True))
    f_v = multiply(f, v_gv)
    inner = add(add(grad_s_mat, _matmul(add(f_u, _adjoint(f_u)), s_mat)),
                _matmul(s_mat, add(f_v, _adjoint(f_v))))
    grad_a = _matmul(u, _matmul(inner, v1, adjoint_b=True))
    if m != n:
        gv1t = _adjoint(grad_v1)
        term2 = subtract(gv1t, _matmul(_matmul(gv1t, v1), v1, adjoint_b=True))
        if full:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            term2 = subtract(term2, _matmul(_matmul(v1, grad_v2, adjoint_a=True), v2,
                                            adjoint_b=True))
        grad_a = add(grad_a, _matmul(_matmul(u, s_inv_mat), term2))
    if a.dtype.is_complex:  # TF's term for the phases: the diagonal of V^H dV
        diag = ldiag.matrix_diag(ldiag.matrix_diag_part(v_gv))
        term3 = _matmul(s_inv_mat, subtract(_adjoint(diag), diag))
        grad_a = add(grad_a, multiply(0.5, _matmul(u, _matmul(term3, v1, adjoint_b=True))))
    return [_adjoint(grad_a) if transposed else grad_a]


@ld.MatrixSolveLs.def_grad
def _matrix_solve_ls_grad(op, grad):
    if not op.get_attr("fast"):
        raise ValueError("Gradient not defined for fast=False")
    a, b = op.inputs[0], op.inputs[1]
    dims = a.shape[-2:] if a.shape.rank is not None else None
    if dims is None or not dims.is_fully_defined():
        raise NotImplementedError("MatrixSolveLs gradient needs a known matrix shape")
    l2 = cast(op.inputs[2], a.dtype)
    if dims[0] >= dims[1]:
        x = op.outputs[0]
        z = ld.cholesky_solve(ld.gramian_cholesky(a, l2, True), grad)
        xzt = _matmul(x, z, adjoint_b=True)
        zx_sym = add(xzt, matrix_transpose(xzt))
        grad_a = add(negative(_matmul(a, zx_sym)), _matmul(b, z, adjoint_b=True))
        return [grad_a, _matmul(a, z), None]
    chol = ld.gramian_cholesky(a, l2, False)
    grad_b = ld.cholesky_solve(chol, _matmul(a, grad))
    tmp = ld.cholesky_solve(chol, b)
    a1 = negative(_matmul(grad_b, _matmul(tmp, a, adjoint_a=True)))
    a2 = _matmul(tmp, subtract(grad, _matmul(a, grad_b, adjoint_a=True)), adjoint_b=True)
    return [add(a1, a2), grad_b, None]


def _kron(a, b):
    """Batched Kronecker products of square matrices [..., n, n] (row-major vec order)."""
    s = shape(a)
    n = s[-1]
    prod = multiply(expand_dims(expand_dims(a, -1), -3), expand_dims(expand_dims(b, -3), -2))
    return reshape(prod, concat([s[:-2], stack([n * n, n * n])], 0))


@ld.MatrixSquareRoot.def_grad
def _matrix_square_root_grad(op, grad):
    # A = R R, so dA = dR R + R dR; the gradient S wrt A solves R^T S + S R^T = grad, as
    # (R^T (x) I + I (x) R) vec(S) = vec(grad) in row-major vec order.
    r = op.outputs[0]
    s = shape(r)
    ident = eye(s[-1], batch_shape=s[:-2], dtype=r.dtype)
    system = add(_kron(matrix_transpose(r), ident), _kron(ident, r))
    vec = reshape(grad, concat([s[:-2], stack([s[-1] * s[-1], 1])], 0))
    return [reshape(ld.matrix_solve(system, vec), s)]


def _shift_rows(x, up: bool):
    """x[..., i + 1, :] (up) or x[..., i - 1, :] into row i, zeros entering at the end."""
    rank = x.shape.rank
    if rank is None:
        raise NotImplementedError("tridiagonal gradients need operands of known rank")
    paddings = [[0, 0]] * (rank - 2) + [[0, 1] if up else [1, 0], [0, 0]]
    return pad(x[..., 1:, :] if up else x[..., :-1, :], paddings)


@ltri.TridiagonalMatMul.def_grad
def _tridiagonal_matmul_grad(op, grad):
    sup, main, sub = (matrix_transpose(t) for t in op.inputs[:3])
    rhs = op.inputs[3]
    grads = [reduce_sum(multiply(_shift_rows(rhs, True), grad), axis=-1),
             reduce_sum(multiply(rhs, grad), axis=-1),
             reduce_sum(multiply(_shift_rows(rhs, False), grad), axis=-1)]
    grad_rhs = add(add(_shift_rows(multiply(sup, grad), False), multiply(main, grad)),
                   _shift_rows(multiply(sub, grad), True))
    return [expand_dims(g, -2) for g in grads] + [grad_rhs]


def _three_diagonals_of_product(x, y_t):
    """The compact diagonals of x @ adjoint(y_t), computed in O(M K)."""
    diag = reduce_sum(multiply(x, y_t), axis=-1)
    superdiag = reduce_sum(multiply(x, _shift_rows(y_t, True)), axis=-1)
    subdiag = reduce_sum(multiply(x, _shift_rows(y_t, False)), axis=-1)
    return stack([superdiag, diag, subdiag], axis=-2)


@ltri.TridiagonalSolve.def_grad
def _tridiagonal_solve_grad(op, grad):
    diags, x = op.inputs[0], op.outputs[0]
    main = diags[..., 1, :]
    rank = diags.shape.rank
    if rank is None:
        raise NotImplementedError("TridiagonalSolve gradient needs diagonals of known rank")
    edge = [[0, 0]] * (rank - 2)
    superdiag = pad(diags[..., 2, 1:], edge + [[0, 1]])   # the transpose's diagonals
    subdiag = pad(diags[..., 0, :-1], edge + [[1, 0]])
    transposed = stack([superdiag, main, subdiag], axis=-2)
    grad_rhs = apply_op(ltri.TridiagonalSolve, [transposed, grad],
                        {"partial_pivoting": op.get_attr("partial_pivoting"),
                         "perturb_singular": op.get_attr("perturb_singular")}).outputs[0]
    return [negative(_three_diagonals_of_product(grad_rhs, x)), grad_rhs]


# -- Diagonals and bands (TF's array_grad.py) ----------------------------------------------------

@ldiag.MatrixDiagV3.def_grad
def _matrix_diag_grad(op, grad):
    return [ldiag.matrix_diag_part(grad, k=op.inputs[1], align=op.get_attr("align")),
            None, None, None, None]


@ldiag.MatrixDiagPartV3.def_grad
def _matrix_diag_part_grad(op, grad):
    x, k = op.inputs[0], op.inputs[1]
    align = op.get_attr("align")
    dims = x.shape[-2:] if x.shape.rank is not None else None
    if dims is not None and dims.is_fully_defined():
        return [ldiag.matrix_diag(grad, k=k, num_rows=dims[0], num_cols=dims[1], align=align),
                None, None]
    return [ldiag.matrix_set_diag(zeros_like(x), grad, k=k, align=align), None, None]


@ldiag.MatrixSetDiagV3.def_grad
def _matrix_set_diag_grad(op, grad):
    diag, k = op.inputs[1], op.inputs[2]
    align = op.get_attr("align")
    grad_input = ldiag.matrix_set_diag(grad, zeros_like(diag), k=k, align=align)
    return [grad_input, ldiag.matrix_diag_part(grad, k=k, align=align), None]


@ldiag.MatrixDiagV2.def_grad
def _matrix_diag_v2_grad(op, grad):
    return [ldiag.matrix_diag_part(grad, k=op.inputs[1], align="LEFT_LEFT"),
            None, None, None, None]


@ldiag.MatrixDiagPartV2.def_grad
def _matrix_diag_part_v2_grad(op, grad):
    x, k = op.inputs[0], op.inputs[1]
    dims = x.shape[-2:] if x.shape.rank is not None else None
    if dims is not None and dims.is_fully_defined():
        return [ldiag.matrix_diag(grad, k=k, num_rows=dims[0], num_cols=dims[1],
                                  align="LEFT_LEFT"), None, None]
    return [ldiag.matrix_set_diag(zeros_like(x), grad, k=k, align="LEFT_LEFT"), None, None]


@ldiag.MatrixSetDiagV2.def_grad
def _matrix_set_diag_v2_grad(op, grad):
    diag, k = op.inputs[1], op.inputs[2]
    return [ldiag.matrix_set_diag(grad, zeros_like(diag), k=k, align="LEFT_LEFT"),
            ldiag.matrix_diag_part(grad, k=k, align="LEFT_LEFT"), None]


@ldiag.MatrixDiag.def_grad
def _matrix_diag_v1_grad(op, grad):
    return [ldiag.matrix_diag_part(grad)]


@ldiag.MatrixDiagPart.def_grad
def _matrix_diag_part_v1_grad(op, grad):
    x = op.inputs[0]
    dims = x.shape[-2:] if x.shape.rank is not None else None
    if dims is not None and dims.is_fully_defined() and dims[0] == dims[1]:
        return [ldiag.matrix_diag(grad)]
    return [ldiag.matrix_set_diag(zeros_like(x), grad)]


@ldiag.MatrixSetDiag.def_grad
def _matrix_set_diag_v1_grad(op, grad):
    return [ldiag.matrix_set_diag(grad, zeros_like(op.inputs[1])),
            ldiag.matrix_diag_part(grad)]


@ldiag.MatrixBandPart.def_grad
def _matrix_band_part_grad(op, grad):
    return [ldiag.band_part(grad, op.inputs[1], op.inputs[2]), None, None]

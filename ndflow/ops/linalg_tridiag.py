"""Tridiagonal systems: TridiagonalSolve and TridiagonalMatMul with TF's public functions
`tf.linalg.tridiagonal_solve` / `tf.linalg.tridiagonal_matmul` (diagonals given 'compact'
[..., 3, M] (super, main, sub), as a 'sequence' of three [..., M] tensors, or as a 'matrix').
Gradients are in linalg_grad.py.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import expand_dims, squeeze, stack
from ndflow.ops.array_fill import pad
from ndflow.ops.linalg_diag import matrix_diag_part
from ndflow.ops.linalg_extra import matrix_transpose
from ndflow.ops.op_def import op_def

_T = "T: {double, float}"  # TF also takes complex64, complex128


def _solve_shape(ctx):
    d, rhs = ctx.shapes
    if d.rank is not None and d.rank < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {d.rank}")
    if rhs.rank is not None and rhs.rank < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {rhs.rank}")
    return [rhs]


def _matmul_shape(ctx):
    return [ctx.shapes[3]]


TridiagonalSolve = op_def(
    "TridiagonalSolve", inputs=["diagonals: T", "rhs: T"], outputs=["output: T"],
    attrs=["partial_pivoting: bool = true", "perturb_singular: bool = false", _T],
    shape=_solve_shape)
TridiagonalMatMul = op_def(
    "TridiagonalMatMul", inputs=["superdiag: T", "maindiag: T", "subdiag: T", "rhs: T"],
    outputs=["output: T"], attrs=[_T], shape=_matmul_shape)


def _compact(diagonals, diagonals_format: str):
    if diagonals_format == "compact":
        return convert_to_tensor(diagonals, name="diagonals")
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
            raise ValueError("Expected diagonals to be a sequence of length 3.")
        superdiag, maindiag, subdiag = (convert_to_tensor(t) for t in diagonals)
        m = maindiag.shape[-1] if maindiag.shape.rank else None

        def full(t, what, padding):
            n = t.shape[-1] if t.shape.rank else None
            if not n or n == m:
                return t
            if m is not None and n == m - 1:
                return pad(t, [[0, 0]] * (t.shape.rank - 1) + [padding])
            raise ValueError(f"Expected {what} to be have length {m} or {m - 1}, got {n}.")
        return stack([full(superdiag, "superdiagonal", [0, 1]), maindiag,
                      full(subdiag, "subdiagonal", [1, 0])], axis=-2)
    if diagonals_format == "matrix":
        diagonals = convert_to_tensor(diagonals, name="diagonals")
        s = diagonals.shape
        if s.rank is not None and s[-1] and s[-2] and s[-1] != s[-2]:
            raise ValueError(f"Expected last two dimensions of diagonals to be same, got "
                             f"{s[-1]} and {s[-2]}")
        return matrix_diag_part(diagonals, k=(-1, 1), padding_value=0.0, align="LEFT_RIGHT")
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")


@tf_export("linalg.tridiagonal_solve")
def tridiagonal_solve(diagonals, rhs, diagonals_format: str = "compact",
                      transpose_rhs: bool = False, conjugate_rhs: bool = False, name=None,
                      partial_pivoting: bool = True, perturb_singular: bool = False) -> Tensor:
    """`tf.linalg.tridiagonal_solve`: X with A X = rhs for tridiagonal A."""
    if perturb_singular and not partial_pivoting:
        raise ValueError("partial_pivoting must be True if perturb_singular is.")
    diagonals = _compact(diagonals, diagonals_format)
    rhs = convert_to_tensor(rhs, name="rhs")
    d_rank, r_rank = diagonals.shape.rank, rhs.shape.rank
    if d_rank:
        if d_rank < 2:
            raise ValueError(f"Expected diagonals to have rank at least 2, got {d_rank}")
        if r_rank and r_rank not in (d_rank, d_rank - 1):
            raise ValueError(f"Expected the rank of rhs to be {d_rank - 1} or {d_rank}, got "
                             f"{r_rank}")
        if r_rank and not diagonals.shape[:-2].is_compatible_with(rhs.shape[:d_rank - 2]):
            raise ValueError(f"Batch shapes {diagonals.shape[:-2]} and "
                             f"{rhs.shape[:d_rank - 2]} are incompatible")
    if d_rank and diagonals.shape[-2] and diagonals.shape[-2] != 3:
        raise ValueError(f"Expected 3 diagonals got {diagonals.shape[-2]}")
    attrs = {"partial_pivoting": partial_pivoting, "perturb_singular": perturb_singular}
    vector = bool(r_rank and d_rank and r_rank == d_rank - 1)
    if vector:
        rhs = expand_dims(rhs, -1)
    elif transpose_rhs:
        rhs = matrix_transpose(rhs, conjugate=conjugate_rhs)
    m, n = diagonals.shape[-1] if d_rank else None, rhs.shape[-2] if rhs.shape.rank else None
    if m and n and m != n:
        raise ValueError(f"Expected number of left-hand sided and right-hand sides to be "
                         f"equal, got {m} and {n}")
    out = apply_op(TridiagonalSolve, [diagonals, rhs], attrs, name=name).outputs[0]
    return squeeze(out, -1) if vector else out


@tf_export("linalg.tridiagonal_matmul")
def tridiagonal_matmul(diagonals, rhs, diagonals_format: str = "compact", name=None) -> Tensor:
    """`tf.linalg.tridiagonal_matmul`: A @ rhs for tridiagonal A."""
    if diagonals_format == "sequence":
        superdiag, maindiag, subdiag = (convert_to_tensor(t) for t in diagonals)
    else:
        diags = (convert_to_tensor(diagonals) if diagonals_format == "compact"
                 else _compact(diagonals, diagonals_format))
        if diagonals_format not in ("compact", "matrix"):
            raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")
        superdiag, maindiag, subdiag = diags[..., 0, :], diags[..., 1, :], diags[..., 2, :]
    parts = [expand_dims(t, -2) for t in (superdiag, maindiag, subdiag)]
    return apply_op(TridiagonalMatMul, parts + [rhs], name=name).outputs[0]


"""ATen kernels (torch.linalg) for the solvers and decompositions of ops/linalg_decomp.py.

LAPACK has no half-precision routines: float16/bfloat16 inputs are computed in float32 and
rounded back, as TF's Eigen kernels compute them in a wider type.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import tridiagonal_solve_numba
from ndflow.kernels.linalg_diag import bands_to_dense
from ndflow.kernels.registry import kernel
from ndflow.ops import linalg_decomp as ld
from ndflow.ops import linalg_lu, linalg_tridiag

_LOW = (torch.float16, torch.bfloat16)


def _bad(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def _wide(fn):
    """Runs `fn` in float32 for half inputs, casting every floating result back."""
    def run(*args):
        low = next((a.dtype for a in args if a.dtype in _LOW), None)
        if low is None:
            return fn(*args)
        out = fn(*[a.float() if a.dtype in _LOW else a for a in args])
        if isinstance(out, tuple):
            return tuple(o.to(low) for o in out)
        return out.to(low)
    return run


def _adj(x):
    return x.mH


@kernel(ld.MatrixInverse)
def _inverse(node):
    adjoint = node.attrs["adjoint"]

    def run(x):
        if x.numel() == 0:
            return x.clone()
        inv, info = torch.linalg.inv_ex(_adj(x) if adjoint else x)
        if bool((info != 0).any()):
            raise _bad("Input is not invertible.")
        return inv
    return _wide(run)


@kernel(ld.MatrixSolve)
def _solve(node):
    adjoint = node.attrs["adjoint"]

    def run(a, b):
        if a.numel() == 0 or b.numel() == 0:
            return torch.zeros(*b.shape, dtype=b.dtype, device=b.device)
        lu, pivots, info = torch.linalg.lu_factor_ex(a)
        if bool((info != 0).any()):
            raise _bad("Input matrix is not invertible.")
        return torch.linalg.lu_solve(lu, pivots, b, adjoint=adjoint)
    return _wide(run)


@kernel(ld.MatrixDeterminant)
def _det(node):
    return _wide(torch.linalg.det)


@kernel(ld.LogMatrixDeterminant)
def _slogdet(node):
    def slogdet(x):
        sign, log_abs = torch.linalg.slogdet(x)
        return sign, log_abs.to(x.dtype)  # TF: both outputs of the input's (complex) type
    return _wide(slogdet)


@kernel(ld.Cholesky)
def _cholesky(node):
    def run(x):
        if x.numel() == 0:
            return x.clone()
        chol, info = torch.linalg.cholesky_ex(x)
        failed = info != 0
        if bool(failed.any()):  # TF fills a failed factor's lower triangle with NaNs
            nan = torch.full_like(chol, float("nan")).tril()
            chol = torch.where(failed[..., None, None], nan, chol)
        return chol
    return _wide(run)


@kernel(ld.MatrixTriangularSolve)
def _triangular_solve(node):
    lower, adjoint = node.attrs["lower"], node.attrs["adjoint"]

    def run(a, b):
        if adjoint:
            return torch.linalg.solve_triangular(_adj(a), b, upper=lower)
        return torch.linalg.solve_triangular(a, b, upper=not lower)
    return _wide(run)


@kernel(ld.Qr)
def _qr(node):
    mode = "complete" if node.attrs["full_matrices"] else "reduced"
    return _wide(lambda x: tuple(torch.linalg.qr(x, mode=mode)))


@kernel(ld.Svd)
def _svd(node):
    full, compute_uv = node.attrs["full_matrices"], node.attrs["compute_uv"]

    def run(x):
        if not compute_uv:  # (singular values in the input's type, complex too, as TF)
            empty = x.new_zeros(0)
            return torch.linalg.svdvals(x).to(x.dtype), empty, empty
        u, s, vh = torch.linalg.svd(x, full_matrices=full)
        return s.to(x.dtype), u, _adj(vh)
    return _wide(run)


@kernel(ld.SelfAdjointEigV2)
def _eigh(node):
    compute_v = node.attrs["compute_v"]

    def run(x):  # TF: real eigenvalues in the input's (complex) type
        if not compute_v:
            return torch.linalg.eigvalsh(x).to(x.dtype), x.new_zeros(0)
        e, v = torch.linalg.eigh(x)
        return e.to(x.dtype), v
    return _wide(run)


@kernel(ld.Eig)
def _eig(node):
    compute_v, out = node.attrs["compute_v"], node.attrs["Tout"].torch_dtype

    def run(x):
        if not compute_v:
            return torch.linalg.eigvals(x).to(out), torch.zeros(0, dtype=out, device=x.device)
        e, v = torch.linalg.eig(x)   # LAPACK's geev: unit-norm eigenvector columns
        return e.to(out), v.to(out)
    return run


@kernel(ld.MatrixSolveLs)
def _solve_ls(node):
    fast = node.attrs["fast"]

    def run(a, b, l2):
        l2 = float(l2)
        m, n = a.shape[-2], a.shape[-1]
        if not fast:  # TF: the complete orthogonal decomposition; l2_regularizer unused
            driver = "gelsd" if a.device.type == "cpu" else None
            return torch.linalg.lstsq(a, b, driver=driver).solution
        if m >= n:  # (A^H A + l2 I)^-1 A^H b
            gram = _adj(a) @ a + l2 * torch.eye(n, dtype=a.dtype, device=a.device)
            return torch.cholesky_solve(_adj(a) @ b, torch.linalg.cholesky(gram))
        gram = a @ _adj(a) + l2 * torch.eye(m, dtype=a.dtype, device=a.device)
        return _adj(a) @ torch.cholesky_solve(b, torch.linalg.cholesky(gram))
    return _wide(run)


@kernel(linalg_lu.Lu)
def _lu(node):
    idx = node.output_dtypes[1].torch_dtype

    def run(x):
        if x.shape[-1] == 0:
            return x.clone(), torch.zeros(x.shape[:-1], dtype=idx, device=x.device)
        wide = x.float() if x.dtype in _LOW else x
        factors, pivots, info = torch.linalg.lu_factor_ex(wide)
        if bool((info != 0).any()):
            raise _bad("Input is not invertible.")
        perm, _, _ = torch.lu_unpack(factors, pivots, unpack_data=False)
        # A = P L U, so (P^T A)[i] = A[p[i]] = (L U)[i]: p[i] is the column of P's 1 in row i
        # of P^T, i.e. the row of P's 1 in column i.
        return factors.to(x.dtype), perm.argmax(-2).to(idx)
    return run


def _sqrtm(a: torch.Tensor) -> torch.Tensor:
    """Principal square roots by the Denman-Beavers iteration with determinant scaling
    (Higham, Functions of Matrices, 6.3); NaN where it does not converge to a root."""
    n = a.shape[-1]
    eye = torch.eye(n, dtype=a.dtype, device=a.device).expand_as(a)
    y, z = a, eye.clone()
    tol = torch.finfo(a.dtype).eps ** 0.5
    scale = True
    for _ in range(100):
        if scale:
            det = (torch.linalg.det(y) * torch.linalg.det(z)).abs()
            g = det.clamp_min(torch.finfo(a.dtype).tiny).pow(-0.5 / n)[..., None, None]
            y, z = g * y, g * z
        y_next = 0.5 * (y + torch.linalg.inv_ex(z)[0])
        z = 0.5 * (z + torch.linalg.inv_ex(y)[0])
        step = (y_next - y).abs().amax((-2, -1)) / y_next.abs().amax((-2, -1)).clamp_min(1e-300)
        y = y_next
        scale = bool((step > 1e-2).any())
        if not bool((step > tol * 1e-3).any()) or not bool(torch.isfinite(step).all()):
            break
    residual = (y @ y - a).abs().amax((-2, -1))
    size = a.abs().amax((-2, -1)).clamp_min(torch.finfo(a.dtype).tiny)
    good = torch.isfinite(residual) & (residual <= size * tol * 10)
    return torch.where(good[..., None, None], y, torch.full_like(y, float("nan")))


@kernel(ld.MatrixSquareRoot)
def _matrix_square_root(node):
    def run(x):
        if x.numel() == 0:
            return x.clone()
        wide = x.double() if x.dtype in _LOW + (torch.float32,) else x
        return _sqrtm(wide).to(x.dtype)
    return run


def _tridiag_dense(diags: torch.Tensor) -> torch.Tensor:
    """[..., 3, M] (super, main, sub) -> the dense [..., M, M] matrix."""
    sup, main, sub = diags[..., 0, :], diags[..., 1, :], diags[..., 2, :]
    return (torch.diag_embed(main) + torch.diag_embed(sup[..., :-1], 1)
            + torch.diag_embed(sub[..., 1:], -1))


def _thomas(diags: torch.Tensor, rhs: torch.Tensor) -> torch.Tensor:
    """The Thomas algorithm (no pivoting); NaN for a matrix that meets a zero pivot."""
    sup, main, sub = diags[..., 0, :], diags[..., 1, :], diags[..., 2, :]
    m = main.shape[-1]
    c, d = [], []
    failed = torch.zeros(main.shape[:-1], dtype=torch.bool, device=main.device)
    for i in range(m):
        denom = main[..., i] if i == 0 else main[..., i] - sub[..., i] * c[-1]
        failed |= denom == 0
        c.append(sup[..., i] / denom)
        prev = 0 if i == 0 else sub[..., i, None] * d[-1]
        d.append((rhs[..., i, :] - prev) / denom[..., None])
    x = [d[-1]]
    for i in range(m - 2, -1, -1):
        x.append(d[i] - c[i][..., None] * x[-1])
    out = torch.stack(x[::-1], -2)
    return torch.where(failed[..., None, None], torch.full_like(out, float("nan")), out)


@kernel(linalg_tridiag.TridiagonalSolve)
def _tridiagonal_solve(node):
    pivoting = node.attrs["partial_pivoting"]

    def run(diags, rhs):
        if diags.shape[-2] != 3:
            raise _bad(f"Expected 3 diagonals got {diags.shape[-2]}")
        if diags.shape[-1] != rhs.shape[-2]:
            raise _bad(f"Expected number of left-hand sided and right-hand sides to be "
                       f"equal, got {diags.shape[-1]} and {rhs.shape[-2]}")
        if rhs.numel() == 0:
            return rhs.clone()
        if not pivoting:
            return _thomas(diags, rhs)
        if not node.attrs["perturb_singular"] and diags.shape[:-2] == rhs.shape[:-2]:
            x = tridiagonal_solve_numba.solve(diags, rhs)
            if x is not None:
                return x
        x, info = torch.linalg.solve_ex(_tridiag_dense(diags), rhs)
        # TF logs "The matrix is not invertible." and fills that solution with NaNs.
        return torch.where((info != 0)[..., None, None], torch.full_like(x, float("nan")), x)
    return run


@kernel(linalg_tridiag.TridiagonalMatMul)
def _tridiagonal_matmul(node):
    def run(sup, main, sub, rhs):
        out = main[..., 0, :, None] * rhs
        out[..., :-1, :] += sup[..., 0, :-1, None] * rhs[..., 1:, :]
        out[..., 1:, :] += sub[..., 0, 1:, None] * rhs[..., :-1, :]
        return out
    return run


@kernel(ld.BandedTriangularSolve)
def _banded_triangular_solve(node):
    lower, adjoint = node.attrs["lower"], node.attrs["adjoint"]

    def run(bands, rhs):
        k, m = bands.shape[-2], bands.shape[-1]
        if k > m:
            raise _bad(f"Number of bands must be less than or equal to the number of rows: "
                       f"{k} > {m}")
        main = bands[..., 0, :] if lower else bands[..., k - 1, :]
        if bool((main == 0).any()):
            raise _bad("Input matrix is not invertible.")
        lo, hi = (1 - k, 0) if lower else (0, k - 1)
        a = bands_to_dense(bands, lo, hi, "LEFT_RIGHT")
        if adjoint:
            return torch.linalg.solve_triangular(a.mH, rhs, upper=lower)
        return torch.linalg.solve_triangular(a, rhs, upper=not lower)
    return _wide(run)

"""TridiagonalSolve with partial pivoting on CPU float tensors as TF's kernel computes it:
LU with row interchanges on the three diagonals (at most two superdiagonals in U), the forward
solve done during the factorization for every right-hand side, then back substitution; a zero
pivot gives NaNs for that system (TF logs "The matrix is not invertible"). One pass over each
system, where the dense LU this replaces built an n x n matrix (n = 4096: 8.9 s -> ms).

numba is imported and the kernel compiled (cached on disk) at the first such solve; without
numba `solve` is None and the dense LU runs."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels.build_once import built_once


def _solve_system(sup, diag, sub, rhs, x, u):
    """x <- the solution of one tridiagonal system (n >= 2) for every column of rhs [n, k];
    u [n, 3]: U's diagonal and two superdiagonals. False when a pivot is zero."""
    n, k = rhs.shape
    u[0, 0] = diag[0]
    u[0, 1] = sup[0]
    for c in range(k):
        x[0, c] = rhs[0, c]
    for i in range(n - 1):
        if abs(u[i, 0]) >= abs(sub[i + 1]):          # keep row i as the pivot row
            if u[i, 0] == 0:
                return False
            factor = sub[i + 1] / u[i, 0]
            u[i + 1, 0] = diag[i + 1] - factor * u[i, 1]
            for c in range(k):
                x[i + 1, c] = rhs[i + 1, c] - factor * x[i, c]
            if i != n - 2:
                u[i + 1, 1] = sup[i + 1]
                u[i, 2] = 0
        else:                                          # row i + 1 becomes the pivot row
            factor = u[i, 0] / sub[i + 1]
            u[i, 0] = sub[i + 1]
            u[i + 1, 0] = u[i, 1] - factor * diag[i + 1]
            u[i, 1] = diag[i + 1]
            for c in range(k):
                moved = rhs[i + 1, c]
                x[i + 1, c] = x[i, c] - factor * moved
                x[i, c] = moved
            if i != n - 2:
                u[i, 2] = sup[i + 1]
                u[i + 1, 1] = -factor * sup[i + 1]
    if u[n - 1, 0] == 0:
        return False
    for c in range(k):
        x[n - 1, c] = x[n - 1, c] / u[n - 1, 0]
        x[n - 2, c] = (x[n - 2, c] - u[n - 2, 1] * x[n - 1, c]) / u[n - 2, 0]
    for i in range(n - 3, -1, -1):
        for c in range(k):
            x[i, c] = (x[i, c] - u[i, 1] * x[i + 1, c] - u[i, 2] * x[i + 2, c]) / u[i, 0]
    return True


def _solve_batch(diags, rhs, x, u):
    """Every system of diags [B, 3, n] and rhs [B, n, k] into x [B, n, k]."""
    for b in range(diags.shape[0]):
        if not _solve_system(diags[b, 0], diags[b, 1], diags[b, 2], rhs[b], x[b], u):
            x[b, :, :] = np.nan


def _build():
    global _solve_system
    try:
        import numba  # noqa: PLC0415 - loads with the first pivoting tridiagonal solve
    except ImportError:
        return None
    jit = numba.njit(cache=True, nogil=True)
    _solve_system = jit(_solve_system)
    return jit(_solve_batch)


_kernel = built_once(_build)


def solve(diags: torch.Tensor, rhs: torch.Tensor):
    """The solutions [..., n, k] of CPU float32/float64 systems (n >= 2), or None where the
    numba kernel does not apply (another device or dtype, no numba)."""
    if diags.device.type != "cpu" or diags.dtype not in (torch.float32, torch.float64) or \
            diags.shape[-1] < 2:
        return None
    kernel = _kernel()
    if kernel is None:
        return None
    batch = rhs.shape[:-2]
    n, k = rhs.shape[-2:]
    d = np.ascontiguousarray(diags.reshape(-1, 3, n).numpy())
    r = np.ascontiguousarray(rhs.reshape(-1, n, k).numpy())
    x = np.empty_like(r)
    kernel(d, r, x, np.empty((n, 3), d.dtype))
    return torch.from_numpy(x).reshape(*batch, n, k)

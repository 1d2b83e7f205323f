"""MatrixLogarithm (ops/linalg_logm.py): the principal logarithm of each square complex matrix,
by a complex Schur decomposition and the inverse scaling and squaring method on its triangular
factor (Higham, Functions of Matrices, 11.5; Al-Mohy & Higham 2012), in numba loops.

TF's kernel is Eigen's `MatrixBase::log()` (a Schur-Parlett method whose diagonal blocks are
the same inverse scaling and squaring); this one computes in complex128 for both types:

- A = Z T Z^H: Householder reduction to Hessenberg form, then single-shift QR sweeps (Givens
  rotations, Wilkinson shifts, an exceptional shift every tenth sweep of a block);
- T is replaced by square roots T^(1/2^s) (the Bjorck-Hammarling recurrence) until
  ||T^(1/2^s) - I||_1 is below the bound of a Pade degree <= 7 (Eigen's double precision
  bounds, and its rule of one more root where that lowers the degree by two or more);
- log(T) = 2^s r_m(T^(1/2^s) - I), r_m the degree-m Pade approximant of log(1 + x) as a sum of
  m partial fractions at the Gauss-Legendre nodes of [0, 1] (triangular solves). The diagonal
  of T^(1/2^s) - I comes from the original eigenvalues without cancellation (Al-Mohy & Higham's
  sqrt_power_1), and the diagonal and first superdiagonal of the result are set to their exact
  values (log of the eigenvalues; the 2x2 formula with the unwinding number);
- log(A) = Z log(T) Z^H (ATen matmuls).

A singular matrix (an eigenvalue exactly 0) or one with a NaN or inf gives NaN everywhere, as
TF's. Eigenvalues on the negative real axis take the branch their imaginary zero's sign gives
(log(-1 + 0j) = i pi, log(-1 - 0j) = -i pi), as std::log does in Eigen.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import torch

from ndflow.kernels.build_once import built_once
from ndflow.kernels.registry import kernel
from ndflow.kernels.row_threads import over_rows
from ndflow.ops import linalg_logm

# Eigen's bounds on ||T - I||_1 for Pade degrees 3..7 (double precision)
_THETA = np.array([1.6206284795015624e-2, 5.3873532631381171e-2, 1.1352802267628681e-1,
                   1.8662860613541288e-1, 2.642960831111435e-1])
_MAX_ROOTS = 100


def _gauss_legendre() -> tuple:
    """Nodes and weights on [0, 1] of degrees 3..7, row d - 3 (zero-padded to 7)."""
    nodes, weights = np.zeros((5, 7)), np.zeros((5, 7))
    for d in range(3, 8):
        x, w = np.polynomial.legendre.leggauss(d)
        nodes[d - 3, :d], weights[d - 3, :d] = (x + 1.0) / 2.0, w / 2.0
    return nodes, weights


_NODES, _WEIGHTS = _gauss_legendre()


def _cabs1(z):
    return abs(z.real) + abs(z.imag)


def _hessenberg(a, z, u):
    """Reduces `a` in place to upper Hessenberg form by Householder reflections, applying
    them to `z` (Z^H A Z is the reduced matrix; u: workspace [n])."""
    n = a.shape[0]
    for k in range(n - 2):
        m = n - k - 1
        tail = 0.0
        for i in range(k + 2, n):
            tail += a[i, k].real ** 2 + a[i, k].imag ** 2
        if tail == 0.0:
            continue
        alpha = a[k + 1, k]
        size = abs(alpha)
        norm = math.sqrt(size * size + tail)
        phase = alpha / size if size > 0.0 else 1.0 + 0.0j
        beta = -phase * norm
        u[0] = alpha - beta
        for i in range(1, m):
            u[i] = a[k + 1 + i, k]
        scale = 2.0 / (u[0].real ** 2 + u[0].imag ** 2 + tail)
        for j in range(k, n):
            s = 0.0j
            for i in range(m):
                s += u[i].conjugate() * a[k + 1 + i, j]
            s *= scale
            for i in range(m):
                a[k + 1 + i, j] -= u[i] * s
        for i in range(n):
            s = 0.0j
            t = 0.0j
            for j in range(m):
                s += a[i, k + 1 + j] * u[j]
                t += z[i, k + 1 + j] * u[j]
            s *= scale
            t *= scale
            for j in range(m):
                a[i, k + 1 + j] -= s * u[j].conjugate()
                z[i, k + 1 + j] -= t * u[j].conjugate()
        a[k + 1, k] = beta
        for i in range(k + 2, n):
            a[i, k] = 0.0


def _givens(f, g):
    """(c, s, r): c real, [[c, s], [-conj(s), c]] @ [f, g] = [r, 0]."""
    if g == 0:
        return 1.0, 0.0j, f
    if f == 0:
        ag = abs(g)
        return 0.0, g.conjugate() / ag, ag + 0.0j
    af, ag = abs(f), abs(g)
    norm = math.hypot(af, ag)
    phase = f / af
    return af / norm, phase * g.conjugate() / norm, phase * norm


def _schur(h, z, max_sweeps):
    """Reduces Hessenberg `h` in place to upper triangular T by shifted QR sweeps, applying
    the rotations to `z`; False where it did not converge."""
    n = h.shape[0]
    eps = 2.220446049250313e-16
    ihi = n - 1
    its = 0
    sweeps = 0
    while ihi > 0:
        low = ihi
        while low > 0:
            s = _cabs1(h[low - 1, low - 1]) + _cabs1(h[low, low])
            if _cabs1(h[low, low - 1]) <= eps * s:
                h[low, low - 1] = 0.0
                break
            low -= 1
        if low == ihi:
            ihi -= 1
            its = 0
            continue
        its += 1
        sweeps += 1
        if sweeps > max_sweeps:
            return False
        if its % 10 == 0:
            mu = h[ihi, ihi] + 0.75 * abs(h[ihi, ihi - 1].real) + 0.75 * abs(
                h[ihi, ihi - 1].imag)
        else:
            a, b = h[ihi - 1, ihi - 1], h[ihi - 1, ihi]
            c, d = h[ihi, ihi - 1], h[ihi, ihi]
            p = 0.5 * (a - d)
            disc = np.sqrt(p * p + b * c)
            big = p + disc if abs(p + disc) >= abs(p - disc) else p - disc
            mu = d - b * c / big if big != 0 else d
        x = h[low, low] - mu
        y = h[low + 1, low]
        for k in range(low, ihi):
            if k > low:
                x = h[k, k - 1]
                y = h[k + 1, k - 1]
            c, s, r = _givens(x, y)
            if k > low:
                h[k, k - 1] = r
                h[k + 1, k - 1] = 0.0
            sc = s.conjugate()
            for j in range(k, n):
                t1, t2 = h[k, j], h[k + 1, j]
                h[k, j] = c * t1 + s * t2
                h[k + 1, j] = c * t2 - sc * t1
            for i in range(min(k + 2, ihi) + 1):
                t1, t2 = h[i, k], h[i, k + 1]
                h[i, k] = c * t1 + sc * t2
                h[i, k + 1] = c * t2 - s * t1
            for i in range(n):
                t1, t2 = z[i, k], z[i, k + 1]
                z[i, k] = c * t1 + sc * t2
                z[i, k + 1] = c * t2 - s * t1
    for j in range(n):
        for i in range(j + 1, n):
            h[i, j] = 0.0
    return True


def _sqrt_triangular(t, r):
    """r = the principal square root of upper triangular t (Bjorck-Hammarling)."""
    n = t.shape[0]
    for j in range(n):
        r[j, j] = np.sqrt(t[j, j])
        for i in range(j - 1, -1, -1):
            s = t[i, j]
            for k in range(i + 1, j):
                s -= r[i, k] * r[k, j]
            r[i, j] = s / (r[i, i] + r[j, j])
        for i in range(j + 1, n):
            r[i, j] = 0.0


def _root_minus_one(a, s):
    """a^(1/2^s) - 1 without cancellation (Al-Mohy & Higham 2012, Algorithm 5.2)."""
    if s == 0:
        return a - 1.0
    roots = s
    if abs(cmath.phase(a)) >= 0.5 * math.pi:
        a = np.sqrt(a)
        roots = s - 1
    if roots == 0:
        return a - 1.0
    z0 = a - 1.0
    a = np.sqrt(a)
    r = 1.0 + a
    for _ in range(1, roots):
        a = np.sqrt(a)
        r = r * (1.0 + a)
    return z0 / r


def _log_superdiagonal(l1, l2, t12):
    """log([[l1, t12], [0, l2]])[0, 1] (Eigen's matrix_log_compute_2x2)."""
    y = l2 - l1
    if y == 0:
        return t12 / l1
    log1, log2 = np.log(l1), np.log(l2)
    if abs(l1) < 0.5 * abs(l2) or abs(l1) > 2.0 * abs(l2):
        return t12 * (log2 - log1) / y
    unwinding = math.ceil(((log2 - log1).imag - math.pi) / (2.0 * math.pi))
    z = y / l1
    u = 1.0 + z             # log1p(z) as Eigen's fallback computes it: z log(u) / (u - 1)
    log1p = z if u == 1.0 else z * (np.log(u) / (u - 1.0))
    return t12 * (log1p + 2.0j * math.pi * unwinding) / y


def _pade_degree(norm, theta):
    d = 3
    while d < 7 and norm > theta[d - 3]:
        d += 1
    return d


def _log_triangular(t, out, nodes, weights, theta, cur, nxt):
    """out = the principal logarithm of upper triangular t (nonzero finite diagonal; cur and
    nxt: workspaces like t)."""
    n = t.shape[0]
    if n == 1:
        out[0, 0] = np.log(t[0, 0])
        return
    cur[:, :] = t
    roots = 0
    extra = 0
    degree = 7
    while True:
        norm = 0.0
        for j in range(n):
            col = 0.0
            for i in range(j + 1):
                col += abs(cur[i, j] - 1.0) if i == j else abs(cur[i, j])
            norm = max(norm, col)
        if not np.isfinite(norm):
            out[:, :] = np.nan
            return
        if norm < theta[4]:
            degree = _pade_degree(norm, theta)
            if degree - _pade_degree(0.5 * norm, theta) <= 1 or extra == 1:
                break
            extra += 1
        if roots == _MAX_ROOTS:
            break
        _sqrt_triangular(cur, nxt)
        cur, nxt = nxt, cur
        roots += 1
    x = cur
    for i in range(n):
        x[i, i] = _root_minus_one(t[i, i], roots)
    out[:, :] = 0.0
    y = nxt
    for k in range(degree):
        node, weight = nodes[degree - 3, k], weights[degree - 3, k]
        for j in range(n):   # (I + node X) Y = X, column j, back substitution
            for i in range(j, -1, -1):
                s = x[i, j]
                for m in range(i + 1, j + 1):
                    s -= node * x[i, m] * y[m, j]
                y[i, j] = s / (1.0 + node * x[i, i])
        for j in range(n):
            for i in range(j + 1):
                out[i, j] += weight * y[i, j]
    scale = math.ldexp(1.0, roots)
    for j in range(n):
        for i in range(j + 1):
            out[i, j] *= scale
    for i in range(n):
        out[i, i] = np.log(t[i, i])
    for i in range(n - 1):
        out[i, i + 1] = _log_superdiagonal(t[i, i], t[i + 1, i + 1], t[i, i + 1])


def _logm_batch(a, log_t, z, nodes, weights, theta, first, stop):
    """For matrices first..stop-1 of `a` [b, n, n] (overwritten): z = its Schur vectors and
    log_t the logarithm of its Schur factor (NaN where it is singular, not finite or not
    reduced)."""
    n = a.shape[1]
    u = np.empty(n, np.complex128)
    cur = np.empty((n, n), np.complex128)
    nxt = np.empty((n, n), np.complex128)
    for m in range(first, stop):
        h, q, out = a[m], z[m], log_t[m]
        q[:, :] = 0.0
        for i in range(n):
            q[i, i] = 1.0
        ok = True
        for i in range(n):
            for j in range(n):
                if not (np.isfinite(h[i, j].real) and np.isfinite(h[i, j].imag)):
                    ok = False
        if ok:
            _hessenberg(h, q, u)
            ok = _schur(h, q, 100 * n)
        if ok:
            for i in range(n):
                if h[i, i] == 0:
                    ok = False
        if not ok:
            out[:, :] = np.nan
            continue
        _log_triangular(h, out, nodes, weights, theta, cur, nxt)


def _build():
    """The batch solver, compiled by numba (cached on disk); the Python functions without it."""
    global _cabs1, _hessenberg, _givens, _schur, _sqrt_triangular, _root_minus_one
    global _log_superdiagonal, _pade_degree, _log_triangular
    try:
        import numba  # noqa: PLC0415 - loads with the first matrix logarithm
    except ImportError:
        return _logm_batch
    jit = numba.njit(cache=True, nogil=True, error_model="numpy")
    _cabs1, _hessenberg, _givens, _schur = (jit(f) for f in (_cabs1, _hessenberg, _givens,
                                                              _schur))
    _sqrt_triangular, _root_minus_one = jit(_sqrt_triangular), jit(_root_minus_one)
    _log_superdiagonal, _pade_degree = jit(_log_superdiagonal), jit(_pade_degree)
    _log_triangular = jit(_log_triangular)
    return jit(_logm_batch)


_solver = built_once(_build)


def logm(x: torch.Tensor) -> torch.Tensor:
    """The principal logarithms of the square complex matrices `x` [..., n, n]."""
    n = x.shape[-1]
    if x.numel() == 0:
        return x.clone()
    a = x.detach().cpu().to(torch.complex128).reshape(-1, n, n).numpy().copy()
    log_t = np.empty_like(a)
    z = np.empty_like(a)
    # the batch split over threads, each with >= ~4K n^3
    over_rows(_solver(), a.shape[0], max(1, 4096 // n ** 3), a, log_t, z, _NODES, _WEIGHTS,
              _THETA)
    zt, lt = torch.from_numpy(z), torch.from_numpy(log_t)
    out = zt @ lt @ zt.mH
    return out.reshape(x.shape).to(x.dtype).to(x.device)


@kernel(linalg_logm.MatrixLogarithm)
def _matrix_logarithm(node):
    return logm

"""_EighTridiagonal (ops/linalg_eigh_tridiagonal.py): eigenvalues of a Hermitian tridiagonal
matrix by bisection with Sturm sequence counts, eigenvectors by inverse iteration, the steps of
TF's Python composite (linalg_impl.eigh_tridiagonal) fused into numba loops.

The arithmetic is the composite's, operation for operation in the input's precision (float16
as Eigen's half: each operation in float32, rounded to half), so eigenvalues are TF's bit for
bit on real input:

- the Gershgorin interval widened by n * 2.1 * eps * ||T|| (for select 'a' and 'i'), or the
  interval of select 'v' whose Sturm counts give the eigenvalue indices;
- every wanted eigenvalue bisected in parallel while the widest interval is above the
  tolerance (max(tol, eps * ||T||)) and fewer than mantissa-bits + 1 steps were taken, the
  Sturm recurrence q_i = alpha_i - beta_i^2 / q_(i-1) - x with TF's pivmin guard; the
  eigenvalues' recurrences advance side by side in the inner loop (independent divisions
  LLVM vectorizes: TF's graph runs them as vectors too, with an op per step).

Eigenvectors: TF's inverse iteration from its fixed start (stateless normals of seed [7, 42],
one row per eigenvalue): at most 5 rounds while a row's norm still grows by 10%, each solving
(T - lambda I) x = v by TridiagonalSolve's partial pivoting with singular pivots perturbed
(the LAPACK xLAGTS logic of TF's kernel), normalizing, and re-orthonormalizing each cluster of
eigenvalues closer than sqrt(eps) * ||T|| by Eigen's Householder QR (its sign convention).
Sums (the vectors' norms) are added in order, so those results can differ from TF's in the
last bits.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import philox, philox_numba
from ndflow.kernels.build_once import built_once
from ndflow.kernels.registry import kernel
from ndflow.ops import linalg_eigh_tridiagonal as et

_SEED = (7, 42)
_MAX_ROUNDS = 5


def _round_to(x, mode):
    """float32 `x` rounded to nearest even half (mode 1); `x` itself for mode 0, a non-finite
    or a zero `x`."""
    if mode == 0 or not np.isfinite(x) or x == 0:
        return x
    ax = abs(float(x))
    e = math.frexp(ax)[1] - 1
    quantum = math.ldexp(1.0, max(e, -14) - 10)
    r = np.rint(ax / quantum) * quantum
    if r > 65504.0:
        r = np.inf
    return np.float32(math.copysign(r, float(x)))


def _sturm(alpha, beta_sq, pivmin, perturbation, x, q, count, mode):
    """count[j] = how many eigenvalues are below x[j] (TF's _sturm, in the arrays'
    precision), the points in the inner loop so that their recurrences run side by side (q:
    workspace)."""
    k = x.shape[0]
    a0 = alpha[0]
    for j in range(k):
        qj = _round_to(a0 - x[j], mode)
        count[j] = 1 if qj < 0 else 0
        q[j] = perturbation if a0 == x[j] else qj
    lowest = -pivmin
    for i in range(1, alpha.shape[0]):
        ai, bi = alpha[i], beta_sq[i - 1]
        if mode == 0:
            for j in range(k):
                qj = ai - bi / q[j] - x[j]
                below = qj <= pivmin
                count[j] += below
                q[j] = min(qj, lowest) if below else qj
        else:
            for j in range(k):
                qj = _round_to(_round_to(ai - _round_to(bi / q[j], mode), mode) - x[j], mode)
                below = qj <= pivmin
                count[j] += below
                q[j] = min(qj, lowest) if below else qj


def _bisect(alpha, beta_sq, scalars, targets, max_it, mode, out):
    """out[j] = the targets[j]-th eigenvalue. scalars: lower, upper, pivmin, the alpha[0]
    perturbation, the absolute tolerance and 0.5, in the arrays' type."""
    lower0, upper0, pivmin, perturbation, abs_tol, half = (
        scalars[0], scalars[1], scalars[2], scalars[3], scalars[4], scalars[5])
    k = targets.shape[0]
    lower = np.empty(k, alpha.dtype)
    upper = np.empty(k, alpha.dtype)
    mid = np.empty(k, alpha.dtype)
    q = np.empty(k, alpha.dtype)
    count = np.empty(k, np.int64)
    lower[:] = lower0
    upper[:] = upper0
    for _ in range(max_it):
        if k == 0:
            break
        width = _round_to(upper[0] - lower[0], mode)
        for j in range(1, k):
            w = _round_to(upper[j] - lower[j], mode)
            if not w <= width:      # reduce_max: NaN wins
                width = w
        if not abs_tol < width:
            break
        for j in range(k):
            mid[j] = _round_to(_round_to(half * lower[j], mode) + _round_to(half * upper[j],
                                                                             mode), mode)
        _sturm(alpha, beta_sq, pivmin, perturbation, mid, q, count, mode)
        for j in range(k):
            if count[j] <= targets[j]:
                lower[j] = mid[j]
            else:
                upper[j] = mid[j]
    for j in range(k):
        out[j] = _round_to(_round_to(half * lower[j], mode) + _round_to(half * upper[j], mode),
                           mode)


def _perturb_pivot(perturb, pivot, row, safemin, bignum, one):
    """TF's MaybePerturbPivot on a one-column right-hand side: (pivot, row)."""
    abs_pivot = abs(pivot)
    if abs_pivot >= one:
        return pivot, row
    perturb = max(abs(perturb), safemin)
    perturb = np.copysign(perturb, pivot.real)
    max_factor = abs(row)
    while abs_pivot < one:
        if abs_pivot < safemin:
            if abs_pivot == 0 or max_factor * safemin > abs_pivot:
                pivot += perturb
                perturb *= 2
            else:
                pivot *= bignum
                row *= bignum
                break
        elif max_factor > abs_pivot * bignum:
            pivot += perturb
            perturb *= 2
        else:
            break
        abs_pivot = abs(pivot)
    return pivot, row


def _solve_perturbed(sup, diag, sub, x, u0, u1, u2, rc, tc):
    """x <- T^-1 x for tridiagonal T (n >= 2) as TF's TridiagonalSolve with partial_pivoting
    and perturb_singular (Gaussian elimination with row interchanges, the forward solve fused,
    tiny pivots perturbed). rc: eps, safemin, bignum, 1 (real); tc: 0 (the scalar type)."""
    n = diag.shape[0]
    eps, safemin, bignum, one = rc[0], rc[1], rc[2], rc[3]
    zero = tc[0]
    rzero = eps - eps
    u0[0] = diag[0]
    u1[0] = sup[0]
    max_abs_u = max(abs(u0[0]), abs(u1[0]))
    scale1 = abs(u0[0]) + abs(u1[0])
    for k in range(n - 1):
        u0[k + 1] = diag[k + 1]
        scale2 = abs(sub[k + 1]) + abs(u0[k + 1])
        if k < n - 2:
            scale2 += abs(sup[k + 1])
        if sub[k + 1] == zero:
            scale1 = scale2
            u1[k + 1] = sup[k + 1]
            u2[k] = zero
        else:
            piv1 = rzero if u0[k] == zero else abs(u0[k]) / scale1
            piv2 = abs(sub[k + 1]) / scale2
            if piv2 <= piv1:
                scale1 = scale2
                factor = sub[k + 1] / u0[k]
                u0[k + 1] = diag[k + 1] - factor * u1[k]
                u1[k + 1] = sup[k + 1]
                u2[k] = zero
                x[k + 1] = x[k + 1] - factor * x[k]
            else:
                factor = u0[k] / sub[k + 1]
                u0[k] = sub[k + 1]
                u0[k + 1] = u1[k] - factor * diag[k + 1]
                u1[k] = diag[k + 1]
                if k < n - 2:
                    u2[k] = sup[k + 1]
                    u1[k + 1] = -factor * sup[k + 1]
                rhs = x[k + 1]
                x[k + 1] = x[k] - factor * rhs
                x[k] = rhs
        if k < n - 2:
            max_abs_u = max(max_abs_u, abs(u0[k]), abs(u1[k]), abs(u2[k]))
    max_abs_u = max(max_abs_u, abs(u0[n - 1]))
    tol = eps * max_abs_u
    denom, row = _perturb_pivot(tol, u0[n - 1], x[n - 1], safemin, bignum, one)
    x[n - 1] = row * (tc[1] / denom)
    denom, row = _perturb_pivot(np.copysign(tol, u0[n - 2].real), u0[n - 2],
                                x[n - 2] - u1[n - 2] * x[n - 1], safemin, bignum, one)
    x[n - 2] = row * (tc[1] / denom)
    for k in range(n - 3, -1, -1):
        denom, row = _perturb_pivot(np.copysign(tol, u0[k].real), u0[k],
                                    x[k] - u1[k] * x[k + 1] - u2[k] * x[k + 2],
                                    safemin, bignum, one)
        x[k] = row * (tc[1] / denom)


def _row_norms(v, out):
    """out[j] = sqrt(sum_i v[j, i] * conj(v[j, i])) in v's type (tf.norm's formula)."""
    for j in range(v.shape[0]):
        s = v[j, 0] * np.conj(v[j, 0])
        for i in range(1, v.shape[1]):
            s += v[j, i] * np.conj(v[j, i])
        out[j] = np.sqrt(s)


def _orthonormalize(v, start, end, a, q, tau, tiny):
    """Rows start..end-1 of v <- the columns of Q of Eigen's HouseholderQR of their
    transpose (a [n, c], q [n, c] and tau [c] are workspaces)."""
    n, c = v.shape[1], end - start
    for i in range(n):
        for j in range(c):
            a[i, j] = v[start + j, i]
    for k in range(c):
        c0 = a[k, k]
        tail = tiny - tiny
        for i in range(k + 1, n):
            tail += (a[i, k] * np.conj(a[i, k])).real
        if tail <= tiny and c0.imag * c0.imag <= tiny:
            tau[k] = c0 - c0
            beta = c0.real
            for i in range(k + 1, n):
                a[i, k] = tau[k]
        else:
            beta = np.sqrt((c0 * np.conj(c0)).real + tail)
            if c0.real >= 0:
                beta = -beta
            for i in range(k + 1, n):
                a[i, k] = a[i, k] / (c0 - beta)
            tau[k] = np.conj((beta - c0) / beta)
        a[k, k] = beta
        if tau[k] != 0:
            for j in range(k + 1, c):
                t = a[k, j]
                for i in range(k + 1, n):
                    t += np.conj(a[i, k]) * a[i, j]
                a[k, j] -= tau[k] * t
                for i in range(k + 1, n):
                    a[i, j] -= tau[k] * a[i, k] * t
    for i in range(n):
        for j in range(c):
            q[i, j] = (tau[0] - tau[0]) + (1 if i == j else 0)
    for k in range(c - 1, -1, -1):      # Q = H_0 ... H_(c-1), H_k = I - conj(tau_k) v v^H
        h = np.conj(tau[k])
        if h == 0:
            continue
        for j in range(c):
            t = q[k, j]
            for i in range(k + 1, n):
                t += np.conj(a[i, k]) * q[i, j]
            q[k, j] -= h * t
            for i in range(k + 1, n):
                q[i, j] -= h * a[i, k] * t
    for j in range(c):
        for i in range(n):
            v[start + j, i] = q[i, j]


def _inverse_iteration(alpha, sup, sub, shifts, v, starts, ends, rc, tc):
    """TF's inverse iteration on the rows of v (its start, overwritten by the eigenvectors).
    tc: 0, 1 and 1.1 in the scalar type; rc: eps, safemin, bignum, 1 and tiny (real)."""
    k, n = v.shape
    nrm = np.empty(k, v.dtype)
    old = np.empty(k, v.dtype)
    x = np.empty(n, v.dtype)
    diag = np.empty(n, v.dtype)
    u0, u1, u2 = np.empty(n, v.dtype), np.empty(n, v.dtype), np.empty(n, v.dtype)
    width = 1
    for c in range(starts.shape[0]):
        width = max(width, ends[c] - starts[c])
    a, q, tau = np.empty((n, width), v.dtype), np.empty((n, width), v.dtype), np.empty(width,
                                                                                        v.dtype)
    _row_norms(v, nrm)
    for j in range(k):
        old[j] = tc[0]
        for i in range(n):
            v[j, i] = v[j, i] / nrm[j]
    for _ in range(_MAX_ROUNDS):
        grows = False
        for j in range(k):
            if nrm[j].real >= (tc[2] * old[j]).real:
                grows = True
        if not grows:
            break
        for j in range(k):
            for i in range(n):
                diag[i] = alpha[i] - shifts[j]
                x[i] = v[j, i]
            _solve_perturbed(sup, diag, sub, x, u0, u1, u2, rc, tc)
            for i in range(n):
                v[j, i] = x[i]
        old[:] = nrm
        _row_norms(v, nrm)
        for j in range(k):
            for i in range(n):
                v[j, i] = v[j, i] / nrm[j]
        for c in range(starts.shape[0]):
            _orthonormalize(v, starts[c], ends[c], a, q, tau, rc[4])


def _build() -> dict:
    """The kernels, compiled by numba (cached on disk); the Python functions without it."""
    global _round_to, _sturm, _perturb_pivot, _solve_perturbed, _row_norms, _orthonormalize
    try:
        import numba  # noqa: PLC0415 - loads with the first eigh_tridiagonal
    except ImportError:
        return {"sturm": _sturm, "bisect": _bisect, "inverse_iteration": _inverse_iteration}
    jit = numba.njit(cache=True, nogil=True, error_model="numpy")
    _round_to, _sturm = jit(_round_to), jit(_sturm)
    _perturb_pivot, _solve_perturbed = jit(_perturb_pivot), jit(_solve_perturbed)
    _row_norms, _orthonormalize = jit(_row_norms), jit(_orthonormalize)
    return {"sturm": _sturm, "bisect": jit(_bisect),
            "inverse_iteration": jit(_inverse_iteration)}


_kernels = built_once(_build)


def _bad(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


class _Problem:
    """The composite's setup (TF's op order, NumPy in the input's precision: NumPy computes
    float16 operations in float32 and rounds, as Eigen's half)."""

    def __init__(self, alpha: np.ndarray, beta: np.ndarray):
        if np.iscomplexobj(alpha):
            a = alpha.real.copy()
            # real(conj(beta) * beta): two products, then their sum (NumPy's complex multiply
            # may fuse them, Eigen's does not)
            beta_sq = np.square(beta.real) + np.square(beta.imag)
            beta_abs = np.sqrt(beta_sq)
        else:
            a = alpha
            beta_sq = np.square(beta)
            beta_abs = np.abs(beta)
        rt = a.dtype.type
        self.finfo = finfo = np.finfo(a.dtype)
        self.n = n = a.shape[0]
        self.alpha, self.beta_sq, self.rt = a, beta_sq, rt
        off = np.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
        self.lambda_max = np.minimum(finfo.max, np.max(a + off))
        self.lambda_min = np.maximum(finfo.min, np.min(a - off))
        self.t_norm = np.maximum(np.abs(self.lambda_min), np.abs(self.lambda_max))
        one = rt(1)
        safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
        self.pivmin = safemin * np.maximum(one, np.max(beta_sq))
        self.perturbation = np.square(finfo.eps * beta_abs[0])
        self.norm_slack = rt(n) * rt(2.1) * finfo.eps * self.t_norm
        self.mode = 1 if a.dtype == np.float16 else 0
        work = np.float32 if self.mode else a.dtype
        self.work_alpha = np.ascontiguousarray(a, work)
        self.work_beta_sq = np.ascontiguousarray(beta_sq, work)

    def sturm(self, x) -> int:
        work = self.work_alpha.dtype
        point, q, count = np.array([x], work), np.empty(1, work), np.empty(1, np.int64)
        _kernels()["sturm"](self.work_alpha, self.work_beta_sq, work.type(self.pivmin),
                            work.type(self.perturbation), point, q, count, self.mode)
        return int(count[0])

    def eigenvalues(self, select: str, select_range: np.ndarray, tol) -> np.ndarray:
        finfo, rt = self.finfo, self.rt
        abs_tol = finfo.eps * self.t_norm
        if tol is not None:
            abs_tol = np.maximum(rt(tol), abs_tol)
        if select == "a":
            targets = np.arange(self.n)
        elif select == "i":
            lo, hi = (int(v) for v in select_range)
            if not lo <= hi:
                raise _bad(f"Got empty index range in select_range.\nCondition x <= y did not "
                           f"hold.\nFirst 1 elements of x:\n[{lo}]\nFirst 1 elements of y:\n"
                           f"[{hi}]")
            targets = np.arange(lo, hi + 1)
        else:
            lo, hi = (rt(v) for v in select_range)
            if not lo < hi:
                raise _bad(f"Got empty interval in select_range.\nCondition x < y did not "
                           f"hold.\nFirst 1 elements of x:\n[{lo}]\nFirst 1 elements of y:\n"
                           f"[{hi}]")
        if select in ("a", "i"):
            lower = self.lambda_min - self.norm_slack - rt(2 * 2.1) * self.pivmin
            upper = self.lambda_max + self.norm_slack + rt(2.1) * self.pivmin
        else:
            lower = lo - self.norm_slack - rt(2 * 2.1) * self.pivmin
            upper = hi + self.norm_slack + rt(2.1) * self.pivmin
            targets = np.arange(self.sturm(lower), self.sturm(upper))
        upper = np.minimum(upper, finfo.max)
        lower = np.maximum(lower, finfo.min)
        work = self.work_alpha.dtype
        scalars = np.array([lower, upper, self.pivmin, self.perturbation, abs_tol, 0.5], work)
        out = np.empty(targets.shape[0], work)
        _kernels()["bisect"](self.work_alpha, self.work_beta_sq, scalars,
                             targets.astype(np.int64), finfo.nmant + 1, self.mode, out)
        return out.astype(rt)


def _clusters(eigvals: np.ndarray) -> tuple:
    """(starts, ends) of the runs of eigenvalues closer than sqrt(eps) * ||T|| (TF's)."""
    gap = eigvals[1:] - eigvals[:-1]
    t_norm = np.maximum(np.abs(eigvals[0]), np.abs(eigvals[-1]))
    close = gap < np.sqrt(np.finfo(eigvals.dtype).eps) * t_norm
    left = np.concatenate([[False], close])
    right = np.concatenate([close, [False]])
    starts = np.flatnonzero(~left & right)
    ends = np.flatnonzero(left & ~right) + 1
    return starts.astype(np.int64), ends.astype(np.int64)


def eigenvectors(alpha: np.ndarray, beta: np.ndarray, eigvals: np.ndarray) -> np.ndarray:
    """[n, k]: TF's inverse iteration for the eigenvalues `eigvals` (ascending)."""
    k, n = eigvals.shape[0], alpha.shape[0]
    if k == 0:
        raise _bad("slice index 0 of dimension 0 out of bounds.")
    dtype = beta.dtype
    key, counter = philox.key_counter_from_seed(*_SEED)
    v0 = philox_numba.generate("normal", "float", k * n, key, counter)[:k * n]
    v = np.ascontiguousarray(v0.reshape(k, n).astype(dtype))
    real = np.finfo(dtype)
    rt = real.dtype.type
    rc = np.array([real.eps, real.tiny, rt(1) / real.tiny, 1, real.tiny], real.dtype)
    tc = np.array([0, 1, 1.1], dtype)
    sup = np.concatenate([beta, np.zeros(1, dtype)])
    sub = np.concatenate([np.zeros(1, dtype), np.conj(beta)])
    starts, ends = _clusters(eigvals)
    _kernels()["inverse_iteration"](np.ascontiguousarray(alpha, dtype), sup, sub,
                                    eigvals.astype(dtype), v, starts, ends, rc, tc)
    return v.T


def _numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    return t.numpy() if t.dtype is not torch.bfloat16 else t.float().numpy()


@kernel(et.EighTridiagonal)
def _eigh_tridiagonal(node):
    select = node.attrs["select"]
    values_only = node.attrs["eigvals_only"]
    real_dtype = node.output_dtypes[0].torch_dtype
    dtype = node.input_dtypes[0].torch_dtype

    def run(alpha, beta, select_range, tol):
        n, m = alpha.shape[0], beta.shape[0]
        if alpha.dim() != 1 or beta.dim() != 1 or m != n - 1:
            raise _bad(f"Incompatible shapes: [{n}] vs. [{m + 1}]")
        a, b = _numpy(alpha), _numpy(beta)
        problem = _Problem(a, b)
        t = _numpy(tol).item()
        values = problem.eigenvalues(select, _numpy(select_range), t if t else None)
        e = torch.from_numpy(values).to(real_dtype).to(alpha.device)
        if values_only:
            return e, torch.zeros(0, dtype=dtype, device=alpha.device)
        v = torch.from_numpy(np.ascontiguousarray(eigenvectors(a, b, values)))
        return e, v.to(alpha.device)
    return run

"""ATen kernels for the special functions (ops/math_special.py), with TensorFlow's values
where ATen's differ: digamma(0) and igamma(0, x) are NaN, x * f(y) is 0 wherever x is 0 even
for a NaN y, zeta at a pole is TF's inf or NaN. Half-precision Ndtri (ATen has only
float32/64 CPU kernels) is computed in float32.
"""

from __future__ import annotations

import math

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import as_shape
from ndflow.kernels.registry import kernel
from ndflow.ops import math_special as sp

_LOW = (torch.float16, torch.bfloat16)


def _nan_like(x):
    return torch.full((), float("nan"), dtype=x.dtype, device=x.device)


def _in_float32(fn):
    def run(*xs):
        if xs[0].dtype in _LOW:
            return fn(*[x.float() for x in xs]).to(xs[0].dtype)
        return fn(*xs)
    return run


def _one_at_zero(fn):
    """I0 and I0e are exactly 1 at 0 in TF (Eigen's float32 Chebyshev series); ATen's float32
    series gives 0.99999994 there. The fix-up, a compare and a masked fill, costs ~2% of the
    kernel; float64 is exact already (float16 runs in float32, as TF's)."""
    def run(x):
        out = fn(x)
        return out.masked_fill_(x == 0, 1.0) if x.dtype is torch.float32 else out
    return run


def _digamma(x):
    return torch.where(x == 0, _nan_like(x), torch.digamma(x))  # TF: NaN at 0 and -0


def _zeta(x, q):
    """ATen's Hurwitz zeta, but at a non-positive integer q TF's (Cephes') value: inf for an
    even integer x, NaN otherwise (ATen: inf)."""
    out = torch.special.zeta(x, q)
    pole = (q <= 0) & (q == torch.floor(q))
    even = (x == torch.floor(x)) & (torch.remainder(x, 2) == 0)
    return torch.where(pole & ~even, _nan_like(out), out)


def _polygamma(a, x):
    """TF's (Eigen's) definition: digamma for a = 0, (-1)**(a+1) a! zeta(a+1, x) for an
    integer a >= 1, NaN for any other a."""
    a, x = torch.broadcast_tensors(a, x)
    n1 = a + 1
    sign = 1.0 - 2.0 * torch.remainder(n1, 2)
    higher = sign * torch.exp(torch.lgamma(n1)) * _zeta(n1, x)
    out = torch.where(a == 0, _digamma(x), higher)
    return torch.where((a == torch.floor(a)) & (a >= 0), out, _nan_like(out))


def _igamma(fn):
    return lambda a, x: torch.where(a == 0, _nan_like(a), fn(a, x))  # ATen: P(0, x) = 1


def _igamma_grad_a(a, x):
    """d P(a, x) / da by Richardson-extrapolated central differences of ATen's igamma in
    float64 (ATen has no derivative of igamma in `a`; TF evaluates a series). The step follows
    the scale on which P varies in `a` (sqrt(a), and a itself near 0), and where P is near 1
    the differences are taken of Q = 1 - P (igammac), which keeps its digits."""
    dtype = torch.promote_types(a.dtype, x.dtype)
    a64, x64 = torch.broadcast_tensors(a.double(), x.double())
    h = torch.minimum(torch.sqrt(torch.clamp(a64, min=1.0)) * 1e-3, a64 / 8)
    upper = x64 > a64
    sign = torch.where(upper, -1.0, 1.0).to(a64)

    def diff(step):
        lo, hi = a64 - step, a64 + step
        return torch.where(upper, torch.igammac(hi, x64) - torch.igammac(lo, x64),
                           torch.igamma(hi, x64) - torch.igamma(lo, x64))

    d = sign * (8 * diff(h) - diff(2 * h)) / (12 * h)
    return torch.where(a64 > 0, d, torch.full_like(d, math.nan)).to(dtype)


_TINY = 1e-300


def _betainc_cf(a, b, x):
    """The continued fraction of I_x(a, b) (modified Lentz), iterated until every element has
    converged; float64 inputs with x < (a + 1) / (a + b + 2), where it converges fast."""
    qab, qap, qam = a + b, a + 1, a - 1

    def guard(t):
        return torch.where(t.abs() < _TINY, torch.full_like(t, _TINY), t)

    c = torch.ones_like(x)
    d = 1 / guard(1 - qab * x / qap)
    h = d.clone()
    for m in range(1, 10001):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 / guard(1 + aa * d)
        c = guard(1 + aa / c)
        h = h * d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 / guard(1 + aa * d)
        c = guard(1 + aa / c)
        step = d * c
        h = h * step
        if m % 8 == 0 and not bool(((step - 1).abs() > 1e-16).any()):
            break
    return h


def _betainc(node):
    def betainc(a, b, x):
        message = sp.betainc_mismatch([as_shape(list(t.shape)) for t in (a, b, x)])
        if message:
            raise InvalidArgumentError(None, None, message)
        dtype = a.dtype
        a, b, x = torch.broadcast_tensors(a.double(), b.double(), x.double())
        flip = x > (a + 1) / (a + b + 2)     # I_x(a, b) = 1 - I_(1-x)(b, a)
        a1, b1 = torch.where(flip, b, a), torch.where(flip, a, b)
        x1 = torch.where(flip, 1 - x, x)
        inside = (x1 > 0) & (a > 0) & (b > 0)
        safe_x = torch.where(inside, x1, torch.full_like(x1, 0.5))
        safe_a = torch.where(inside, a1, torch.ones_like(a1))
        safe_b = torch.where(inside, b1, torch.ones_like(b1))
        log_front = (safe_a * torch.log(safe_x) + safe_b * torch.log1p(-safe_x)
                     + torch.lgamma(safe_a + safe_b) - torch.lgamma(safe_a) - torch.lgamma(safe_b))
        part = torch.exp(log_front) * _betainc_cf(safe_a, safe_b, safe_x) / safe_a
        part = torch.where(x1 > 0, part, torch.zeros_like(part))
        out = torch.where(flip, 1 - part, part)
        bad = (a <= 0) | (b <= 0) | (x < 0) | (x > 1) | torch.isnan(a + b + x)
        return torch.where(bad, torch.full_like(out, math.nan), out).to(dtype)
    return betainc


kernel(sp.Betainc)(_betainc)


def _x_times(fn):
    def xf(x, y):
        x, y = torch.broadcast_tensors(x, y)
        return torch.where(x == 0, torch.zeros((), dtype=x.dtype, device=x.device), fn(x, y))
    return xf


def _outside_domain(fn, negative: float, at_zero: float | None = None):
    """`fn`, with TF's (Cephes') values where x < 0 (and at 0) for Bessel functions of the
    second kind, which ATen makes NaN: Y -> -inf, K -> inf; Y1(0) is NaN in TF."""
    def run(x):
        out = fn(x)
        out = torch.where(x < 0, torch.tensor(negative, dtype=out.dtype), out)
        if at_zero is not None:
            out = torch.where(x == 0, torch.tensor(at_zero, dtype=out.dtype), out)
        return out
    return _in_float32(run)


_KERNELS = {
    sp.Lgamma: torch.lgamma,
    sp.Digamma: _digamma,
    sp.Polygamma: _polygamma,
    sp.Zeta: _zeta,
    sp.Igamma: _igamma(torch.igamma),
    sp.Igammac: _igamma(torch.igammac),
    sp.IgammaGradA: _igamma_grad_a,
    sp.Erfc: torch.erfc,
    sp.Erfinv: torch.erfinv,
    sp.Ndtri: _in_float32(torch.special.ndtri),
    sp.BesselI0: _in_float32(_one_at_zero(torch.special.i0)),
    sp.BesselI1: torch.special.i1,
    sp.BesselI0e: _in_float32(_one_at_zero(torch.special.i0e)),
    sp.BesselI1e: torch.special.i1e,
    sp.BesselJ0: _in_float32(torch.special.bessel_j0),
    sp.BesselJ1: _in_float32(torch.special.bessel_j1),
    sp.BesselY0: _outside_domain(torch.special.bessel_y0, -math.inf),
    sp.BesselY1: _outside_domain(torch.special.bessel_y1, -math.inf, math.nan),
    sp.BesselK0: _outside_domain(torch.special.modified_bessel_k0, math.inf),
    sp.BesselK1: _outside_domain(torch.special.modified_bessel_k1, math.inf),
    sp.BesselK0e: _outside_domain(torch.special.scaled_modified_bessel_k0, math.inf),
    sp.BesselK1e: _outside_domain(torch.special.scaled_modified_bessel_k1, math.inf),
    sp.NextAfter: torch.nextafter,
    sp.Xlogy: _x_times(torch.xlogy),
    sp.Xdivy: _x_times(torch.div),
    sp.Xlog1py: _x_times(torch.special.xlog1py),
}


def _register(op_def, fn):
    kernel(op_def)(lambda node: fn)


for _op, _fn in _KERNELS.items():
    _register(_op, _fn)

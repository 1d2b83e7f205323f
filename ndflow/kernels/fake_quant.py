"""Kernels of the fake-quantization ops (TF's fake_quant_ops_functor.h), in float32 as TF
computes them: min and max nudged so that 0.0 is a quantization step
(`_nudge`), values clamped to the nudged range and snapped to a step; the gradients pass
`gradients` through inside the nudged range and sum the rest into d min / d max."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import fake_quant as ops

_F = np.float32


def _bits(node) -> tuple:
    num_bits, narrow = int(node.attrs["num_bits"]), bool(node.attrs["narrow_range"])
    if not 2 <= num_bits <= 16:
        raise InvalidArgumentError(None, None, "num_bits must be between 2 and 16, "
                                   "inclusive")
    return (1 if narrow else 0), (1 << num_bits) - 1


def _nudge(lo: float, hi: float, qmin: int, qmax: int) -> tuple:
    """(nudged_min, nudged_max, scale, inverse scale), float32 throughout."""
    lo, hi = _F(lo), _F(hi)
    fmin, fmax = _F(qmin), _F(qmax)
    scale = _F((hi - lo) / (fmax - fmin))
    inv = _F((fmax - fmin) / (hi - lo))
    zero_from_min = _F(fmin - _F(lo / scale))
    if zero_from_min < fmin:
        zero = qmin
    elif zero_from_min > fmax:
        zero = qmax
    else:   # std::round: half away from zero
        zero = int(np.floor(np.abs(zero_from_min) + 0.5) * np.sign(zero_from_min))
    return _F(_F(fmin - _F(zero)) * scale), _F(_F(fmax - _F(zero)) * scale), scale, inv


def _quantize(x: torch.Tensor, lo, hi, qmin, qmax, divide: bool) -> torch.Tensor:
    nmin, nmax, scale, inv = _nudge(lo, hi, qmin, qmax)
    quant_zero = _F(np.floor(_F(_F(-nmin * inv) + _F(0.5))))
    shifted = x.clamp(max=float(nmax)).clamp(min=float(nmin)) - float(nmin)
    steps = shifted / float(scale) if divide else shifted * float(inv)
    return torch.floor(steps - float(quant_zero) + 0.5) * float(scale)


def _pass_through(grads, x, lo, hi, qmin, qmax) -> tuple:
    nmin, nmax, _, _ = _nudge(lo, hi, qmin, qmax)
    inside = (x >= float(nmin)) & (x <= float(nmax))
    zero = torch.zeros((), dtype=grads.dtype)
    return (torch.where(inside, grads, zero), torch.where(x < float(nmin), grads, zero),
            torch.where(x > float(nmax), grads, zero))


def _check_args(node) -> tuple:
    lo, hi = float(node.attrs["min"]), float(node.attrs["max"])
    if lo >= hi:
        raise InvalidArgumentError(None, None, f"min has to be smaller than max, was: "
                                   f"{lo:g} >= {hi:g}")
    return lo, hi


@kernel(ops.FakeQuantWithMinMaxArgs)
def _args(node):
    def run(x):
        lo, hi = _check_args(node)
        return _quantize(x, lo, hi, *_bits(node), divide=False)
    return run


@kernel(ops.FakeQuantWithMinMaxArgsGradient)
def _args_gradient(node):
    def run(grads, x):
        lo, hi = _check_args(node)
        return _pass_through(grads, x, lo, hi, *_bits(node))[0]
    return run


def _scalars(lo: torch.Tensor, hi: torch.Tensor) -> tuple:
    for what, t in (("min", lo), ("max", hi)):
        if t.dim() != 0:
            raise InvalidArgumentError(None, None, f"{what} must be a scalar, got shape "
                                       f"{list(t.shape)}")
    return float(lo), float(hi)


@kernel(ops.FakeQuantWithMinMaxVars)
def _vars(node):
    def run(x, lo_t, hi_t):
        qmin, qmax = _bits(node)
        lo, hi = _scalars(lo_t, hi_t)
        if lo == 0.0 and hi == 0.0:
            return torch.zeros_like(x)
        return _quantize(x, lo, hi, qmin, qmax, divide=True)
    return run


@kernel(ops.FakeQuantWithMinMaxVarsGradient)
def _vars_gradient(node):
    def run(grads, x, lo_t, hi_t):
        qmin, qmax = _bits(node)
        lo, hi = _scalars(lo_t, hi_t)
        if lo == 0.0 and hi == 0.0:
            return grads, torch.zeros(()), torch.zeros(())
        g, below, above = _pass_through(grads, x, lo, hi, qmin, qmax)
        return g, below.sum(), above.sum()
    return run


def _channels(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> int:
    depth = x.shape[-1] if x.dim() else 0
    for what, t in (("min", lo), ("max", hi)):
        if t.dim() != 1 or t.shape[0] != depth:
            raise InvalidArgumentError(None, None, f"{what} has incorrect size, expected "
                                       f"{depth} was {t.shape[0] if t.dim() else 0}")
    return depth


@kernel(ops.FakeQuantWithMinMaxVarsPerChannel)
def _per_channel(node):
    def run(x, lo_t, hi_t):
        qmin, qmax = _bits(node)
        depth = _channels(x, lo_t, hi_t)
        flat = x.reshape(-1, depth)
        out = torch.empty_like(flat)
        for i, (lo, hi) in enumerate(zip(lo_t.tolist(), hi_t.tolist())):
            out[:, i] = 0.0 if lo == 0.0 and hi == 0.0 else \
                _quantize(flat[:, i], lo, hi, qmin, qmax, divide=False)
        return out.reshape(x.shape)
    return run


@kernel(ops.FakeQuantWithMinMaxVarsPerChannelGradient)
def _per_channel_gradient(node):
    def run(grads, x, lo_t, hi_t):
        qmin, qmax = _bits(node)
        depth = _channels(x, lo_t, hi_t)
        g, xs = grads.reshape(-1, depth), x.reshape(-1, depth)
        back = torch.empty_like(g)
        d_min, d_max = torch.zeros(depth), torch.zeros(depth)
        for i, (lo, hi) in enumerate(zip(lo_t.tolist(), hi_t.tolist())):
            if lo == 0.0 and hi == 0.0:
                back[:, i] = g[:, i]
                continue
            inside, below, above = _pass_through(g[:, i], xs[:, i], lo, hi, qmin, qmax)
            back[:, i], d_min[i], d_max[i] = inside, below.sum(), above.sum()
        return back.reshape(x.shape), d_min, d_max
    return run

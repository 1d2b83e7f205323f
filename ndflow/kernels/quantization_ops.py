"""Kernels of ops/quantization_ops.py, with TF 2.21's arithmetic (quantize_op.cc,
dequantize_op.cc, quantize_and_dequantize_op.h, quantization_utils.h' Eigen macros): each
step in the op's type, rounded as TF rounds it, so values match bit for bit.

A tensor's range parameters (one per slice along `axis`) are worked out on the host in NumPy
float32, as TF does them in scalar C++; the elementwise part runs in ATen on the quantized
tensor's integer storage (core/narrow_dtypes.py), shaped (outer, slices, inner).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError, NotFoundError, UnimplementedError
from ndflow.core.graph_def import dtype_name
from ndflow.kernels.registry import kernel
from ndflow.ops import quantization_ops as ops

_F = np.float32
_LIMITS = {dtypes.qint8: (-128, 127), dtypes.quint8: (0, 255), dtypes.qint16: (-32768, 32767),
           dtypes.quint16: (0, 65535), dtypes.qint32: (-2**31, 2**31 - 1)}


def _error(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


_JUST_BELOW_HALF = float(np.float32(0.49999997))   # 0x3EFFFFFF


def round_half_away(x: torch.Tensor) -> torch.Tensor:
    """std::round (Eigen's round()): halves away from zero, as Eigen's pround computes it:
    trunc(x + copysign(0.49999997, x)), whose sum rounds up exactly at the halves."""
    half = torch.full((), _JUST_BELOW_HALF, dtype=x.dtype, device=x.device)
    return torch.trunc_(x + torch.copysign(half, x))


def _clamp_side(x: torch.Tensor, bound, upper: bool) -> torch.Tensor:
    """One of Eigen's cwiseMin/cwiseMax: x beyond `bound` becomes it; a tie or a NaN (x or
    bound) keeps x. ATen's clamp does that but for a zero bound and a NaN bound."""
    if not isinstance(bound, float):   # per-slice bounds
        return torch.where(x > bound if upper else x < bound, bound, x)
    if bound != bound:
        return x
    y = torch.clamp(x, max=bound) if upper else torch.clamp(x, min=bound)
    return torch.where(x == 0, x, y) if bound == 0.0 else y


def clamp_like_eigen(x: torch.Tensor, lo, hi) -> torch.Tensor:
    """x.cwiseMin(hi).cwiseMax(lo), as TF clamps (lo may exceed hi; then lo wins)."""
    return _clamp_side(_clamp_side(x, hi, upper=True), lo, upper=False)


def _to_storage(x: torch.Tensor, dt) -> torch.Tensor:
    # C++'s float -> int conversion (cvttss2si: 2^31 and NaN give INT_MIN), then the int's
    # low bits, as TF's cast<T> of the (rare) value one past the type's range wraps
    return x.to(torch.int32).to(dt.torch_dtype)


def _slices(x: torch.Tensor, axis: int) -> torch.Tensor:
    """`x` as (outer, slices, inner): TF's flat_inner_outer_dims around `axis`."""
    if axis < 0:
        return x.reshape(1, 1, -1)
    shape = x.shape
    return x.reshape(int(np.prod(shape[:axis], dtype=np.int64)), shape[axis], -1)


def _per_slice(values: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """Host parameters, one per slice, broadcast against (outer, slices, inner)."""
    return torch.from_numpy(np.ascontiguousarray(values)).reshape(1, -1, 1).to(like.device)


def _params(values: np.ndarray, like: torch.Tensor):
    """Per-slice parameters: a Python float (an ATen scalar, exact for float32) for one slice,
    else a broadcast tensor."""
    values = np.asarray(values, _F).reshape(-1)
    return float(values[0]) if values.size == 1 else _per_slice(values, like)


def _host(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy().reshape(-1)


# -- QuantizeV2 --------------------------------------------------------------------------------


def _check_quantize_ranges(x, lo_t, hi_t, axis: int) -> int:
    if axis > -1:
        if axis >= x.dim():
            raise _error("Axis is on a zero-based index, so its value must always be less than "
                         f"number of input's dims, but given axis value was {axis} and input's "
                         f"dims was {x.dim()}")
        depth = x.shape[axis]
        for what, t in (("min_range", lo_t), ("max_range", hi_t)):
            if t.dim() != 1:
                raise _error(f"If axis is specified, {what} must be a 1-D tensor whose size "
                             "matches the axis dimension of the input and output tensors, but "
                             f"{what} dims are {t.dim()}")
            if t.shape[0] != depth:
                raise _error(f"If axis is specified, {what} must be a 1-D tensor whose size "
                             "matches the axis dimension of the input and output tensors, but "
                             f"{what} is a 1-D tensor of size {t.shape[0]} and input's axis "
                             f"dimension is of size {depth}")
        return depth
    for what, t in (("min_range", lo_t), ("max_range", hi_t)):
        if t.numel() != 1:
            raise _error(f"If axis is not specified, {what} must contain a single float "
                         f"element, but it contains {t.numel()} elements")
    return 1


def _adjusted_range(lo: np.ndarray, hi: np.ndarray, ensure: np.float32) -> tuple:
    """QuantizeSlice's range: [min(0, lo), max(0, hi, lo' + eps)], eps a share of the range."""
    if np.any(hi < lo):
        raise _error("input_max_range must be larger than input_min_range.")
    min_range = np.minimum(_F(0), lo)
    eps = np.maximum(_F(1), np.maximum(np.abs(lo), np.abs(hi))) * ensure
    max_range = np.maximum(_F(0), np.maximum(hi, min_range + eps))
    return min_range.astype(_F), max_range.astype(_F)


def float_to_quantized_min_first(x: torch.Tensor, lo, hi, dt) -> torch.Tensor:
    """QUANTIZE_WITH_EIGEN (MIN_FIRST): `x` (float32) to `dt` by the range [lo, hi]; lo/hi
    float32 scalars or per-slice arrays broadcast by the caller's shapes."""
    lowest, highest = _LIMITS[dt]
    steps = float(1 << (8 * dt.size))
    lo, hi = np.asarray(lo, _F), np.asarray(hi, _F)
    with np.errstate(divide="ignore"):
        scale = np.where(hi == lo, _F(0), ((steps - 1.0) / (hi - lo).astype(np.float64))
                         .astype(_F)).astype(_F)
    min_scaled = np.where(np.abs(lo * scale - np.trunc(lo * scale)) >= 0.5,
                          np.trunc(lo * scale) + np.sign(lo * scale),
                          np.trunc(lo * scale)).astype(_F)
    offset = (min_scaled - _F(lowest)).astype(_F)
    lower = max(_F(lowest), _F(-2.147483648e9))
    upper = min(_F(highest), _F(2.147483520e9))
    scale_t, offset_t = (torch.from_numpy(np.array(v)).to(x.device) for v in (scale, offset))
    if scale_t.dim():
        scale_t, offset_t = scale_t.reshape(1, -1, 1), offset_t.reshape(1, -1, 1)
    q = round_half_away(x * scale_t).sub_(offset_t)
    q = q.clamp_(float(lower), float(upper))   # (integers: -0.0 or 0.0 alike; NaN stays)
    return q.to(torch.int32).to(dt.torch_dtype)


def quantized_to_float_min_first(q: torch.Tensor, lo, hi, dt) -> torch.Tensor:
    """DEQUANTIZE_WITH_EIGEN (MIN_FIRST): `dt` storage to float32 by the range [lo, hi]."""
    lowest = _F(_LIMITS[dt][0])
    steps = float(1 << (8 * dt.size))
    lo, hi = _F(lo), _F(hi)
    scale = _F(float(_F(hi - lo)) / (steps - 1.0))
    if hi == lo:
        min_rounded = lo
    else:
        r = _F(lo / scale)
        r = _F(np.trunc(r) + np.sign(r)) if abs(r - np.trunc(r)) >= 0.5 else _F(np.trunc(r))
        min_rounded = _F(r * scale)
    base = _F(min_rounded - _F(lowest * scale))
    return q.to(torch.float32).mul_(float(scale)).add_(float(base))


def _quantize_combined(x, lo, hi, dt):
    t_min, t_max = _LIMITS[dt]
    scale = (float(t_max) - float(t_min)) / (hi - lo).astype(np.float64)
    scale_t, lo_t, hi_t = _params(scale.astype(_F), x), _params(lo, x), _params(hi, x)
    # (the result is an integer, so clamp's -0.0 for a tie is harmless)
    shifted = torch.clamp(x, lo_t, hi_t).sub_(lo_t).mul_(scale_t)
    if t_min < 0:   # signed: shift by half the range, round half away from zero
        half = _F((float(t_max) - float(t_min) + 1) / _F(2))
        return _to_storage(round_half_away(shifted.sub_(float(half))), dt)
    return _to_storage(shifted.add_(0.5), dt)   # (the cast truncates)


def _quantize_scaled(x, lo, hi, dt, narrow: bool, half_to_even: bool):
    t_min, t_max = _LIMITS[dt]
    out_min, out_max = _F(t_min + (1 if narrow else 0)), _F(t_max)
    fmax = np.finfo(_F).max
    with np.errstate(divide="ignore", invalid="ignore"):
        from_min = np.where(out_min * lo > 0, out_min / lo, fmax).astype(_F)
        from_max = np.where(out_max * hi > 0, out_max / hi, fmax).astype(_F)
    scale = np.minimum(from_min, from_max).astype(_F)
    lo, hi = (out_min / scale).astype(_F), (out_max / scale).astype(_F)
    v = torch.clamp(x, _params(lo, x), _params(hi, x)).mul_(_params(scale, x))
    v = torch.round_(v) if half_to_even else round_half_away(v)
    return _to_storage(v, dt), lo, hi


@kernel(ops.QuantizeV2)
def _quantize_v2(node):
    dt, mode = node.attrs["T"], node.attrs["mode"]
    axis, narrow = int(node.attrs["axis"]), bool(node.attrs["narrow_range"])
    half_to_even = node.attrs["round_mode"] == "HALF_TO_EVEN"
    ensure = _F(node.attrs["ensure_minimum_range"])

    def run(x, lo_t, hi_t):
        if half_to_even and mode != "SCALED":
            raise _error("Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED', but mode "
                         f"is '{mode}'.")
        depth = _check_quantize_ranges(x, lo_t, hi_t, axis)
        if depth > 1 or axis > -1:
            if mode == "MIN_FIRST" and depth != 1:
                raise UnimplementedError(None, None, "MIN_FIRST mode is not implemented for "
                                         "Quantize with axis != -1.")
        lo, hi = _adjusted_range(_host(lo_t).astype(_F), _host(hi_t).astype(_F), ensure)
        flat = _slices(x, axis if depth > 1 or axis > -1 else -1)
        if mode == "MIN_FIRST":
            out = float_to_quantized_min_first(x.reshape(-1), lo[0], hi[0], dt)
        elif mode == "MIN_COMBINED":
            out = _quantize_combined(flat, lo, hi, dt)
        else:
            out, lo, hi = _quantize_scaled(flat, lo, hi, dt, narrow, half_to_even)
        shape = lo_t.shape if axis > -1 else ()
        return (out.reshape(x.shape), torch.from_numpy(lo.reshape(shape)).to(x.device),
                torch.from_numpy(hi.reshape(shape)).to(x.device))
    return run


# -- Dequantize --------------------------------------------------------------------------------


def _dequantize_slices(q, lo, hi, dt, mode: str, narrow: bool) -> torch.Tensor:
    t_min, t_max = _LIMITS[dt]
    if mode == "MIN_COMBINED":
        half = _F(0) if t_min == 0 else _F(_F(_F(t_max) - _F(t_min) + _F(1)) / _F(2))
        scale = ((hi - lo) / _F(_F(t_max) - _F(t_min))).astype(_F)
        return q.to(torch.float32).add_(float(half)).mul_(_params(scale, q)).add_(
            _params(lo, q))
    out_min = _F(t_min + (1 if narrow else 0))
    if t_min == 0:
        scale = (hi / _F(t_max)).astype(_F)
    else:
        scale = np.maximum(lo / out_min, hi / _F(t_max)).astype(_F)
    # TF's cast<int> of a quantized value goes through float: qint32 values that round to
    # 2^31 overflow the int to INT_MIN (x86's cvttss2si)
    f = q.to(torch.float32)
    if dt is dtypes.qint32:
        f = torch.where(f >= 2.0 ** 31, torch.full((), -2.0 ** 31, device=f.device), f)
    return f.mul_(_params(scale, q))


@kernel(ops.Dequantize)
def _dequantize(node):
    dt, mode = node.input_dtypes[0], node.attrs["mode"]
    axis, narrow = int(node.attrs["axis"]), bool(node.attrs["narrow_range"])
    out_dtype = node.attrs["dtype"].torch_dtype

    def run(q, lo_t, hi_t):
        if axis >= q.dim():
            raise _error(f"Axis must be less than input dimension({q.dim()}), got {axis}")
        depth = q.shape[axis] if axis > -1 else 1
        for what, t in (("input_min_tensor", lo_t), ("input_max_tensor", hi_t)):
            if t.numel() != depth:
                raise _error(f"{what} must have as many elements as input on the "
                             f"dequantization axis ({axis}), got {t.numel()}, expected {depth}")
        lo, hi = _host(lo_t).astype(_F), _host(hi_t).astype(_F)
        if depth == 1:
            if mode == "MIN_FIRST":
                out = quantized_to_float_min_first(q, lo[0], hi[0], dt)
                return out.to(out_dtype)
            out = _dequantize_slices(q.reshape(1, 1, -1), lo, hi, dt, mode, narrow)
        else:
            if mode == "MIN_FIRST":
                raise UnimplementedError(None, None, "MIN_FIRST mode is not implemented for "
                                         "Dequantize with axis != -1.")
            out = _dequantize_slices(_slices(q, axis), lo, hi, dt, mode, narrow)
        return out.reshape(q.shape).to(out_dtype)
    return run


# -- QuantizedConcat ---------------------------------------------------------------------------


@kernel(ops.QuantizedConcat)
def _quantized_concat(node):
    n, dt = int(node.attrs["N"]), node.attrs["T"]
    if dt not in (dtypes.quint8, dtypes.qint32):
        raise NotFoundError(None, None, "Could not find device for node: {{node "
                            f"QuantizedConcat}}}} = QuantizedConcat[N={n}, T=DT_"
                            f"{dtype_name(dt).upper()}]\nAll kernels registered for op "
                            "QuantizedConcat:\n  device='CPU'; T in [DT_QINT32]\n  "
                            "device='CPU'; T in [DT_QUINT8]")

    def run(dim_t, *args):
        values, mins, maxes = args[:n], args[n:2 * n], args[2 * n:]
        if dim_t.dim() != 0:
            raise _error("Concat dim tensor should be a scalar integer, but got shape "
                         f"[{','.join(str(d) for d in dim_t.shape)}]")
        for what, ts in (("input_mins", mins), ("input_maxes", maxes)):
            for i, t in enumerate(ts):
                if t.numel() != 1:
                    raise _error(f"{what} each tensor's num elements must be 1, given num "
                                 f"elements {t.numel()} in index {i}")
        dim, first = int(dim_t), values[0]
        rank = first.dim()
        if not 0 <= dim < rank:
            raise _error("ConcatOp : Expected concatenating dimensions in the range [0, "
                         f"{rank}), but got {dim}")
        for i, v in enumerate(values):
            if v.dim() != rank or any(v.shape[j] != first.shape[j]
                                      for j in range(rank) if j != dim):
                what = "Ranks of all input tensors should match" if v.dim() != rank else \
                    "Dimensions of inputs should match"
                raise _error(f"ConcatOp : {what}: shape[0] = {_shape(first)} vs. shape[{i}] = "
                             f"{_shape(v)}")
        lows = [_F(float(t.reshape(()))) for t in mins]
        highs = [_F(float(t.reshape(()))) for t in maxes]
        out_min, out_max = min(_F(0), min(lows)), max(highs)
        if dt is dtypes.qint32:   # signed: a range symmetric about zero
            largest = max(abs(out_min), abs(out_max))
            out_min, out_max = -largest, largest
        parts = []
        for v, lo, hi in zip(values, lows, highs):
            if lo == out_min and hi == out_max:
                parts.append(v)
            else:
                real = quantized_to_float_min_first(v, lo, hi, dt)
                parts.append(float_to_quantized_min_first(real, out_min, out_max, dt))
        out = torch.cat(parts, dim)
        return (out, torch.tensor(out_min, device=out.device),
                torch.tensor(out_max, device=out.device))
    return run


def _shape(t: torch.Tensor) -> str:
    return "[" + ",".join(str(d) for d in t.shape) + "]"

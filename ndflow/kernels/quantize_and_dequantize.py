"""Kernels of QuantizeAndDequantizeV2/V3/V4 and V4's gradient op (TF's
quantize_and_dequantize_op.h): values scaled so that [min, max] fills the num_bits integer
range without moving 0, rounded, and scaled back, all in the tensor's own type. The range
parameters are scalar C++ in TF; here NumPy scalars of the same type, per slice along `axis`.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError, NotFoundError
from ndflow.core.graph_def import dtype_name
from ndflow.kernels.quantization_ops import _per_slice, _slices, clamp_like_eigen
from ndflow.kernels.registry import kernel
from ndflow.ops import quantization_ops as ops

_NP = {dtypes.float32: np.float32, dtypes.float64: np.float64, dtypes.float16: np.float16,
       dtypes.bfloat16: ml_dtypes.bfloat16}


def _error(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def _require_cpu_type(node) -> None:
    """TF registers these kernels for float and double only (CPU)."""
    dt = node.attrs["T"]
    if dt in (dtypes.float32, dtypes.float64):
        return
    name = node.op_def.name
    attrs = ", ".join(f"{k}={_attr_text(v)}" for k, v in sorted(node.attrs.items()))
    raise NotFoundError(None, None, f"Could not find device for node: {{{{node {name}}}}} = "
                        f"{name}[{attrs}]\nAll kernels registered for op {name}:\n"
                        "  device='CPU'; T in [DT_DOUBLE]\n  device='CPU'; T in [DT_FLOAT]")


def _attr_text(v) -> str:
    if isinstance(v, dtypes.DType):
        return "DT_" + dtype_name(v).upper()
    if isinstance(v, bool):
        return str(v).lower()
    return f'"{v}"' if isinstance(v, str) else str(v)


def _quantization_range(t, lo, hi, signed: bool, num_bits: int, narrow: bool) -> tuple:
    """ComputeQuantizationRange per slice: (scale, inverse scale, min, max) in type `t`."""
    if signed:
        q_min = -(1 << (num_bits - 1)) + (1 if narrow else 0)
        q_max = (1 << (num_bits - 1)) - 1
    else:
        q_min, q_max = 0, (1 << num_bits) - 1
    fq_min, fq_max = t(q_min), t(q_max)   # int64 -> T, as C++ converts them
    big = np.array(ml_dtypes.finfo(t).max, dtype=t)   # numeric_limits<T>::max()
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        from_min = np.where(fq_min * lo > 0, fq_min / lo, big).astype(t)
        from_max = np.where(fq_max * hi > 0, fq_max / hi, big).astype(t)
        min_side = from_min < from_max
        inv_min, inv_max = (lo / fq_min).astype(t), (hi / fq_max).astype(t)
        scale = np.where(min_side, from_min, from_max).astype(t)
        inverse = np.where(min_side, inv_min, inv_max).astype(t)
        new_hi = np.where(min_side, (fq_max * inverse).astype(t), hi).astype(t)
        new_lo = np.where(min_side, lo, (fq_min * inverse).astype(t)).astype(t)
    return scale, inverse, new_lo, new_hi


def _round(x: torch.Tensor, half_up: bool) -> torch.Tensor:
    return x.add_(0.5).floor_() if half_up else x.round_()   # round: half to even


def _qdq(x, lo_t, hi_t, dt, axis, signed, num_bits, range_given, narrow, half_up):
    t = _NP[dt]
    flat = _slices(x, axis)
    if range_given:
        lo = lo_t.detach().cpu().to(torch.float64).numpy().reshape(-1).astype(t)
        hi = hi_t.detach().cpu().to(torch.float64).numpy().reshape(-1).astype(t)
    elif flat.numel():
        lo = flat.amin(dim=(0, 2)).cpu().to(torch.float64).numpy().astype(t)
        hi = flat.amax(dim=(0, 2)).cpu().to(torch.float64).numpy().astype(t)
    else:
        return x.clone()
    scale, inverse, lo, hi = _quantization_range(t, lo, hi, signed, num_bits, narrow)

    def param(v):   # one per slice, in the tensor's type (a Python float, exact, for one)
        v = v.astype(np.float64)
        return float(v[0]) if v.size == 1 else _per_slice(v, flat).to(x.dtype)
    v = flat
    if range_given:
        v = clamp_like_eigen(v, param(lo), param(hi))
    return _round(v * param(scale), half_up).mul_(param(inverse)).reshape(x.shape)


def _check_axis(x, axis: int) -> None:
    if axis < -1:
        raise _error(f"Axis must be at least -1. Found {axis}")
    if axis != -1 and axis >= x.dim():
        raise _error(f"Shape must be at least rank {axis + 1} but is rank {x.dim()}")


def _check_given_range(lo_t, hi_t, axis: int) -> None:
    """TF 2.21's checks of a given range (V2/V4): with an axis the ranges must be vectors and
    are then also required to be scalars, so a per-slice given range always fails there."""
    if axis != -1:
        for what, t in (("input_min_tensor", lo_t), ("input_max_tensor", hi_t)):
            if t.dim() != 1:
                raise _error(f"Shape must be rank 1 for {what} when the axis is specified")
    for what, t in (("input_min", lo_t), ("input_max", hi_t)):
        if t.dim() != 0:
            raise _error(f"{what} must be a scalar.")
    _check_order(lo_t, hi_t)


def _check_order(lo_t, hi_t) -> None:
    lo, hi = float(lo_t), float(hi_t)
    if not lo <= hi:
        raise _error(f"Invalid range: input_min {lo:g} > input_max {hi:g}")


def _num_bits_check(num_bits: int, signed: bool, quoted: bool) -> None:
    if not 0 < num_bits < (62 if signed else 63):
        name = "`signed_input_`" if quoted else "signed_input_"
        raise _error(f"num_bits is out of range: {num_bits} with {name} {int(signed)}")


def _v2_kernel(node):
    _require_cpu_type(node)
    dt = node.attrs["T"]
    signed, num_bits = bool(node.attrs["signed_input"]), int(node.attrs["num_bits"])
    range_given, narrow = bool(node.attrs["range_given"]), bool(node.attrs["narrow_range"])
    axis, half_up = int(node.attrs["axis"]), node.attrs["round_mode"] == "HALF_UP"

    def run(x, lo_t, hi_t):
        _num_bits_check(num_bits, signed, quoted=False)
        _check_axis(x, axis)
        if range_given:
            _check_given_range(lo_t, hi_t, axis)
        return _qdq(x, lo_t, hi_t, dt, axis, signed, num_bits, range_given, narrow, half_up)
    return run


kernel(ops.QuantizeAndDequantizeV2)(_v2_kernel)
kernel(ops.QuantizeAndDequantizeV4)(_v2_kernel)


@kernel(ops.QuantizeAndDequantizeV3)
def _v3(node):
    _require_cpu_type(node)
    dt = node.attrs["T"]
    signed, range_given = bool(node.attrs["signed_input"]), bool(node.attrs["range_given"])
    narrow, axis = bool(node.attrs["narrow_range"]), int(node.attrs["axis"])

    def run(x, lo_t, hi_t, bits_t):
        if axis < -1:   # (TF aborts the process here)
            raise _error(f"Axis must be at least -1. Found {axis}")
        if axis >= x.dim():
            raise _error("Axis requested is larger than input dimensions. Axis: "
                         f"{axis} Input Dimensions: {x.dim()}")
        if bits_t.dim() != 0:
            raise _error("Invalid shape. The `num_bits` tensor should be a scalar. Got "
                         f"dimensions: {bits_t.dim()}")
        num_bits = int(bits_t)
        _num_bits_check(num_bits, signed, quoted=True)
        if range_given:
            if axis == -1:
                for what, t in (("input_min", lo_t), ("input_max", hi_t)):
                    if t.dim() != 0:   # (TF aborts the process here)
                        raise _error(f"{what} must be a scalar.")
                _check_order(lo_t, hi_t)
            else:
                depth = x.shape[axis]
                for what, t in (("input_min_tensor", lo_t), ("input_max_tensor", hi_t)):
                    if t.dim() != 1:
                        raise _error(f"Shape must be rank 1 for {what} when the axis is "
                                     "specified")
                    if t.shape[0] != depth:
                        raise _error(f"{what} has incorrect size, was {t.shape[0]} expected "
                                     f"{depth} to match dim {axis} of the input "
                                     f"[{t.shape[0]}]")
        return _qdq(x, lo_t, hi_t, dt, axis, signed, num_bits, range_given, narrow, False)
    return run


@kernel(ops.QuantizeAndDequantizeV4Grad)
def _v4_grad(node):
    _require_cpu_type(node)
    axis = int(node.attrs["axis"])

    def run(grads, x, lo_t, hi_t):
        if axis < -1:
            raise _error(f"Axis must be at least -1. Found {axis}")
        if axis != -1 and axis >= x.dim():
            raise _error(f"Axis should be -1 or 0 or a positive value less than {x.dim()}but "
                         f"given axis value was {axis}")
        if grads.shape != x.shape:
            raise _error("gradient and input must be the same size")
        if axis == -1:
            for what, t in (("input_min", lo_t), ("input_max", hi_t)):
                if t.dim() != 0:
                    raise _error(f"{what} must be a scalar if axis is unspecified")
        else:
            depth = x.shape[axis]
            for what, t in (("input_min_tensor", lo_t), ("input_max_tensor", hi_t)):
                if t.dim() != 1:
                    raise _error(f"Shape must be rank 1 for {what} when the axis is specified")
            for what, t in (("min", lo_t), ("max", hi_t)):
                if t.shape[0] != depth:
                    raise _error(f"{what} has incorrect size, expected {depth} was "
                                 f"{t.shape[0]}")
        flat, g = _slices(x, axis), _slices(grads, axis)
        lo, hi = lo_t.reshape(1, -1, 1), hi_t.reshape(1, -1, 1)
        inside = (flat >= lo) & (flat <= hi)
        back = g * inside.to(g.dtype)   # TF multiplies by the 0/1 mask (-0.0, NaN kept)
        return back.reshape(x.shape), torch.zeros_like(lo_t), torch.zeros_like(hi_t)
    return run

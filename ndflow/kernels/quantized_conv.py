"""Kernel of QuantizedConv2D (TF's quantized_conv_ops.cc, quint8 x quint8 -> qint32): each
value less its type's offset (the quantized value standing for 0.0, TF's
FloatToQuantizedUnclamped), products summed exactly and kept as int32, and the output range
of one input step times one filter step. SAME padding as TF's convolutions place it (the
odd row or column after), padded values standing for 0.0."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError, NotFoundError
from ndflow.kernels.registry import kernel
from ndflow.ops import quantized_nn_ops as ops

_F = np.float32


def _error(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def _round_away(v: float) -> float:
    return math.copysign(math.floor(abs(v) + 0.5), v)   # std::round on a double


def zero_point(lo: float, hi: float) -> int:
    """FloatToQuantizedUnclamped<quint8>(0.0f, lo, hi): the value standing for 0.0."""
    lo, hi = _F(lo), _F(hi)
    if lo == hi:
        return 0
    steps = 256
    value_range = float(_F(hi - lo)) * (steps / (steps - 1.0))
    scale = steps / value_range
    return int(_round_away(0.0 * scale) - _round_away(float(lo) * scale))


def _output_range(lo_a, hi_a, lo_b, hi_b) -> tuple:
    """QuantizationRangeForMultiplication<quint8, quint8, qint32>."""
    step = _F(_F(_F(hi_a) - _F(lo_a)) / _F(255)) * _F(_F(_F(hi_b) - _F(lo_b)) / _F(255))
    return _F(step * _F(-2.0 ** 31)), _F(step * _F(2.0 ** 31 - 1))


def _same_padding(size: int, k: int, stride: int) -> tuple:
    out = -(-size // stride)
    total = (out - 1) * stride + k - size
    before = max(0, total // 2)
    return out, before, total - before


@kernel(ops.QuantizedConv2D)
def _quantized_conv2d(node):
    t_in, t_f, t_out = node.attrs["Tinput"], node.attrs["Tfilter"], node.attrs["out_type"]
    strides, padding = list(node.attrs["strides"]), node.attrs["padding"]
    dilations = list(node.attrs["dilations"])
    if (t_in, t_f, t_out) != (dtypes.quint8, dtypes.quint8, dtypes.qint32):
        raise NotFoundError(None, None, "Could not find device for node: {{node "
                            "QuantizedConv2D}} = QuantizedConv2D[...]\nAll kernels registered "
                            "for op QuantizedConv2D:\n  device='CPU'; Tinput in [DT_QUINT8]; "
                            "Tfilter in [DT_QUINT8]; out_type in [DT_QINT32]")

    def run(x, f, lo_x, hi_x, lo_f, hi_f):
        if len(strides) != 4:
            raise _error("Sliding window strides field must specify 4 dimensions")
        if strides[0] != 1 or strides[3] != 1:
            raise _error("Current implementation does not yet support strides in the batch "
                         "and depth dimensions.")
        if strides[1] != strides[2]:
            raise _error("Current implementation only supports equal length strides in the "
                         "row and column dimensions.")
        if len(dilations) != 4 or dilations[1] != 1 or dilations[2] != 1:
            raise _error("Current implementation only supports dilated rate as 1 in the row "
                         "and column dimensions.")
        for what, t in (("min_input", lo_x), ("max_input", hi_x), ("min_filter", lo_f),
                        ("max_filter", hi_f)):
            if t.dim() != 0:
                raise _error(f"{what} must be rank 0 but is rank {t.dim()}")
        for what, t in (("input", x), ("filter", f)):
            if t.dim() != 4:
                raise _error(f"{what} must be rank 4 but is rank {t.dim()}")
        if x.shape[3] != f.shape[2]:
            raise _error(f"input and filter must have the same depth: {x.shape[3]} vs "
                         f"{f.shape[2]}")
        lo_a, hi_a, lo_b, hi_b = (float(v) for v in (lo_x, hi_x, lo_f, hi_f))
        kh, kw = f.shape[0], f.shape[1]
        pads = []
        for size, k, st in ((x.shape[1], kh, strides[1]), (x.shape[2], kw, strides[2])):
            if padding == "SAME":
                pads.append(_same_padding(size, k, st)[1:])
            elif size < k:
                raise _error(f"Computed output size would be negative: "
                             f"{(size - k + st) // st} [input_size: {size}, "
                             f"effective_filter_size: {k}, stride: {st}]")
            else:
                pads.append((0, 0))
        v = (x.to(torch.float64) - zero_point(lo_a, hi_a)).permute(0, 3, 1, 2)
        w = (f.to(torch.float64) - zero_point(lo_b, hi_b)).permute(3, 2, 0, 1)
        v = F.pad(v, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
        out = F.conv2d(v, w, stride=(strides[1], strides[2]))   # exact: integer sums < 2^53
        out = out.permute(0, 2, 3, 1).to(torch.int64).to(torch.int32)   # (int32 wraps)
        lo, hi = _output_range(lo_a, hi_a, lo_b, hi_b)
        return out, torch.tensor(lo, device=out.device), torch.tensor(hi, device=out.device)
    return run

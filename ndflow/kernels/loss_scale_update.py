"""The kernel of `_UpdateDynamicLossScale` (ndflow/ops/loss_scale_fused.py): TensorFlow's
dynamic loss-scale rule on Python numbers, each value as the unfused float32/int64 ops
round it, and both variables assigned.

Python's float64 arithmetic on float32 operands, rounded once to float32, gives float32's
correctly rounded product and quotient (53 >= 2 * 24 + 2 bits), so the new scale is bit
for bit what Mul/RealDiv/Maximum/SelectV2 give. The new values are written into the
variables' own 0-d buffers when nobody else holds them (kernels/state.py
`exclusive_values`), else into new tensors, as AssignVariableOp stores a new value.
"""

from __future__ import annotations

import math
import struct

import torch

from ndflow.core import dtypes
from ndflow.kernels.registry import kernel
from ndflow.kernels.state import check_dtype, exclusive_values, not_found
from ndflow.ops import loss_scale_fused

_INT64 = 1 << 64


def float32(x: float) -> float:
    """`x` rounded to the nearest float32 (overflow: infinity, as a float32 cast)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _divide(a: float, b: float) -> float:
    """IEEE division (Python raises on a zero divisor)."""
    if b != 0.0:
        return a / b
    if a == 0.0 or a != a:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def next_values(scale: float, good_steps: int, finite: bool, period: int,
                multiplier: float) -> tuple[float, int]:
    """(new scale, new good-steps count): the rule of ndflow/train/loss_scale.py."""
    multiplier = float32(multiplier)
    if not finite:
        shrunk = float32(_divide(scale, multiplier))
        return (shrunk if shrunk >= 1.0 or shrunk != shrunk else 1.0), 0
    counted = (good_steps + 1 + (1 << 63)) % _INT64 - (1 << 63)   # int64 wraps
    if counted >= period:
        grown = float32(scale * multiplier)
        return (grown if math.isfinite(grown) else scale), 0
    return scale, counted


def _store(res, value: torch.Tensor, new, owned: bool) -> None:
    if owned:
        value.fill_(new)
    else:
        res.value = torch.tensor(new, dtype=value.dtype, device=value.device)


@kernel(loss_scale_fused.UpdateDynamicLossScale)
def _update_dynamic_loss_scale(node):
    period, multiplier = int(node.attrs["increment_period"]), float(node.attrs["multiplier"])

    def run(scale_res, steps_res, is_finite):
        owned = exclusive_values((scale_res, steps_res))
        scale, steps = scale_res.value, steps_res.value
        for res, value, dtype in ((scale_res, scale, dtypes.float32),
                                  (steps_res, steps, dtypes.int64)):
            if value is None:
                raise not_found(res)
            check_dtype(res, dtype, "assign")
        new_scale, new_steps = next_values(scale.item(), steps.item(), bool(is_finite.item()),
                                           period, multiplier)
        _store(scale_res, scale, new_scale, owned[0])
        _store(steps_res, steps, new_steps, owned[1])

    return run

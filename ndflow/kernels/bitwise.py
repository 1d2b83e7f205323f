"""Kernels of `tf.bitwise` (ndflow/ops/bitwise.py) on ATen's bitwise operators."""

from __future__ import annotations

import torch

from ndflow.kernels.registry import kernel
from ndflow.ops import bitwise


def _clamped(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """TF's shift amounts: negative ones are 0, ones past the width are width - 1."""
    return y.clamp(0, x.element_size() * 8 - 1)


for _op, _fn in ((bitwise.BitwiseAnd, torch.bitwise_and), (bitwise.BitwiseOr, torch.bitwise_or),
                 (bitwise.BitwiseXor, torch.bitwise_xor), (bitwise.Invert, torch.bitwise_not),
                 (bitwise.LeftShift,
                  lambda x, y: torch.bitwise_left_shift(x, _clamped(x, y))),
                 (bitwise.RightShift,
                  lambda x, y: torch.bitwise_right_shift(x, _clamped(x, y)))):
    kernel(_op)(lambda node, fn=_fn: fn)

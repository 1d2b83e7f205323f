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


_M1, _M2, _M4, _H01 = 0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, \
    0x0101010101010101


@kernel(bitwise.PopulationCount)
def _population_count(node):
    bits = node.input_dtypes[0].size * 8
    mask = None if bits == 64 else (1 << bits) - 1

    def population_count(x):
        """The SWAR count of 64-bit words: every masked partial sum stays non-negative, so
        the arithmetic shifts of int64 act as logical ones."""
        v = x.to(torch.int64)
        if mask is not None:
            v = v & mask                       # the bits of a negative narrower value
        v = v - ((v >> 1) & _M1)
        v = (v & _M2) + ((v >> 2) & _M2)
        v = (v + (v >> 4)) & _M4
        return ((v * _H01) >> 56).to(torch.uint8)
    return population_count

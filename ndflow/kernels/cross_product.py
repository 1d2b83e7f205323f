"""The ATen kernel of Cross (`tf.linalg.cross`): TF's checks, then each component as TF's
kernel computes it, two rounded products and their difference (`torch.linalg.cross` fuses
them into multiply-adds and differs in the last bit); integers wrap as TF's do (uint8
[1,2,3] x [3,2,1] is [252, 8, 252])."""

from __future__ import annotations

import torch

from ndflow.core.errors import FailedPreconditionError, InvalidArgumentError
from ndflow.core.shapes import fmt
from ndflow.kernels.registry import kernel
from ndflow.ops import cross_product


@kernel(cross_product.Cross)
def _cross(node):
    def run(a, b):
        if a.shape != b.shape:
            raise InvalidArgumentError(None, None, "Both inputs must be of same shape: "
                                       f"{fmt(tuple(a.shape))} vs. {fmt(tuple(b.shape))}")
        if a.dim() < 1:
            raise InvalidArgumentError(None, None, f"Input must be at least 1D{fmt(())}")
        if a.shape[-1] != 3:
            raise FailedPreconditionError(
                None, None, "Cross-products are only defined for 3-element vectors.")
        a0, a1, a2 = a.unbind(-1)
        b0, b1, b2 = b.unbind(-1)
        return torch.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
    return run

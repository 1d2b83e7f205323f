"""Kernels of SdcaFprint and SdcaShrinkL1 (TensorFlow's sdca_ops.cc): 128-bit fingerprints of
example ids, and the L1 proximal step on weight variables. SdcaOptimizerV2's kernel is
kernels/sdca_optimizer.py."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.fingerprint128 import fingerprint128
from ndflow.kernels.fingerprint128_numba import fingerprint128_strings
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.kernels.state import not_found
from ndflow.ops import sdca_ops as ops


@host_kernel(ops.SdcaFprint)
def _sdca_fprint(node):  # noqa: ARG001
    def run(x):
        arr = np.asarray(x, dtype=object)
        if arr.ndim != 1:
            raise InvalidArgumentError(None, None, "Input must be a vector, got shape "
                                       f"[{','.join(str(d) for d in arr.shape)}]")
        values = arr.tolist()
        try:   # the ids as they come (bytes: no copy)
            prints = fingerprint128_strings(values)
        except TypeError:   # str ids: their UTF-8 bytes
            values = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
            prints = fingerprint128_strings(values)
        if prints is None:   # no numba: the reference, one string at a time
            values = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
            prints = np.array([fingerprint128(v) for v in values], np.uint64).reshape(-1, 2)
        # never 0 or 1 first: TensorFlow keeps those for sentinels (empty hash keys)
        prints[:, 0] = np.where(prints[:, 0] >= 2, prints[:, 0], prints[:, 0] - np.uint64(2))
        return torch.from_numpy(prints.view(np.int64))
    return run


def shrink(w: torch.Tensor, shrinkage: float) -> torch.Tensor:
    """TensorFlow's EigenShrinkVector in float32: sign(w) * max(|w| - shrinkage, 0)."""
    s = torch.tensor(shrinkage, dtype=torch.float32)
    return torch.sign(w) * torch.clamp_min(w.abs() - s, 0.0)


@kernel(ops.SdcaShrinkL1)
def _sdca_shrink_l1(node):
    l1 = np.float32(node.attrs["l1"])
    l2 = np.float32(node.attrs["l2"])
    with np.errstate(divide="ignore", invalid="ignore"):
        shrinkage = float(l1 / l2)  # float32 division, as TensorFlow's float attrs

    def run(*resources):
        for res in resources:
            if res.value is None:
                raise not_found(res)
        for res in resources:
            if res.dtype is not dtypes.float32:
                raise InvalidArgumentError(None, None, "SdcaShrinkL1 takes float32 weights, "
                                           f"got {res.dtype.name}")
            res.value = shrink(res.value, shrinkage)
    return run

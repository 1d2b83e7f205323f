"""TensorFlow's square root: IEEE's correctly rounded one (the CPU's sqrt instruction, as
Eigen computes it). ATen's CPU kernel is not (an ulp off for about one float32 in six, one
float64 in seventy, torch 2.13) and is slower than NumPy's, which is the instruction: on the
CPU, float32 and float64 go through NumPy (which, in a kernel's flushing mode, flushes
subnormals as TF does); other types and devices through ATen."""

from __future__ import annotations

import numpy as np
import torch

_NUMPY_TYPES = (torch.float32, torch.float64)


def numpy_sqrt(x: torch.Tensor) -> torch.Tensor:
    """The correctly rounded root of a CPU float32/float64 tensor, in a new buffer."""
    a = x.numpy()
    with np.errstate(invalid="ignore"):
        return torch.from_numpy(np.sqrt(a, out=np.empty(a.shape, a.dtype)))


def exact_sqrt(x: torch.Tensor) -> torch.Tensor:
    if x.device.type == "cpu" and x.dtype in _NUMPY_TYPES and not x.requires_grad:
        return numpy_sqrt(x)
    return torch.sqrt(x)

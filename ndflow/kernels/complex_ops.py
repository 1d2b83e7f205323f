"""ATen kernels for Complex, Real, Imag, Angle, ComplexAbs and Conj.

ATen's `real`/`imag`/`conj` return views (conj a lazily conjugated one); the kernels return
fresh dense tensors so that later kernels and `.numpy()` see ordinary values.
"""

from __future__ import annotations

import torch

from ndflow.kernels.registry import kernel
from ndflow.ops import complex_ops as cx


@kernel(cx.Complex)
def _complex(node):
    def complex_(re, im):
        re, im = torch.broadcast_tensors(re, im)
        return torch.complex(re.contiguous(), im.contiguous())
    return complex_


@kernel(cx.Real)
def _real(node):
    return lambda x: torch.real(x).clone()


@kernel(cx.Imag)
def _imag(node):
    return lambda x: torch.imag(x).clone()


@kernel(cx.Angle)
def _angle(node):
    return torch.angle


@kernel(cx.ComplexAbs)
def _complex_abs(node):
    return torch.abs


@kernel(cx.Conj)
def _conj(node):
    return torch.conj_physical

"""ATen kernels for the FFT ops (torch.fft), with TensorFlow's kernel checks: an input of
rank at least the transform's, `fft_length` a vector of non-negative lengths, and inner input
dimensions no shorter than them (IRFFT: the innermost fft_length // 2 + 1). Longer
dimensions are cropped; empty tensors pass through, as in TensorFlow.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import spectral_ops as sp


def _shape_str(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _check_rank(x, rank: int) -> None:
    if x.dim() < rank:
        raise InvalidArgumentError(None, None, f"Input must have rank of at least {rank} but "
                                   f"got: {_shape_str(x.shape)}")


def _complex_kernel(op, inverse: bool):
    rank = sp.RANK[op]
    dims = tuple(range(-rank, 0))
    fn = torch.fft.ifftn if inverse else torch.fft.fftn

    def transform(x):
        _check_rank(x, rank)
        if x.numel() == 0:
            return x.clone()
        return fn(x, dim=dims)
    return transform


def _lengths(x, fft_length, rank: int, inverse: bool) -> list:
    if tuple(fft_length.shape) != (rank,):
        raise InvalidArgumentError(None, None, f"fft_length must have shape [{rank}]")
    lengths = [int(n) for n in fft_length.tolist()]
    for i, n in enumerate(lengths):
        if n < 0:
            raise InvalidArgumentError(None, None, f"fft_length[{i}] must >= 0, but got: {n}")
        need = n // 2 + 1 if inverse and i == rank - 1 else n
        index = x.dim() - rank + i
        if x.shape[index] != 0 and x.shape[index] < need:
            raise InvalidArgumentError(None, None, f"Input dimension {index} must have length "
                                       f"of at least {need} but got: {x.shape[index]}")
    return lengths


def _real_kernel(op, inverse: bool):
    rank = sp.RANK[op]
    dims = tuple(range(-rank, 0))

    def transform(x, fft_length):
        _check_rank(x, rank)
        lengths = _lengths(x, fft_length, rank, inverse)
        if x.numel() == 0 or 0 in lengths:
            out = list(x.shape[:-rank]) + lengths
            if not inverse:
                out[-1] = lengths[-1] // 2 + 1 if lengths[-1] else 0
                dtype = torch.complex128 if x.dtype == torch.float64 else torch.complex64
            else:
                dtype = torch.float64 if x.dtype == torch.complex128 else torch.float32
            return torch.zeros(out, dtype=dtype, device=x.device)
        if inverse:
            return torch.fft.irfftn(x, s=lengths, dim=dims)
        return torch.fft.rfftn(x, s=lengths, dim=dims)
    return transform


def _register(op, make) -> None:
    kernel(op)(lambda node: make(op, op.name.startswith("I")))


for _op in (sp.FFT, sp.FFT2D, sp.FFT3D, sp.IFFT, sp.IFFT2D, sp.IFFT3D):
    _register(_op, _complex_kernel)
for _op in (sp.RFFT, sp.RFFT2D, sp.RFFT3D, sp.IRFFT, sp.IRFFT2D, sp.IRFFT3D):
    _register(_op, _real_kernel)

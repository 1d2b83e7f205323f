"""ATen kernels for the N-dimensional FFT ops (torch.fft) with the checks of TF's GPU kernel
(TF's CPU build has none): `axes` successive and ascending, ending at the last dimension;
`fft_length` of shape [len(axes)] and non-negative; RFFTND/IRFFTND inputs no shorter than
fft_length (IRFFTND's innermost: fft_length // 2 + 1) and cropped when longer. FFTND/IFFTND
crop or zero-pad each dimension to fft_length, as numpy.fft.fftn's `s`.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import spectral_nd_ops as nd

_COMPLEX_OF = {torch.float32: torch.complex64, torch.float64: torch.complex128}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}
_NAMES = {torch.float32: "float", torch.float64: "double", torch.complex64: "complex64",
          torch.complex128: "complex128"}


def _error(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, message)


def _shape_str(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _fft_lengths(x, fft_length, axes, real: bool, forward: bool) -> list:
    """The validated fft lengths, in TF's order of checks."""
    if axes.dim() != 1:
        raise _error(f"axes must be a vector but got shape {_shape_str(axes.shape)}")
    rank, fft_rank = x.dim(), axes.shape[0]
    if rank < fft_rank:
        raise _error(f"Input must have rank of at least {fft_rank} but got: "
                     f"{_shape_str(x.shape)}")
    dims = [a + rank if a < 0 else a for a in axes.tolist()]
    for i in range(1, fft_rank):
        if dims[i - 1] + 1 != dims[i]:
            raise _error("axes must be successive and ascending.")
    if not dims or dims[-1] != rank - 1:
        raise _error("The last axis to perform transform on must be -1.")
    if fft_length.dim() != 1 or fft_length.shape[0] != fft_rank:
        got = fft_length.shape[0] if fft_length.dim() else fft_length.numel()
        raise _error(f"fft_length must have shape [{fft_rank}], but got: {got}.")
    lengths = [int(n) for n in fft_length.tolist()]
    for i, n in enumerate(lengths):
        if n < 0:
            raise _error(f"fft_length[{i}] must >= 0, but got: {n}")
        if real:
            need = n // 2 + 1 if not forward and i == fft_rank - 1 else n
            index = rank - fft_rank + i
            if x.shape[index] != 0 and x.shape[index] < need:
                raise _error(f"Input dimension {index} must have length of at least {need} "
                             f"but got: {x.shape[index]}")
    return lengths


def _make(op, real: bool, forward: bool):
    def factory(node):
        out_dtype = node.output_dtypes[0].torch_dtype

        def transform(x, fft_length, axes):
            lengths = _fft_lengths(x, fft_length, axes, real, forward)
            expected = (_COMPLEX_OF if forward else _REAL_OF).get(x.dtype) if real else x.dtype
            if expected != out_dtype:
                kind = ("forward real FFT" if forward else "backward real FFT") if real \
                    else "FFT"
                raise _error(f"Wrong types for {kind}: in={_NAMES.get(x.dtype, x.dtype)} "
                             f"out={_NAMES.get(out_dtype, out_dtype)}")
            dims = tuple(range(-len(lengths), 0))
            out_inner = list(lengths)
            if real and forward and lengths[-1]:
                out_inner[-1] = lengths[-1] // 2 + 1
            if x.numel() == 0 or 0 in lengths:
                shape = list(x.shape[:x.dim() - len(lengths)]) + out_inner
                return torch.zeros(shape, dtype=out_dtype, device=x.device)
            if real:
                fn = torch.fft.rfftn if forward else torch.fft.irfftn
            else:
                fn = torch.fft.fftn if forward else torch.fft.ifftn
            return fn(x, s=lengths, dim=dims)
        return transform
    kernel(op)(factory)


_make(nd.FFTND, real=False, forward=True)
_make(nd.IFFTND, real=False, forward=False)
_make(nd.RFFTND, real=True, forward=True)
_make(nd.IRFFTND, real=True, forward=False)

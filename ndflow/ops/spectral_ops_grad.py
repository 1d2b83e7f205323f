"""Gradients of the FFT ops (TF's signal/fft_ops.py).

FFT's gradient is n * IFFT of the gradient and IFFT's FFT / n. RFFT's is the adjoint of
"crop to fft_length, full FFT, keep the half spectrum": n times the real part (TF's convention
for a real input) of the IFFT of the half-spectrum gradient zero-padded to the full length,
which is an IRFFT, zero-padded back over the dimensions the op cropped; TensorFlow builds the
same value from an IRFFT and correction terms. IRFFT's is TF's: RFFT of the gradient,
doubled for the bins that stand for two conjugate ones, over n.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import array_core, array_fill
from ndflow.ops import spectral_ops as sp
from ndflow.ops.arithmetic import floor_div, floormod, multiply, subtract
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.reduction import reduce_prod


def _size(t, rank, dtype):
    """The number of elements of the inner `rank` dimensions of `t`, as `dtype`."""
    return cast(reduce_prod(array_core.shape(t)[-rank:]), dtype)


def _fft_grad(inverse_fn):
    def grad_fn(op, grad):
        return [multiply(inverse_fn(grad), _size(grad, sp.RANK[op.op_def], grad.dtype))]
    return grad_fn


def _ifft_grad(forward_fn):
    def grad_fn(op, grad):
        n = _size(grad, sp.RANK[op.op_def], grad.dtype.real_dtype)
        return [multiply(forward_fn(grad), cast(1.0 / n, grad.dtype))]
    return grad_fn


for _op, _fn in ((sp.FFT, sp.ifft), (sp.FFT2D, sp.ifft2d), (sp.FFT3D, sp.ifft3d)):
    _op.def_grad(_fft_grad(_fn))
for _op, _fn in ((sp.IFFT, sp.fft), (sp.IFFT2D, sp.fft2d), (sp.IFFT3D, sp.fft3d)):
    _op.def_grad(_ifft_grad(_fn))


def _pad_inner(t, extra, rank):
    """`t` zero-padded at the end of its inner `rank` dimensions by `extra` (int32 [rank])."""
    outer = array_fill.zeros(array_core.stack([array_core.rank(t) - rank]), dtypes.int32)
    after = concat([outer, extra], 0)
    return array_fill.pad(t, array_core.stack([array_fill.zeros_like(after), after], 1))


def _half_length(fft_length):
    """fft_length with its last entry n // 2 + 1: the inner shape of a half spectrum."""
    return concat([fft_length[:-1], floor_div(fft_length[-1:], 2) + 1], 0)


def _edge_mask(fft_length, inner, dtype):
    """Along a half spectrum of fft_length[-1]: 1 for the DC bin (and the Nyquist bin of an
    even length), `inner` for the bins that stand for two conjugate ones."""
    is_odd = floormod(fft_length[-1], 2)
    half = floor_div(fft_length[-1], 2) + 1
    return concat([array_fill.ones([1], dtype),
                   multiply(inner, array_fill.ones(array_core.stack([half - 2 + is_odd]),
                                                   dtype)),
                   array_fill.ones(array_core.stack([1 - is_odd]), dtype)], 0)


def _rfft_grad(op, grad):
    # n Re(IFFT(g zero-padded to the full length)) is n IRFFT(g with its two-sided bins
    # halved): the real inverse transform, half the work of the complex one.
    x, fft_length = op.inputs
    rank = sp.RANK[op.op_def]
    irfft_fn = sp.irfft if rank == 1 else sp.irfft2d
    real_dtype = x.dtype
    scale = cast(_edge_mask(fft_length, 0.5, real_dtype)
                 * cast(reduce_prod(fft_length), real_dtype), grad.dtype)
    dx = irfft_fn(multiply(grad, scale), fft_length)
    return [_pad_inner(dx, array_core.shape(x)[-rank:] - fft_length, rank), None]


def _irfft_grad(op, grad):
    y, fft_length = op.inputs
    rank = sp.RANK[op.op_def]
    rfft_fn = sp.rfft if rank == 1 else sp.rfft2d
    real_dtype = grad.dtype
    mask = _edge_mask(fft_length, 2.0, real_dtype)
    scale = cast(mask / cast(reduce_prod(fft_length), real_dtype), y.dtype)
    dy = multiply(rfft_fn(grad, fft_length), scale)
    return [_pad_inner(dy, subtract(array_core.shape(y)[-rank:], _half_length(fft_length)),
                       rank), None]


for _op in (sp.RFFT, sp.RFFT2D):
    _op.def_grad(_rfft_grad)
for _op in (sp.IRFFT, sp.IRFFT2D):
    _op.def_grad(_irfft_grad)

"""Fast Fourier transforms (TF's spectral_ops.cc and signal/fft_ops.py): FFT/IFFT over the
inner 1, 2 or 3 dimensions of a complex tensor, RFFT/IRFFT between real signals and their
half spectra (`fft_length` input, Treal/Tcomplex attrs), `tf.signal.fftshift`/`ifftshift`.

The raw ops require every inner input dimension to be at least `fft_length` (IRFFT: the
innermost at least fft_length // 2 + 1) and crop longer ones; the `rfft*`/`irfft*` wrappers
zero-pad shorter inputs first, as TensorFlow's do. Gradients are in spectral_ops_grad.py.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_fill, array_gather, spectral_ops_docs
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.arithmetic import floor_div, maximum, negative
from ndflow.ops.array_reorder import roll
from ndflow.ops.array_slicing import concat
from ndflow.ops.comparison import composite_name
from ndflow.ops.op_def import op_def

_TCOMPLEX = "Tcomplex: {complex64, complex128} = DT_COMPLEX64"
_TREAL = "Treal: {float, double} = DT_FLOAT"
COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def _check_rank(shape: TensorShape, rank: int) -> None:
    if shape.rank is not None and shape.rank < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.rank}")


def _fft_shape(rank):
    def shape(ctx):
        _check_rank(ctx.shapes[0], rank)
        return [ctx.shapes[0]]
    return shape


def _rfft_shape(rank, forward):
    def shape(ctx):
        s, lengths = ctx.shapes
        _check_rank(s, rank)
        if lengths.rank is not None and lengths.rank != 1:
            raise ValueError(f"Shape must be rank 1 but is rank {lengths.rank}")
        if lengths.rank == 1 and lengths[0] is not None and lengths[0] != rank:
            raise ValueError(f"Dimension must be {rank} but is {lengths[0]}")
        if s.rank is None:
            return [TensorShape(None)]
        dims = s.as_list()
        value = ctx.value(1)
        if value is None:
            dims[-rank:] = [None] * rank
        else:
            for i, n in enumerate(np.reshape(value, -1).tolist()):
                last = forward and i == rank - 1 and n != 0
                dims[len(dims) - rank + i] = n // 2 + 1 if last else n
        return [TensorShape(dims)]
    return shape


def _fft_op(name, rank):
    return op_def(name, inputs=["input: Tcomplex"], outputs=["output: Tcomplex"],
                  attrs=[_TCOMPLEX], shape=_fft_shape(rank))


def _rfft_op(name, rank, **flags):
    return op_def(name, inputs=["input: Treal", "fft_length: int32"],
                  outputs=["output: Tcomplex"], attrs=[_TREAL, _TCOMPLEX],
                  shape=_rfft_shape(rank, True), **flags)


def _irfft_op(name, rank, **flags):
    return op_def(name, inputs=["input: Tcomplex", "fft_length: int32"],
                  outputs=["output: Treal"], attrs=[_TREAL, _TCOMPLEX],
                  shape=_rfft_shape(rank, False), **flags)


FFT, IFFT = _fft_op("FFT", 1), _fft_op("IFFT", 1)
FFT2D, IFFT2D = _fft_op("FFT2D", 2), _fft_op("IFFT2D", 2)
FFT3D, IFFT3D = _fft_op("FFT3D", 3), _fft_op("IFFT3D", 3)
RFFT, IRFFT = _rfft_op("RFFT", 1), _irfft_op("IRFFT", 1)
RFFT2D, IRFFT2D = _rfft_op("RFFT2D", 2), _irfft_op("IRFFT2D", 2)
# TensorFlow registers no gradient for the 3-D real transforms.
RFFT3D = _rfft_op("RFFT3D", 3, gradient_undefined=True)
IRFFT3D = _irfft_op("IRFFT3D", 3, gradient_undefined=True)
RANK = {FFT: 1, IFFT: 1, FFT2D: 2, IFFT2D: 2, FFT3D: 3, IFFT3D: 3, RFFT: 1, IRFFT: 1,
        RFFT2D: 2, IRFFT2D: 2, RFFT3D: 3, IRFFT3D: 3}


# -- the complex transforms --------------------------------------------------------------------

def _complex_transform(op):
    def transform(input, name=None) -> Tensor:  # noqa: A002 - TF's name
        if not isinstance(input, Tensor):
            input = convert_to_tensor(input, dtype_hint=dtypes.complex64, name="input")  # noqa: A001
        return apply_op(op, [input], name=name).outputs[0]
    transform.__name__ = op.name.lower()
    transform.__doc__ = spectral_ops_docs.complex_doc(op.name.lower(), RANK[op])
    return transform


fft = tf_export("signal.fft", v1=["signal.fft", "fft"])(_complex_transform(FFT))
ifft = tf_export("signal.ifft", v1=["signal.ifft", "ifft"])(_complex_transform(IFFT))
fft2d = tf_export("signal.fft2d", v1=["signal.fft2d", "fft2d"])(_complex_transform(FFT2D))
ifft2d = tf_export("signal.ifft2d", v1=["signal.ifft2d", "ifft2d"])(_complex_transform(IFFT2D))
fft3d = tf_export("signal.fft3d", v1=["signal.fft3d", "fft3d"])(_complex_transform(FFT3D))
ifft3d = tf_export("signal.ifft3d", v1=["signal.ifft3d", "ifft3d"])(_complex_transform(IFFT3D))


# -- the real transforms -----------------------------------------------------------------------

def _infer_fft_length(x, rank: int, inverse: bool):
    """The inner `rank` dimensions of `x` (IRFFT: the last as 2 * (n - 1))."""
    inner = x.shape[-rank:]
    if inner.is_fully_defined():
        lengths = inner.as_list()
        if inverse and lengths:
            lengths[-1] = max(0, 2 * (lengths[-1] - 1))
        return convert_to_tensor(np.array(lengths, np.int32), dtypes.int32)
    dims = array_core.shape(x)[-rank:]
    if not inverse:
        return dims
    parts = array_core.unstack(dims, num=rank)
    parts[-1] = maximum(0, 2 * (parts[-1] - 1))
    return array_core.stack(parts)


def _maybe_pad(x, rank: int, fft_length, inverse: bool):
    """Zero-pads the inner dimensions of `x` up to `fft_length` (the innermost up to
    fft_length // 2 + 1 for IRFFT), as TensorFlow's wrappers do."""
    if x.shape.rank is not None and 0 in x.shape.as_list():
        return x
    lengths = constant_value(fft_length)
    if lengths is not None and x.shape.rank is not None:
        target = [int(n) for n in np.reshape(lengths, -1)]
        if inverse:
            target[-1] = target[-1] // 2 + 1
        inner = x.shape[-len(target):]
        if inner.is_fully_defined():
            extra = [max(t - d, 0) for t, d in zip(target, inner.as_list())]
            if not any(extra):
                return x
            paddings = [[0, 0]] * (x.shape.rank - len(target)) + [[0, e] for e in extra]
            return array_fill.pad(x, np.array(paddings, np.int32))
    if inverse:
        fft_length = concat([fft_length[:-1], floor_div(fft_length[-1:], 2) + 1], 0)
    outer = array_fill.zeros([maximum(0, array_core.rank(x) - rank)], dtypes.int32)
    extra = maximum(0, fft_length - array_core.shape(x)[-rank:])
    paddings = concat([outer, extra], 0)
    return array_fill.pad(x, array_core.stack([array_fill.zeros_like(paddings), paddings], 1))


def _real_transform(op, rank: int, inverse: bool, default_name: str):
    def transform(input_tensor, fft_length=None, name=None) -> Tensor:
        with composite_name(name, default_name) as final:
            x = convert_to_tensor(input_tensor, name="input_tensor",
                                  dtype_hint=dtypes.complex64 if inverse else dtypes.float32)
            if inverse and not x.dtype.is_complex:
                raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, got: "
                                 f"{x}")
            if not inverse and x.dtype not in COMPLEX_OF:
                raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x}")
            _check_rank(x.shape, rank)
            if fft_length is None:
                fft_length = _infer_fft_length(x, rank, inverse)
            else:
                fft_length = convert_to_tensor(fft_length, dtypes.int32)
            x = _maybe_pad(x, rank, fft_length, inverse)
            static = constant_value(fft_length)
            if static is not None:
                fft_length = convert_to_tensor(np.asarray(static, np.int32), dtypes.int32)
        attrs = {"Treal": x.dtype.real_dtype} if inverse else {"Tcomplex": COMPLEX_OF[x.dtype]}
        return apply_op(op, [x, fft_length], attrs, name=final).outputs[0]
    transform.__name__ = default_name
    transform.__doc__ = spectral_ops_docs.real_doc(default_name, rank)
    return transform


rfft = tf_export("signal.rfft")(_real_transform(RFFT, 1, False, "rfft"))
irfft = tf_export("signal.irfft")(_real_transform(IRFFT, 1, True, "irfft"))
rfft2d = tf_export("signal.rfft2d")(_real_transform(RFFT2D, 2, False, "rfft2d"))
irfft2d = tf_export("signal.irfft2d")(_real_transform(IRFFT2D, 2, True, "irfft2d"))
rfft3d = tf_export("signal.rfft3d")(_real_transform(RFFT3D, 3, False, "rfft3d"))
irfft3d = tf_export("signal.irfft3d")(_real_transform(IRFFT3D, 3, True, "irfft3d"))


# -- shifts ------------------------------------------------------------------------------------

def _shift(x, axes, name, default_name, sign):
    with composite_name(name, default_name) as final:
        x = convert_to_tensor(x)
        if axes is None:
            axes = tuple(range(x.shape.rank))
            shift = floor_div(array_core.shape(x), 2)
        elif isinstance(axes, int):
            shift = floor_div(array_core.shape(x)[axes], 2)
        else:
            axes = [a % x.shape.rank if x.shape.rank is not None else a for a in axes]
            shift = floor_div(array_gather.gather(array_core.shape(x), axes), 2)
        if sign < 0:
            shift = negative(shift)
    return roll(x, shift, axes, name=final)


@tf_export("signal.fftshift")
def fftshift(x, axes=None, name=None) -> Tensor:
    """`tf.signal.fftshift`: the zero frequency moved to the centre (numpy.fft.fftshift)."""
    return _shift(x, axes, name, "fftshift", 1)


@tf_export("signal.ifftshift")
def ifftshift(x, axes=None, name=None) -> Tensor:
    """`tf.signal.ifftshift`: the inverse of fftshift (numpy.fft.ifftshift)."""
    return _shift(x, axes, name, "ifftshift", -1)


attach(globals(), spectral_ops_docs.DOCS)

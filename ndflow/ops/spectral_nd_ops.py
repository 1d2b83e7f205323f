"""N-dimensional FFTs (TF's FFTND/IFFTND/RFFTND/IRFFTND ops and the `tf.signal.fftnd` &
co wrappers of signal/fft_ops.py).

The ops take `fft_length` and `axes` inputs; their kernels (TF has only GPU ones) accept only
successive ascending axes ending at the last, i.e. the inner len(axes) dimensions. Their shape
function leaves the input's static shape unchanged (even for RFFTND/IRFFTND, whose runtime
inner dimensions differ), as TF's does. TensorFlow registers no gradient for them.

The wrappers follow TF's quirks on purpose: `fft_length` defaults to the input's whole shape
(so an explicit shorter `axes` needs an explicit `fft_length`), the zero-padding to
`fft_length` applies to the inner dimensions, and `norm` scales the input before the op.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes, errors
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor, is_symbolic_tensor
from ndflow.ops import array_core, array_fill, spectral_nd_ops_docs
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.arithmetic import floor_div, maximum
from ndflow.ops.array_slicing import concat
from ndflow.ops.comparison import composite_name
from ndflow.ops.op_def import op_def
from ndflow.ops.spectral_ops import _TCOMPLEX, _TREAL, COMPLEX_OF

_ND_INPUTS = ["fft_length: int32", "axes: int32"]


def _unchanged_shape(ctx):
    return [ctx.shapes[0]]


FFTND = op_def("FFTND", inputs=["input: Tcomplex", *_ND_INPUTS], outputs=["output: Tcomplex"],
               attrs=[_TCOMPLEX], shape=_unchanged_shape, gradient_undefined=True)
IFFTND = op_def("IFFTND", inputs=["input: Tcomplex", *_ND_INPUTS], outputs=["output: Tcomplex"],
                attrs=[_TCOMPLEX], shape=_unchanged_shape, gradient_undefined=True)
RFFTND = op_def("RFFTND", inputs=["input: Treal", *_ND_INPUTS], outputs=["output: Tcomplex"],
                attrs=[_TREAL, _TCOMPLEX], shape=_unchanged_shape, gradient_undefined=True)
IRFFTND = op_def("IRFFTND", inputs=["input: Tcomplex", *_ND_INPUTS], outputs=["output: Treal"],
                 attrs=[_TREAL, _TCOMPLEX], shape=_unchanged_shape, gradient_undefined=True)


# -- the raw ops as TF exports them at the top level (tf.fftnd & co) ---------------------------

@tf_export("fftnd")
def gen_fftnd(input, fft_length, axes, name=None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.fftnd`: the FFTND op (complex FFT over the inner len(axes) dimensions)."""
    return apply_op(FFTND, [input, fft_length, axes], name=name).outputs[0]


@tf_export("ifftnd")
def gen_ifftnd(input, fft_length, axes, name=None) -> Tensor:  # noqa: A002
    """`tf.ifftnd`: the IFFTND op."""
    return apply_op(IFFTND, [input, fft_length, axes], name=name).outputs[0]


@tf_export("rfftnd")
def gen_rfftnd(input, fft_length, axes, Tcomplex=dtypes.complex64, name=None) -> Tensor:  # noqa: A002, N803
    """`tf.rfftnd`: the RFFTND op (real-to-half-spectrum FFT)."""
    return apply_op(RFFTND, [input, fft_length, axes], {"Tcomplex": dtypes.as_dtype(Tcomplex)},
                    name=name).outputs[0]


@tf_export("irfftnd")
def gen_irfftnd(input, fft_length, axes, Treal=dtypes.float32, name=None) -> Tensor:  # noqa: A002, N803
    """`tf.irfftnd`: the IRFFTND op (half spectrum to real signal)."""
    return apply_op(IRFFTND, [input, fft_length, axes], {"Treal": dtypes.as_dtype(Treal)},
                    name=name).outputs[0]


# -- tf.signal wrappers ------------------------------------------------------------------------

def _check_rank_at_least(x, rank: int) -> None:
    if x.shape.rank is not None and x.shape.rank < rank:
        raise ValueError(f"Shape {x.shape} must have rank at least {rank}")


def _maybe_pad(x, fft_rank: int, fft_length, reverse: bool):
    """TF's `_maybe_pad_for_rfft`: zero-pads the inner dimensions of `x` up to fft_length
    (IRFFT: the innermost up to fft_length // 2 + 1); never crops."""
    if x.shape.rank is not None and 0 in x.shape.as_list():
        return x
    known = constant_value(fft_length, partial=True)
    if known is not None and x.shape.rank is not None and None not in list(known):
        target = [int(n) for n in np.reshape(known, -1)]
        inner = x.shape[-len(target):] if target else x.shape[:0]
        if inner.is_fully_defined():
            if reverse:
                target[-1] = target[-1] // 2 + 1
            extra = [max(t - d, 0) for t, d in zip(target, inner.as_list())]
            if any(extra):
                outer = [[0, 0]] * max(x.shape.rank - len(target), 0)
                return array_fill.pad(x, outer + [[0, e] for e in extra])
            return x
    outer = array_fill.zeros([maximum(0, array_core.rank(x) - fft_rank)], dtypes.int32)
    if reverse:
        fft_length = concat([fft_length[:-1], floor_div(fft_length[-1:], 2) + 1], 0)
    extra = maximum(0, fft_length - array_core.shape(x)[-fft_rank:])
    paddings = concat([outer, extra], 0)
    return array_fill.pad(x, array_core.stack([array_fill.zeros_like(paddings), paddings], 1))


def _default_fft_length(x, reverse: bool):
    """The whole input shape (TF's wrappers use every dimension, whatever `axes` says);
    IRFFT's last entry 2 * (n - 1), from the static shape."""
    if not reverse:
        return array_core.shape(x)[-len(x.shape):], True
    lengths = x.shape.as_list()
    if None in lengths:  # TF converts the static shape, unknown dimensions included
        raise TypeError("Expected int32, but got None of type 'NoneType'.")
    lengths[-1] = max(0, 2 * (lengths[-1] - 1))
    return convert_to_tensor(lengths, dtypes.int32), False


def _nd_wrapper(kind: str):
    reverse = kind == "irfftnd"
    inverse = kind in ("ifftnd", "irfftnd")

    def transform(input_tensor, fft_length=None, axes=None, norm=None, name=None) -> Tensor:
        with composite_name(name, kind) as final:
            if axes is None:
                axes = convert_to_tensor(np.arange(len(input_tensor.shape)), dtypes.int32)
            else:
                axes = convert_to_tensor(axes, dtypes.int32)
            fft_rank = axes.shape[0]
            hint = dtypes.float32 if kind == "rfftnd" else dtypes.complex64
            x = convert_to_tensor(input_tensor, dtype_hint=hint)
            if kind == "rfftnd" and x.dtype not in COMPLEX_OF:
                raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x}")
            _check_rank_at_least(x, fft_rank)
            if reverse and not x.dtype.is_complex:
                raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, got: "
                                 f"{x}")
            # TF's default is a slice of Shape, which its constant_value cannot see in graphs.
            symbolic_default = False
            if fft_length is None:
                fft_length, symbolic_default = _default_fft_length(x, reverse)
            else:
                fft_length = convert_to_tensor(fft_length, dtypes.int32)
            x = _maybe_pad(x, fft_rank, fft_length, reverse)
            static = None if symbolic_default and is_symbolic_tensor(fft_length) else \
                constant_value(fft_length)
            if static is not None:
                fft_length = static
            x = _normalize(x, fft_length, norm, inverse)
        if kind == "rfftnd":
            return gen_rfftnd(x, fft_length, axes, Tcomplex=COMPLEX_OF[x.dtype], name=final)
        if kind == "irfftnd":
            return gen_irfftnd(x, fft_length, axes, Treal=x.dtype.real_dtype, name=final)
        return (gen_ifftnd if inverse else gen_fftnd)(x, fft_length, axes, name=final)
    transform.__name__ = kind
    transform.__doc__ = (f"`tf.signal.{kind}`: the {kind.upper()} op over `axes` (default all; "
                         "the op supports the inner dimensions only); `fft_length` defaults "
                         "to the input's shape; `norm` 'backward', 'forward' or 'ortho'."
                         + (" Real input." if kind == "rfftnd" else ""))
    return transform


_NO_ITERATION = (
    "Iterating over a symbolic `tf.Tensor` is not allowed. You can attempt the following "
    "resolutions to the problem: If you are running in Graph mode, use Eager execution mode or "
    "decorate this function with @tf.function. If you are using AutoGraph, you can try "
    "decorating this function with @tf.function. If that does not work, then you may be using "
    "an unsupported feature or your source code may not be visible to AutoGraph. See "
    "https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/autograph/g3doc/"
    "reference/limitations.md#access-to-source-code for more information.")


def _normalize(x, fft_length, norm, inverse: bool):
    """TF scales the input by the product of fft_length ('forward') or its square root
    ('ortho'): divided for forward transforms, multiplied for inverse ones; any other string
    is taken as 'backward' (no scaling)."""
    if norm is None:
        norm = "backward"
    if norm == "backward":
        return x
    if is_symbolic_tensor(fft_length):
        # TF's wrapper iterates over fft_length here, which TF refuses for graph tensors.
        raise errors.OperatorNotAllowedInGraphError(_NO_ITERATION)
    n = 1
    for length in fft_length:
        n *= length
    if norm == "forward":
        return x * n if inverse else x / n
    if norm == "ortho":
        return x * np.sqrt(n) if inverse else x / np.sqrt(n)
    return x


fftnd = tf_export("signal.fftnd")(_nd_wrapper("fftnd"))
ifftnd = tf_export("signal.ifftnd")(_nd_wrapper("ifftnd"))
rfftnd = tf_export("signal.rfftnd")(_nd_wrapper("rfftnd"))
irfftnd = tf_export("signal.irfftnd")(_nd_wrapper("irfftnd"))


attach(globals(), spectral_nd_ops_docs.DOCS)

"""`keras.ops` math (Keras' ops.math module, exported at keras.ops.*): segment reductions,
top_k/in_top_k, logsumexp, extract_sequences, FFTs as (real, imag) pairs, stft/istft, erf,
erfinv, logdet, cdist, as Keras 3 runs them on the TensorFlow backend."""

from __future__ import annotations

from ndflow.keras import docstrings
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import math_docs
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    array_core,
    array_fill,
    array_gather,
    array_search,
    complex_ops,
    linalg_decomp,
    math,
    math_special,
    reduction,
    segment,
    sort,
    spectral_ops,
)
from ndflow.ops.cast import cast
from ndflow.ops.signal import shape_ops, stft_ops, window_ops


def _sorted_check(num_segments, sorted):  # noqa: A002
    if sorted and num_segments is not None:
        raise ValueError("Argument `num_segments` cannot be set when sorted is True when "
                         "using the tensorflow backend."
                         f"Received: num_segments={num_segments}, sorted={sorted}.")


def _num_segments(segment_ids, num_segments):
    if num_segments is not None:
        return num_segments
    return cast(reduction.reduce_max(segment_ids) + 1, "int32")


@keras_op("segment_sum")
def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    _sorted_check(num_segments, sorted)
    data, segment_ids = rules.to_tensor(data), rules.to_tensor(segment_ids)
    if sorted:
        return segment.segment_sum(data, segment_ids)
    if num_segments is None:
        num_segments = array_core.shape(array_search.unique(segment_ids)[0])[0]
    return array_gather.unsorted_segment_sum(data, segment_ids, num_segments)


def _segment(sorted_fn, unsorted_fn, name):
    def op(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
        _sorted_check(num_segments, sorted)
        data, segment_ids = rules.to_tensor(data), rules.to_tensor(segment_ids)
        if sorted:
            return sorted_fn(data, segment_ids)
        return unsorted_fn(data, segment_ids, _num_segments(segment_ids, num_segments))
    op.__name__ = op.__qualname__ = name
    return keras_op(name)(op)


segment_max = _segment(segment.segment_max, segment.unsorted_segment_max, "segment_max")
segment_min = _segment(segment.segment_min, segment.unsorted_segment_min, "segment_min")
segment_prod = _segment(segment.segment_prod, segment.unsorted_segment_prod, "segment_prod")


@keras_op("top_k")
def top_k(x, k, sorted=True):  # noqa: A002
    return sort.top_k(rules.to_tensor(x), k, sorted=sorted)


@keras_op("in_top_k")
def in_top_k(targets, predictions, k):
    return sort.in_top_k(rules.to_tensor(targets), rules.to_tensor(predictions), k)


@keras_op("logsumexp")
def logsumexp(x, axis=None, keepdims=False):
    return math.reduce_logsumexp(rules.to_tensor(x), axis=axis, keepdims=keepdims)


@keras_op("extract_sequences")
def extract_sequences(x, sequence_length, sequence_stride):
    return shape_ops.frame(rules.to_tensor(x), sequence_length, sequence_stride, axis=-1)


@keras_op("cdist")
def cdist(x, y):
    x, y = rules.to_tensor(x), rules.to_tensor(y)
    if x.shape.rank < 2 or y.shape.rank < 2:
        raise ValueError("`cdist` inputs must have rank >= 2")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError("Last dimension of inputs to `cdist` must match")
    diff = array_core.expand_dims(x, -2) - array_core.expand_dims(y, -3)
    return math.sqrt(reduction.reduce_sum(math.square(diff), axis=-1))


@keras_op("erf")
def erf(x):
    return math.erf(rules.to_tensor(x))


@keras_op("erfc")
def erfc(x):
    return math_special.erfc(rules.to_tensor(x))


@keras_op("erfinv")
def erfinv(x):
    x = rules.to_tensor(x)
    if x.dtype.name in ("bfloat16", "float16"):
        return cast(math_special.erfinv(cast(x, "float32")), x.dtype)
    return math_special.erfinv(x)


@keras_op("logdet")
def logdet(x):
    return linalg_decomp.logdet(rules.to_tensor(x))


# -- Fourier transforms (complex values as (real, imag) pairs) -------------------------------
def _complex(x):
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary."
                         f"Received: x={x}")
    real, imag = rules.to_tensor(x[0]), rules.to_tensor(x[1])
    if real.shape.as_list() != imag.shape.as_list():
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary."
                         "Both the real and imaginary parts should have the same shape. "
                         f"Received: x[0].shape = {real.shape}, x[1].shape = {imag.shape}")
    if not real.dtype.is_floating or not imag.dtype.is_floating:
        raise ValueError(f"At least one tensor in input `x` is not of type float.Received: "
                         f"x={x}.")
    return complex_ops.complex(real, imag)


def _parts(z):
    return complex_ops.real(z), complex_ops.imag(z)


@keras_op("fft")
def fft(x):
    return _parts(spectral_ops.fft(_complex(x)))


@keras_op("fft2")
def fft2(x):
    return _parts(spectral_ops.fft2d(_complex(x)))


@keras_op("ifft2")
def ifft2(x):
    real, imag = rules.to_tensor(x[0]), rules.to_tensor(x[1])
    shape = array_core.shape(real)
    hw = cast(shape[-2], real.dtype) * cast(shape[-1], real.dtype)
    fr, fi = fft2((real, -imag))
    return fr / hw, -fi / hw


@keras_op("rfft")
def rfft(x, fft_length=None):
    x = rules.to_tensor(x)
    x = cast(x, "float32") if x.dtype.name != "float64" else x
    return _parts(spectral_ops.rfft(x, None if fft_length is None else [fft_length]))


@keras_op("irfft")
def irfft(x, fft_length=None):
    return spectral_ops.irfft(_complex(x), None if fft_length is None else [fft_length])


def _stft_window(window, sequence_length, fft_length, dtype):
    l_pad = (fft_length - sequence_length) // 2
    r_pad = fft_length - sequence_length - l_pad
    if window is None:
        return None
    if isinstance(window, str):
        if window not in ("hann", "hamming"):
            raise ValueError('If a string is passed to `window`, it must be one of `"hann"`, '
                             f'`"hamming"`. Received: window={window}')
        fn = window_ops.hann_window if window == "hann" else window_ops.hamming_window
        win = fn(sequence_length, periodic=True, dtype=dtype)
    else:
        win = rules.to_tensor(window, dtype)
    if win.shape.rank != 1 or win.shape[-1] != sequence_length:
        raise ValueError("The shape of `window` must be equal to [sequence_length]."
                         f"Received: window shape={win.shape}")
    return array_fill.pad(win, [[l_pad, r_pad]])


@keras_op("stft")
def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    x = rules.to_tensor(x)
    if x.dtype.name not in ("float32", "float64"):
        raise TypeError("Invalid input type. Expected `float32` or `float64`. Received: "
                        f"input type={x.dtype.name}")
    if fft_length < sequence_length:
        raise ValueError("`fft_length` must equal or larger than `sequence_length`. "
                         f"Received: sequence_length={sequence_length}, "
                         f"fft_length={fft_length}")
    win = _stft_window(window, sequence_length, fft_length, x.dtype)
    if center:
        pad = [[0, 0]] * (x.shape.rank - 1) + [[fft_length // 2, fft_length // 2]]
        x = array_fill.pad(x, pad, mode="REFLECT")
    out = stft_ops.stft(x, frame_length=fft_length, frame_step=sequence_stride,
                        fft_length=fft_length,
                        window_fn=None if win is None else (lambda n, dtype: win))
    return _parts(out)


@keras_op("istft")
def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann",
          center=True):
    z = _complex(x)
    dtype = complex_ops.real(z).dtype
    frames = array_core.shape(z)[-2]
    expected = fft_length + sequence_stride * (frames - 1)
    win = _stft_window(window, sequence_length, fft_length, dtype)
    window_fn = None if win is None else stft_ops.inverse_stft_window_fn(
        sequence_stride, lambda n, dtype: win)
    out = stft_ops.inverse_stft(z, frame_length=fft_length, frame_step=sequence_stride,
                                fft_length=fft_length, window_fn=window_fn)
    start = fft_length // 2 if center else 0
    if length is not None:
        return out[..., start:start + length]
    if center:
        return out[..., start:-(fft_length // 2)]
    return out[..., start:expected]


docstrings.attach(globals(), math_docs.DOCS)

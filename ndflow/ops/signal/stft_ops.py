"""Short-time Fourier transforms: `tf.signal.stft`, `inverse_stft` and
`inverse_stft_window_fn` (the window that makes inverse_stft undo stft).

stft frames the signal (`frame`), multiplies each frame by `window_fn(frame_length)` and
takes its RFFT of `fft_length` (default: the smallest power of two >= frame_length);
inverse_stft takes the IRFFT, crops or pads the frames to `frame_length`, windows them and
overlap-adds them.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_fill
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import floor_div, log, maximum, multiply, truediv, where
from ndflow.ops.arithmetic import pow as pow_
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal
from ndflow.ops.math import ceil, square
from ndflow.ops.reduction import reduce_sum
from ndflow.ops.signal.shape_ops import frame, overlap_and_add, scalar_int, static_int
from ndflow.ops.signal.window_ops import hann_window
from ndflow.ops.spectral_ops import irfft, rfft


def _enclosing_power_of_two(value):
    """The smallest power of two >= value."""
    static = static_int(value)
    if static is not None:
        return convert_to_tensor(int(2 ** int(np.ceil(np.log2(static)))), value.dtype)
    exponent = ceil(truediv(log(cast(value, dtypes.float32)), np.log(2.0)))
    return cast(pow_(2.0, exponent), value.dtype)


def _arguments(values, name, rank, frame_length, frame_step, fft_length):
    """stft's and inverse_stft's arguments converted and checked as TensorFlow's."""
    values = convert_to_tensor(values, name=name)
    if values.shape.rank is not None and values.shape.rank < rank:
        raise ValueError(f"Shape {values.shape} must have rank at least {rank}")
    frame_length = scalar_int(frame_length, "frame_length")
    frame_step = scalar_int(frame_step, "frame_step")
    return values, frame_length, frame_step, _fft_length(fft_length, frame_length)


def _fft_length(fft_length, frame_length):
    if fft_length is None:
        return _enclosing_power_of_two(frame_length)
    t = convert_to_tensor(fft_length, name="fft_length")
    if t.shape.rank not in (None, 0):
        raise ValueError(f"Shape {t.shape} must have rank 0")
    return t


@tf_export("signal.stft")
def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None) -> Tensor:
    """`tf.signal.stft`: `[..., frames, fft_length // 2 + 1]` complex spectra of the windowed
    frames of `signals` (float32 -> complex64, float64 -> complex128)."""
    with name_scope(name, "stft"):
        signals, frame_length, frame_step, fft_length = _arguments(
            signals, "signals", 1, frame_length, frame_step, fft_length)
        frames = frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            frames = multiply(frames, window_fn(frame_length, dtype=frames.dtype))
        return rfft(frames, array_core.reshape(fft_length, [1]))


@tf_export("signal.inverse_stft_window_fn")
def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """`tf.signal.inverse_stft_window_fn`: a `window_fn(frame_length, dtype)` giving the
    forward window divided by the sum of the squared forward windows overlapping each sample
    (0 where that sum is 0), so that inverse_stft(stft(x)) reconstructs x."""
    def window_fn(frame_length, dtype):
        with name_scope(name, "inverse_stft_window_fn"):
            step = scalar_int(frame_step, "frame_step")
            length = scalar_int(frame_length, "frame_length")
            forward = forward_window_fn(length, dtype=dtype)
            overlaps = -floor_div(-length, step)
            power = array_fill.pad(square(forward),
                                   array_core.reshape(array_core.stack(
                                       [0, overlaps * step - length]), [1, 2]))
            # The squared windows that overlap a sample sit one frame_step apart.
            per_phase = reduce_sum(array_core.reshape(power, array_core.stack([overlaps, step])),
                                   0, keepdims=True)
            denom = array_core.reshape(array_fill.tile(per_phase, array_core.stack([overlaps,
                                                                                   1])), [-1])
            denom = denom[:length]
            return where(equal(denom, 0.0), array_fill.zeros_like(forward), forward / denom)
    return window_fn


@tf_export("signal.inverse_stft")
def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None) -> Tensor:
    """`tf.signal.inverse_stft`: the signal whose stft is `stfts` (with
    `window_fn=inverse_stft_window_fn(frame_step)` for a perfect reconstruction)."""
    with name_scope(name, "inverse_stft"):
        stfts, frame_length, frame_step, fft_length = _arguments(
            stfts, "stfts", 2, frame_length, frame_step, fft_length)
        frames = irfft(stfts, array_core.reshape(fft_length, [1]))
        length = static_int(frame_length)
        have = frames.shape[-1] if frames.shape.rank is not None else None
        if length is None or have is None:  # cut or pad to frame_length at run time
            frames = frames[..., :frame_length]
            missing = maximum(0, frame_length - array_core.shape(frames)[-1])
            rows = concat([array_fill.zeros(array_core.stack([array_core.rank(frames) - 1, 2]),
                                            dtypes.int32),
                           array_core.reshape(array_core.stack([0, missing]), [1, 2])], 0)
            frames = array_fill.pad(frames, rows)
        elif have > length:
            frames = frames[..., :length]
        elif have < length:
            rows = [[0, 0]] * (frames.shape.rank - 1) + [[0, length - have]]
            frames = array_fill.pad(frames, np.array(rows, np.int32))
        if window_fn is not None:
            frames = multiply(frames, window_fn(frame_length, dtype=stfts.dtype.real_dtype))
        return overlap_and_add(frames, frame_step)

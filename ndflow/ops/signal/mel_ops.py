"""Mel-frequency features: `tf.signal.linear_to_mel_weight_matrix` (triangular filters on
TensorFlow's HTK mel scale, mel = 1127 ln(1 + hertz / 700)) and
`mfccs_from_log_mel_spectrograms` (an orthonormal DCT-II of log mel spectrograms).
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_fill
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.arithmetic import log, maximum, minimum, multiply, truediv
from ndflow.ops.array_builders import linspace
from ndflow.ops.cast import cast
from ndflow.ops.math import rsqrt
from ndflow.ops.signal.dct_ops import dct

_MEL_BREAK_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hertz):
    return multiply(_MEL_HIGH_FREQUENCY_Q, log(1.0 + truediv(hertz, _MEL_BREAK_HERTZ)))


def _validate(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz, dtype):
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz "
                         f"{upper_edge_hertz:.1f}")
    if not isinstance(sample_rate, Tensor):
        if sample_rate <= 0.0:
            raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
        if upper_edge_hertz > sample_rate / 2:
            raise ValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency "
                             f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: "
                             f"{sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype!r}")


@tf_export("signal.linear_to_mel_weight_matrix")
def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=dtypes.float32, name=None) -> Tensor:
    """`tf.signal.linear_to_mel_weight_matrix`: `[num_spectrogram_bins, num_mel_bins]`
    weights taking linear spectrogram bins (0 .. sample_rate / 2) to mel bands: band m is a
    triangle over mel edges m, m + 1, m + 2 of num_mel_bins + 2 points evenly spaced in mel
    from lower_edge_hertz to upper_edge_hertz. The DC bin gets no weight."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "linear_to_mel_weight_matrix"):
        if isinstance(sample_rate, Tensor):
            static = constant_value(sample_rate)
            if static is not None:
                sample_rate = static.item()
        _validate(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz, dtype)
        sample_rate = cast(sample_rate, dtype)
        lower = convert_to_tensor(lower_edge_hertz, dtype, name="lower_edge_hertz")
        upper = convert_to_tensor(upper_edge_hertz, dtype, name="upper_edge_hertz")
        zero = convert_to_tensor(0.0, dtype)
        # Spectrogram bin frequencies without the DC bin, as mel, as a column.
        # (reshapes: static shapes for graphs)
        hertz = linspace(zero, sample_rate / 2.0, num_spectrogram_bins)[1:]
        bins_mel = array_core.reshape(_hertz_to_mel(hertz), [num_spectrogram_bins - 1, 1])
        edges = array_core.reshape(linspace(_hertz_to_mel(lower), _hertz_to_mel(upper),
                                            num_mel_bins + 2), [num_mel_bins + 2])
        left = array_core.reshape(edges[:-2], [1, num_mel_bins])
        center = array_core.reshape(edges[1:-1], [1, num_mel_bins])
        right = array_core.reshape(edges[2:], [1, num_mel_bins])
        rising = truediv(bins_mel - left, center - left)
        falling = truediv(right - bins_mel, right - center)
        weights = maximum(zero, minimum(rising, falling))
        return array_fill.pad(weights, np.array([[1, 0], [0, 0]], np.int32))


@tf_export("signal.mfccs_from_log_mel_spectrograms")
def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None) -> Tensor:
    """`tf.signal.mfccs_from_log_mel_spectrograms`: MFCCs, the orthonormal DCT-II of the
    last axis (TensorFlow's scaling: the unnormalized DCT-II times 1 / sqrt(2 N))."""
    with name_scope(name, "mfccs_from_log_mel_spectrograms"):
        x = convert_to_tensor(log_mel_spectrograms)
        bins = x.shape[-1] if x.shape.rank else None
        if bins == 0:
            raise ValueError(f"num_mel_bins must be positive. Got: {x}")
        if bins is None:
            bins = array_core.shape(x)[-1]
        dct2 = dct(x, type=2)
        return dct2 * rsqrt(cast(bins, dct2.dtype) * 2.0)

"""`keras.layers.MelSpectrogram`: waveforms [..., samples] to mel-scaled (by default decibel)
spectrograms [..., mel bins, frames], as Keras 3.15 computes them: a centred STFT's
magnitude to the power `mag_exp`, a triangular mel filter bank (HTK's mel scale, the first
linear bin zeroed), `10 log10` against `ref_power` clipped `top_db` below the peak."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.ops import math_functions, numpy_array, numpy_linear
from ndflow.ops import arithmetic, array_core, array_fill, array_split, math, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


@keras_export("keras.layers.MelSpectrogram")
class MelSpectrogram(Layer):
    """Turns audio waveforms into mel spectrograms: a short-time Fourier transform, power
    spectra mapped to `num_mel_bins` mel-scale bands, optionally in decibels.

    Called on waveforms of shape (batch, samples); returns (batch, num_mel_bins, frames).

    Args:
      fft_length: the FFT size (frame length).
      sequence_stride: the hop between frames, in samples.
      sequence_length: the window length (default `fft_length`).
      window: the window ("hann", "hamming" or None).
      sampling_rate: the audio's sample rate, in Hz.
      num_mel_bins: the number of mel bands.
      min_freq: the lowest band edge, in Hz.
      max_freq: the highest band edge (default `sampling_rate / 2`).
      power_to_db: whether to convert the powers to decibels.
      top_db: with `power_to_db`, the dynamic range kept below the peak.
      mag_exp: the exponent of the magnitude (2: power, 1: amplitude).
      min_power: the floor applied before the log.
      ref_power: the reference power of 0 dB.
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: `fft_length` below `sequence_length`.
    """

    def __init__(self, fft_length=2048, sequence_stride=512, sequence_length=None,
                 window="hann", sampling_rate=16000, num_mel_bins=128, min_freq=20.0,
                 max_freq=None, power_to_db=True, top_db=80.0, mag_exp=2.0, min_power=1e-10,
                 ref_power=1.0, **kwargs):
        self.fft_length, self.sequence_stride = fft_length, sequence_stride
        self.sequence_length = sequence_length or fft_length
        if self.fft_length < self.sequence_length:
            raise ValueError("`fft_length` must be greater than or equal to   "
                             f"`sequence_length`. Received: `sequence_length`="
                             f"{self.sequence_length}, `fft_length`={self.fft_length}.")
        self.window, self.sampling_rate, self.num_mel_bins = window, sampling_rate, num_mel_bins
        self.min_freq = min_freq
        self.max_freq = max_freq or int(sampling_rate / 2)
        self.power_to_db, self.top_db, self.mag_exp = power_to_db, top_db, mag_exp
        self.min_power, self.ref_power = min_power, ref_power
        super().__init__(**kwargs)

    def call(self, inputs):
        dtype = self.compute_dtype if self.compute_dtype in ("float32", "float64") \
            else "float32"   # the STFT takes float32 and float64 only
        x = convert_to_tensor(inputs, dtype=dtype)
        real, imag = math_functions.stft(x, sequence_length=self.sequence_length,
                                         sequence_stride=self.sequence_stride,
                                         fft_length=self.fft_length, window=self.window,
                                         center=True)
        spec = math.sqrt(math.square(real) + math.square(imag))
        spec = arithmetic.pow(spec, cast(self.mag_exp, spec.dtype))
        spec = numpy_linear.tensordot(spec, self.linear_to_mel_weight_matrix(
            num_mel_bins=self.num_mel_bins, num_spectrogram_bins=spec.shape[-1],
            sampling_rate=self.sampling_rate, lower_edge_hertz=self.min_freq,
            upper_edge_hertz=self.max_freq), axes=1)
        if self.power_to_db:
            spec = self._db_scale(spec)
        return cast(numpy_array.swapaxes(spec, -1, -2), self.compute_dtype)

    def _db_scale(self, spec):
        floor = cast(self.min_power, spec.dtype)
        log_spec = 10.0 * math.log(arithmetic.maximum(spec, floor)) / math.log(
            cast(10.0, spec.dtype))
        ref = math.abs(cast(self.ref_power, spec.dtype))
        log_spec -= 10.0 * math.log(arithmetic.maximum(ref, floor)) / math.log(
            cast(10.0, spec.dtype))
        return arithmetic.maximum(log_spec, reduction.reduce_max(log_spec) - self.top_db)

    @staticmethod
    def _hertz_to_mel(hertz):
        return _MEL_HIGH_FREQUENCY_Q * math.log(1.0 + hertz / _MEL_BREAK_FREQUENCY_HERTZ)

    def linear_to_mel_weight_matrix(self, num_mel_bins=20, num_spectrogram_bins=129,
                                    sampling_rate=8000, lower_edge_hertz=125.0,
                                    upper_edge_hertz=3800.0, dtype="float32"):
        """[spectrogram bins, mel bins]: triangles of the HTK mel scale between
        lower_edge_hertz and upper_edge_hertz (the DC bin's row zero)."""
        rate = cast(sampling_rate, dtype)
        lower = convert_to_tensor(lower_edge_hertz, dtype=dtype)
        upper = convert_to_tensor(upper_edge_hertz, dtype=dtype)
        zero = convert_to_tensor(0.0, dtype=dtype)
        linear = numpy_array.linspace(zero, rate / 2.0, num_spectrogram_bins)[1:]
        bins_mel = array_core.expand_dims(self._hertz_to_mel(linear), 1)
        edges = math_functions.extract_sequences(
            numpy_array.linspace(self._hertz_to_mel(lower), self._hertz_to_mel(upper),
                                 num_mel_bins + 2), sequence_length=3, sequence_stride=1)
        low, center, high = (array_core.reshape(t, [1, num_mel_bins])
                             for t in array_split.split(edges, 3, axis=1))
        lower_slopes = (bins_mel - low) / (center - low)
        upper_slopes = (high - bins_mel) / (high - center)
        weights = arithmetic.maximum(zero, arithmetic.minimum(lower_slopes, upper_slopes))
        return array_fill.pad(weights, [[1, 0], [0, 0]])

    def compute_output_shape(self, input_shape):
        """Keras' [mel bins, frames] (after the batch), frames (n + stride + 1) // stride."""
        input_shape = tuple(input_shape)
        samples = input_shape[0] if len(input_shape) == 1 else input_shape[1]
        frames = None if samples is None else \
            (samples + self.sequence_stride + 1) // self.sequence_stride
        if len(input_shape) == 1:
            return [self.num_mel_bins, frames]
        return [input_shape[0], self.num_mel_bins, frames]

    def get_config(self) -> dict:
        return {**super().get_config(), "fft_length": self.fft_length,
                "sequence_stride": self.sequence_stride,
                "sequence_length": self.sequence_length, "window": self.window,
                "sampling_rate": self.sampling_rate, "num_mel_bins": self.num_mel_bins,
                "min_freq": self.min_freq, "max_freq": self.max_freq,
                "power_to_db": self.power_to_db, "top_db": self.top_db,
                "mag_exp": self.mag_exp, "min_power": self.min_power,
                "ref_power": self.ref_power}

"""`keras.layers.STFTSpectrogram`: spectrograms of 1-D signals `(batch, time, channels)` (or
channels first) as Keras 3.15 computes them: each channel convolved, frame_step apart, with
two trainable kernels `(frame_length, 1, fft_length // 2 + 1)` that the STFT initializer
(ndflow/ops/init_stft.py) fills with the windowed DFT's real and imaginary parts, then the
mode's output: 'real', 'imag', 'stft' (both, concatenated over the frequencies), 'angle'
(atan2), 'psd' (the power, every bin but the first and last doubled), 'magnitude'
(sqrt(max(power, eps))) or 'log' (its log). Frames are `padding`'s ('valid' or TF's 'same',
the extra sample on the right); frames x (channels x frequencies), or with `expand_dims` an
image (frames, frequencies, channels).

Keras' strided conv1d of one input channel is computed as what it is, the signal's frames
(tf.signal.frame) times the kernels side by side, one matrix product: the same sums, and a
case the convolution kernels handle slowly (a kernel hundreds of samples wide)."""

from __future__ import annotations

import math as pymath
import warnings

from ndflow.core.api_export import keras_export
from ndflow.core.graph import SymbolicTensor
from ndflow.core.shapes import TensorShape
from ndflow.keras import global_config
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.conv_utils import standardize_data_format
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.ops import arithmetic, array_core, array_fill, array_slicing, linalg, math, math_trig
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.init_stft import STFT, check_scaling, window_argument
from ndflow.ops.signal import shape_ops

MODES = ["log", "magnitude", "psd", "real", "imag", "angle", "stft"]


def _dims(x) -> list:
    """x's dimensions: the static ones as ints, the others as scalar tensors."""
    static = x.shape.as_list()
    if all(d is not None for d in static):
        return static
    dynamic = array_core.shape(x)
    return [d if d is not None else dynamic[i] for i, d in enumerate(static)]


@keras_export("keras.layers.STFTSpectrogram")
class STFTSpectrogram(Layer):
    """A short-time Fourier transform layer: convolutions whose kernels are initialized to
    the windowed Fourier basis (and may be trained), applied to every channel's frames of
    (batch, time, channels) signals.

    Args:
      mode: the output: "log" (log power, the default), "magnitude", "psd" (power),
        "real", "imag", "angle", or "stft" (real and imaginary parts).
      frame_length: the window length, in samples.
      frame_step: the hop between frames (default frame_length / 2, at most
        `frame_length`).
      fft_length: the FFT size (default `frame_length`; a power of two is recommended).
      window: the window ("hann", "hamming", None, or an array of `frame_length`).
      periodic: whether the window is periodic rather than symmetric.
      scaling: "density", "spectrum" or None, how the spectrum is normalized.
      padding: "valid" or "same".
      expand_dims: whether to add a channels axis for 2-D convolutions.
      data_format: "channels_last" or "channels_first".
      **kwargs: Layer arguments (name, dtype, trainable, ...).

    Raises:
      ValueError: a bad `frame_step`, `fft_length`, `mode`, `scaling` or `padding`.
    """

    def __init__(self, mode="log", frame_length=256, frame_step=None, fft_length=None,
                 window="hann", periodic=False, scaling="density", padding="valid",
                 expand_dims=False, data_format=None, **kwargs):
        if frame_step is not None and (frame_step > frame_length or frame_step < 1):
            raise ValueError("`frame_step` should be a positive integer not greater than "
                             f"`frame_length`. Received frame_step={frame_step}, "
                             f"frame_length={frame_length}")
        if fft_length is not None and fft_length < frame_length:
            raise ValueError("`fft_length` should be not less than `frame_length`. "
                             f"Received fft_length={fft_length}, frame_length={frame_length}")
        if fft_length is not None and (fft_length & -fft_length) != fft_length:
            warnings.warn("`fft_length` is recommended to be a power of two. "
                          f"Received fft_length={fft_length}", stacklevel=2)
        if mode not in MODES:
            raise ValueError("Output mode is invalid, it must be one of "
                             f"{', '.join(MODES)}. Received: mode={mode}")
        check_scaling(scaling)
        if padding not in ("valid", "same"):
            raise ValueError("Padding is invalid, it should be 'valid', 'same'. "
                             f"Received: padding={padding}")
        window = window_argument(window)
        super().__init__(**kwargs)
        self.mode = mode
        self.frame_length = frame_length
        self.frame_step = frame_step
        self._frame_step = frame_step or self.frame_length // 2
        self.fft_length = fft_length
        self._fft_length = fft_length or 2 ** int(pymath.ceil(pymath.log2(frame_length)))
        self.window, self.periodic, self.scaling = window, periodic, scaling
        self.padding, self.expand_dims = padding, expand_dims
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=3)

    def build(self, input_shape=None) -> None:
        shape = (self.frame_length, 1, self._fft_length // 2 + 1)
        if self.mode != "imag":
            self.real_kernel = self.add_weight(
                name="real_kernel", shape=shape,
                initializer=STFT("real", self.window, self.scaling, self.periodic))
        if self.mode != "real":
            self.imag_kernel = self.add_weight(
                name="imag_kernel", shape=shape,
                initializer=STFT("imag", self.window, self.scaling, self.periodic))
        self.built = True

    def _spectra(self, inputs):
        """[batch, channels, frames, kernels x frequencies]: every channel's frames times
        the kernels (real, then imaginary), Keras' strided conv1d of each channel alone."""
        x = transpose(inputs, [0, 2, 1]) if self.data_format == "channels_last" else inputs
        time = _dims(x)[2]
        if self.padding == "same":   # TF's: the odd sample on the right
            step = self._frame_step
            total = ((time + step - 1) // step - 1) * step + self.frame_length - time
            if isinstance(time, int):
                total = max(total, 0)
                paddings = [[0, 0], [0, 0], [total // 2, total - total // 2]]
            else:
                total = arithmetic.maximum(total, 0)
                paddings = array_core.reshape(array_core.stack(
                    [0, 0, 0, 0, total // 2, total - total // 2]), [3, 2])
            static = x.shape.as_list()
            x = array_fill.pad(x, paddings)
            if isinstance(x, SymbolicTensor):   # (the batch and channels are as they were)
                x.set_shape(TensorShape(static[:2] + [None]))
        elif isinstance(time, int) and time < self.frame_length:
            self.compute_output_shape(inputs.shape.as_list())   # (raises Keras' error)
        frames = shape_ops.frame(x, self.frame_length, self._frame_step, axis=-1)
        kernels = [k for k in (getattr(self, "real_kernel", None),
                               getattr(self, "imag_kernel", None)) if k is not None]
        bins = self._fft_length // 2 + 1
        kernel = array_core.reshape(
            kernels[0] if len(kernels) == 1 else array_slicing.concat(kernels, axis=2),
            [self.frame_length, bins * len(kernels)])
        return linalg.matmul(frames, cast(kernel, inputs.dtype))

    def _adjust_shapes(self, outputs):
        """[batch, channels, frames, bins] to Keras' layout of the outputs."""
        _, channels, frames, bins = _dims(outputs)
        if self.data_format == "channels_last":
            if self.expand_dims:
                return transpose(outputs, [0, 2, 3, 1])
            return array_core.reshape(transpose(outputs, [0, 2, 1, 3]),
                                      [-1, frames, channels * bins])
        if self.expand_dims:
            return outputs
        return array_core.reshape(transpose(outputs, [0, 1, 3, 2]),
                                  [-1, channels * bins, frames])

    def call(self, inputs):
        dtype = inputs.dtype
        if dtype.name not in ("float16", "float32", "float64"):
            raise TypeError("Invalid input type. Expected `float16`, `float32` or "
                            f"`float64`. Received: input type={dtype}")
        spectra = self._spectra(inputs)
        if self.mode in ("real", "imag", "stft"):
            return self._adjust_shapes(spectra)
        bins = self._fft_length // 2 + 1
        real, imag = spectra[..., :bins], spectra[..., bins:]
        if self.mode == "angle":
            return self._adjust_shapes(math_trig.atan2(imag, real))
        power = math.square(real) + math.square(imag)
        if self.mode == "psd":
            return self._adjust_shapes(
                power + array_fill.pad(power[..., 1:-1], [[0, 0], [0, 0], [0, 0], [1, 1]]))
        eps = cast(global_config.SETTINGS["epsilon"], power.dtype)   # keras.config.epsilon()
        linear = self._adjust_shapes(math.sqrt(arithmetic.maximum(power, eps)))
        if self.mode == "magnitude":
            return linear
        return arithmetic.log(arithmetic.maximum(linear, eps))

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        channels = input_shape[-1] if self.data_format == "channels_last" else input_shape[1]
        bins = self._fft_length // 2 + 1
        if self.mode == "stft":
            bins *= 2
        time = input_shape[1] if self.data_format == "channels_last" else input_shape[2]
        if time is None:
            frames = None
        elif self.padding == "valid":
            frames = (time - self.frame_length) // self._frame_step + 1
            if frames <= 0:
                kernel = (self.frame_length, channels, bins * channels)
                raise ValueError(
                    "Computed output size would be zero or negative. Received `inputs "
                    f"shape={input_shape}`, `kernel shape={kernel}`, `dilation_rate=[1]`, "
                    f"`strides=({self._frame_step},)`, `padding={self.padding}`.")
        else:
            frames = (time - 1) // self._frame_step + 1
        batch = input_shape[0]
        if self.expand_dims:
            return ((batch, frames, bins, channels) if self.data_format == "channels_last"
                    else (batch, channels, frames, bins))
        features = None if channels is None else bins * channels
        return ((batch, frames, features) if self.data_format == "channels_last"
                else (batch, features, frames))

    def get_config(self) -> dict:
        return {**super().get_config(), "mode": self.mode,
                "frame_length": self.frame_length, "frame_step": self.frame_step,
                "fft_length": self.fft_length, "window": self.window,
                "periodic": self.periodic, "scaling": self.scaling,
                "padding": self.padding, "data_format": self.data_format,
                "expand_dims": self.expand_dims}

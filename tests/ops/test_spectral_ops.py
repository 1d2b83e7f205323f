"""The FFT ops (FFT/IFFT 1-3D, RFFT/IRFFT 1-3D) against numpy.fft in float64, table-driven
(see harness.py): complex inputs run as complex64 and complex128; gradient cases go through
tf.complex / tf.math.real / imag so that finite differences check TF's gradients.
Plus TF's kernel and shape-function errors and the fftshifts."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops import spectral_ops as sp
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase

rng = np.random.default_rng(11)


def _r(*shape):
    return rng.uniform(-1, 1, shape)


def _z(*shape):
    return _r(*shape) + 1j * _r(*shape)


def _fwd(id_, fn, inputs, ref, **kw):
    return OpCase(id_, fn, inputs, ref, low_precision=False, grad=False, rtol=1e-5, atol=1e-5,
                  **kw)


def _parts(fn):
    """Real-to-real: (x, y) -> real and imaginary parts of fn(x + iy)."""
    def f(x, y):
        w = fn(tf.complex(x, y))
        return [tf.math.real(w), tf.math.imag(w)]
    return f


def _np_parts(fn):
    def f(x, y):
        w = fn(x + 1j * y)
        return [w.real, w.imag]
    return f


def _smooth(id_, fn, inputs, ref):
    return OpCase(id_, fn, inputs, ref, low_precision=False, rtol=1e-5, atol=1e-5)


_AX2, _AX3 = (-2, -1), (-3, -2, -1)
CASES = [
    _fwd("fft", tf.signal.fft, [_z(2, 5)], np.fft.fft),
    _fwd("ifft", tf.signal.ifft, [_z(2, 6)], np.fft.ifft),
    _fwd("fft2d", tf.signal.fft2d, [_z(2, 3, 4)], lambda z: np.fft.fft2(z, axes=_AX2)),
    _fwd("ifft2d", tf.signal.ifft2d, [_z(3, 5)], np.fft.ifft2),
    _fwd("fft3d", tf.signal.fft3d, [_z(2, 2, 3, 4)], lambda z: np.fft.fftn(z, axes=_AX3)),
    _fwd("ifft3d", tf.signal.ifft3d, [_z(2, 3, 4)], np.fft.ifftn),
    _fwd("rfft3d", lambda x: tf.signal.rfft3d(x, [2, 3, 6]), [_r(2, 2, 4, 5)],
         lambda x: np.fft.rfftn(x, s=[2, 3, 6], axes=_AX3)),
    _fwd("irfft3d", lambda z: tf.signal.irfft3d(z, [2, 3, 4]), [_z(2, 3, 3)],
         lambda z: np.fft.irfftn(z, s=[2, 3, 4], axes=_AX3)),
    _fwd("irfft_default_length", tf.signal.irfft, [_z(2, 5)], np.fft.irfft),
    _smooth("fft_grad", _parts(tf.signal.fft), [_r(2, 5), _r(2, 5)], _np_parts(np.fft.fft)),
    _smooth("ifft_grad", _parts(tf.signal.ifft), [_r(4), _r(4)], _np_parts(np.fft.ifft)),
    _smooth("fft2d_grad", _parts(tf.signal.fft2d), [_r(3, 4), _r(3, 4)],
            _np_parts(np.fft.fft2)),
    _smooth("ifft2d_grad", _parts(tf.signal.ifft2d), [_r(2, 2, 3), _r(2, 2, 3)],
            _np_parts(lambda z: np.fft.ifft2(z, axes=_AX2))),
    _smooth("fft3d_ifft3d_grad", lambda x, y: [tf.math.real(tf.signal.fft3d(tf.complex(x, y))),
                                                tf.math.imag(tf.signal.ifft3d(tf.complex(y, x)))],
            [_r(2, 3, 2), _r(2, 3, 2)],
            lambda x, y: [np.fft.fftn(x + 1j * y).real, np.fft.ifftn(y + 1j * x).imag]),
    _smooth("rfft", lambda x: [tf.math.real(tf.signal.rfft(x)), tf.math.imag(tf.signal.rfft(x))],
            [_r(2, 6)], lambda x: [np.fft.rfft(x).real, np.fft.rfft(x).imag]),
    _smooth("rfft_odd_padded", lambda x: [tf.math.real(tf.signal.rfft(x, [7])),
                                          tf.math.imag(tf.signal.rfft(x, [7]))],
            [_r(3, 5)], lambda x: [np.fft.rfft(x, 7).real, np.fft.rfft(x, 7).imag]),
    _smooth("rfft_cropped", lambda x: [tf.math.real(tf.signal.rfft(x, [4])),
                                       tf.math.imag(tf.signal.rfft(x, [4]))],
            [_r(2, 7)], lambda x: [np.fft.rfft(x[:, :4]).real, np.fft.rfft(x[:, :4]).imag]),
    _smooth("rfft2d_cropped", lambda x: tf.math.imag(tf.signal.rfft2d(x, [2, 3])),
            [_r(3, 5)], lambda x: np.fft.rfft2(x[:2, :3]).imag),
    _smooth("irfft_cropped", lambda x, y: tf.signal.irfft(tf.complex(x, y), [4]),
            [_r(5), _r(5)], lambda x, y: np.fft.irfft((x + 1j * y)[:3], 4)),
    _smooth("irfft_even", lambda x, y: tf.signal.irfft(tf.complex(x, y), [6]),
            [_r(2, 4), _r(2, 4)], lambda x, y: np.fft.irfft(x + 1j * y, 6)),
    _smooth("irfft_odd", lambda x, y: tf.signal.irfft(tf.complex(x, y), [5]),
            [_r(3), _r(3)], lambda x, y: np.fft.irfft(x + 1j * y, 5)),
    _smooth("rfft2d", lambda x: [tf.math.real(tf.signal.rfft2d(x)),
                                 tf.math.imag(tf.signal.rfft2d(x, [3, 5]))],
            [_r(2, 3, 4)], lambda x: [np.fft.rfft2(x).real, np.fft.rfft2(x, s=[3, 5]).imag]),
    _smooth("irfft2d", lambda x, y: tf.signal.irfft2d(tf.complex(x, y), [4, 5]),
            [_r(4, 3), _r(4, 3)], lambda x, y: np.fft.irfft2(x + 1j * y, s=[4, 5])),
    _smooth("irfft2d_even", lambda x, y: tf.signal.irfft2d(tf.complex(x, y)),
            [_r(3, 3), _r(3, 3)], lambda x, y: np.fft.irfft2(x + 1j * y, s=[3, 4])),
    _fwd("fftshift_ifftshift", lambda x: [tf.signal.fftshift(x), tf.signal.ifftshift(x, 1),
                                          tf.signal.fftshift(x, axes=[0])],
         [_r(3, 5)], lambda x: [np.fft.fftshift(x), np.fft.ifftshift(x, 1),
                                np.fft.fftshift(x, axes=[0])]),
]


def _raw(op, *inputs):
    """The op itself, as tf.raw_ops calls it (no wrapper padding)."""
    x = tf.constant(inputs[0])
    attrs = {"Tcomplex": sp.COMPLEX_OF[x.dtype]} if op is sp.RFFT else {}
    return apply_op(op, [x, *inputs[1:]], attrs).outputs[0]


def test_raw_op_checks_as_tensorflow():
    x = np.arange(6.0, dtype=np.float32)
    with pytest.raises(InvalidArgumentError, match="Input dimension 0 must have length of at "
                                                   "least 8 but got: 6"):
        _raw(sp.RFFT, x, [8])
    with pytest.raises(InvalidArgumentError, match=r"fft_length\[0\] must >= 0, but got: -1"):
        _raw(sp.RFFT, x, [-1])
    with pytest.raises((ValueError, InvalidArgumentError), match="at least rank 1"):
        _raw(sp.FFT, np.complex64(1))
    with pytest.raises(InvalidArgumentError, match="must have length of at least 4 but got: 3"):
        _raw(sp.IRFFT, np.ones(3, np.complex64), [6])
    np.testing.assert_allclose(_raw(sp.RFFT, x, [4]).numpy(),
                               np.fft.rfft(x[:4]), rtol=1e-6)
    empty = _raw(sp.RFFT, np.zeros((0, 6), np.float32), [4])
    assert empty.shape == (0, 3) and empty.dtype is tf.complex64


def test_wrappers_check_dtypes_and_convert_as_tensorflow():
    with pytest.raises(ValueError, match="RFFT requires tf.float32 or tf.float64 inputs"):
        tf.signal.rfft(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="IRFFT requires tf.complex64 or tf.complex128"):
        tf.signal.irfft(tf.constant([1.0, 2.0]))
    assert tf.signal.rfft(np.arange(5)).dtype is tf.complex64  # NumPy ints: float32 first
    assert tf.signal.rfft(tf.constant([1.0], tf.float64)).dtype is tf.complex128
    assert tf.signal.irfft(tf.constant([1j, 2j], tf.complex128)).dtype is tf.float64
    np.testing.assert_allclose(tf.signal.fft([1.0, 2.0]).numpy(), [3, -1])
    assert tf.signal.fft([1.0, 2.0]).dtype is tf.complex64


def test_static_shapes_and_names_in_a_graph():
    g = Graph()
    with g.as_default():
        x = placeholder(tf.float32, [None, 10])
        y = tf.signal.rfft(x, [16])
        z = tf.signal.irfft(y)
        w = tf.signal.rfft2d(placeholder(tf.float32, [2, 4, 6]))
        v = tf.signal.irfft(placeholder(tf.complex64, [3, None]))
        with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
            tf.signal.fft2d(placeholder(tf.complex64, [4]))
    assert y.shape.as_list() == [None, 9] and y.op.type == "RFFT" and y.op.name == "rfft"
    assert y.op.inputs[0].op.type == "Pad"  # 10 -> 16, as TF's wrapper pads
    assert z.shape.as_list() == [None, 16] and z.dtype is tf.float32
    assert w.shape.as_list() == [2, 4, 4] and w.op.type == "RFFT2D"
    assert v.shape.as_list() == [None, None]  # as TF: the dynamic padding hides the 3


def test_rfft_gradient_matches_tensorflow():
    # TF 2.21: tape.gradient(reduce_sum(abs(rfft(x, [6]))**2 * w), x), x padded from 5 to 6.
    x = tf.constant([0.5, -1.0, 2.0, 0.25, 1.5], tf.float64)
    w = tf.constant([1.0, 0.5, 2.0, 1.5], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.square(tf.abs(tf.signal.rfft(x, [6]))) * w)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               [16.75, -12.625, 26.875, -7.75, 18.625], rtol=1e-9)


# -- tf.signal composites: forward against NumPy, gradients by finite differences ----------------

def _np_frame(x, length, step, pad_end=False, pad_value=0.0):
    n = x.shape[-1]
    if pad_end:
        count = -(-n // step)
        extra = max(0, length + step * (count - 1) - n)
        x = np.concatenate([x, np.full(x.shape[:-1] + (extra,), pad_value)], -1)
    else:
        count = max(0, 1 + (n - length) // step)
    return np.stack([x[..., i * step:i * step + length] for i in range(count)], -2)


def _np_overlap_and_add(y, step):
    frames, length = y.shape[-2:]
    out = np.zeros(y.shape[:-2] + (length + step * (frames - 1),))
    for f in range(frames):
        out[..., f * step:f * step + length] += y[..., f, :]
    return out


def _np_hann(length):
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(length) / length)  # periodic, even length


def _np_dct(x, kind, ortho):
    n = x.shape[-1]
    i = np.arange(n)
    if kind == 2:
        basis = 2 * np.cos(np.pi * np.outer(i, 2 * i + 1) / (2 * n))
        if ortho:
            basis *= np.where(i == 0, np.sqrt(1 / (4 * n)), np.sqrt(1 / (2 * n)))[:, None]
    elif kind == 3:
        basis = 2 * np.cos(np.pi * np.outer(2 * i + 1, i) / (2 * n))
        basis[:, 0] = 1.0
        if ortho:
            basis *= np.where(i == 0, np.sqrt(1 / n), np.sqrt(1 / (2 * n)))[None, :]
    else:
        basis = 2 * np.cos(np.pi * np.outer(2 * i + 1, 2 * i + 1) / (4 * n))
        if ortho:
            basis *= np.sqrt(1 / (2 * n))
    return x @ basis.T


def _np_stft(x, length, step, fft_length):
    spectra = np.fft.rfft(_np_frame(x, length, step) * _np_hann(length), fft_length)
    return [spectra.real, spectra.imag]


def _np_inverse_stft(re, im, length, step, fft_length):
    frames = np.fft.irfft(re + 1j * im, fft_length)[..., :length]
    return _np_overlap_and_add(frames * _np_hann(length), step)


def _stft_parts(x):
    s = tf.signal.stft(x, 16, 8)
    return [tf.math.real(s), tf.math.imag(s)]


CASES += [
    OpCase("frame", lambda x: tf.signal.frame(x, 4, 3), [_r(2, 11)],
           lambda x: _np_frame(x, 4, 3)),
    OpCase("frame_pad_end", lambda x: tf.signal.frame(x, 4, 3, pad_end=True, pad_value=0.5),
           [_r(2, 11)], lambda x: _np_frame(x, 4, 3, True, 0.5)),
    OpCase("frame_axis0", lambda x: tf.signal.frame(x, 3, 2, axis=0), [_r(7, 2)],
           lambda x: np.moveaxis(_np_frame(x.T, 3, 2), 0, -1)),
    OpCase("overlap_and_add", lambda y: tf.signal.overlap_and_add(y, 4), [_r(2, 5, 6)],
           lambda y: _np_overlap_and_add(y, 4)),
    OpCase("overlap_and_add_gap", lambda y: tf.signal.overlap_and_add(y, 5), [_r(3, 4)],
           lambda y: _np_overlap_and_add(y, 5)),
    _smooth("stft", _stft_parts, [_r(2, 40)], lambda x: _np_stft(x, 16, 8, 16)),
    _smooth("stft_fft_length", lambda x: tf.math.abs(tf.signal.stft(x, 10, 4, fft_length=20)),
            [_r(30)], lambda x: np.abs(np.fft.rfft(_np_frame(x, 10, 4) * _np_hann(10), 20))),
    _smooth("inverse_stft", lambda re, im: tf.signal.inverse_stft(tf.complex(re, im), 12, 4),
            [_r(5, 9), _r(5, 9)], lambda re, im: _np_inverse_stft(re, im, 12, 4, 16)),
    _smooth("dct_2_3_4_ortho",
            lambda x: [tf.signal.dct(x, type=k, norm="ortho") for k in (2, 3, 4)],
            [_r(3, 6)], lambda x: [_np_dct(x, k, True) for k in (2, 3, 4)]),
    _smooth("dct_2_3_4", lambda x: [tf.signal.dct(x, type=k) for k in (2, 3, 4)],
            [_r(2, 5)], lambda x: [_np_dct(x, k, False) for k in (2, 3, 4)]),
    _smooth("mfccs", tf.signal.mfccs_from_log_mel_spectrograms, [_r(3, 8)],
            lambda x: _np_dct(x, 2, False) / np.sqrt(2 * x.shape[-1])),
]


def _np_mdct(x, length):
    n = np.arange(length)
    window = np.sin(np.pi / 2 * np.sin(np.pi * (n + 0.5) / length) ** 2)  # Vorbis
    a, b, c, d = np.split(_np_frame(x, length, length // 2) * window, 4, axis=-1)
    return _np_dct(np.concatenate([-c[..., ::-1] - d, a - b[..., ::-1]], -1), 4, False)


CASES += [
    _smooth("mdct", lambda x: tf.signal.mdct(x, 8), [_r(2, 24)], lambda x: _np_mdct(x, 8)),
    _smooth("kaiser_windowed_frames",
            lambda x: tf.signal.frame(x, 6, 2) * tf.signal.kaiser_window(6, 4.0, x.dtype),
            [_r(10)], lambda x: _np_frame(x, 6, 2) * np.kaiser(6, 4.0)),
]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_fft_and_complex_kernels_on_a_gpu_match_the_cpu():
    x = _r(3, 64).astype(np.float32)

    def run(device):
        with tf.device(device):
            signals = tf.constant(x)
            with tf.GradientTape() as tape:
                tape.watch(signals)
                s = tf.signal.stft(signals, 16, 8)
                z = tf.signal.ifft(tf.signal.fft(s) * tf.math.conj(s))
                loss = tf.reduce_sum(tf.abs(z)) + tf.reduce_sum(
                    tf.signal.irfft2d(tf.signal.rfft2d(signals)))
            grad = tape.gradient(loss, signals)
            assert "GPU" in grad.device or device == "/CPU:0"
            return [t.numpy() for t in (s, z, loss, grad)]

    for got, want in zip(run("/GPU:0"), run("/CPU:0")):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)

"""`tf.keras.initializers.STFT` (also `STFTInitializer`, `stft`, and under `tf.initializers`):
Keras 3.15's kernels of a Short-Time Fourier Transform as a 1-D convolution, shape
`(frame_length, 1, fft_length // 2 + 1)`: `cos` ('real') or `sin` ('imag') of
`-2 pi t f / ((bins - 1) * 2)`, times a window divided by its L2 ('density') or L1
('spectrum') norm. The arithmetic is Keras' own, in the requested dtype (float32 by default),
so the values are Keras' to the last bits.

Keras takes named windows from `scipy.signal.get_window(name, frame_length, periodic)`;
ndflow does not depend on SciPy and computes them here by SciPy 1.17's definitions (float64,
then cast): every window SciPy makes without parameters (boxcar, triang, parzen, bohman,
blackman, nuttall, blackmanharris, flattop, bartlett, barthann, hamming, hann, cosine,
exponential, taylor, tukey, lanczos) under all of SciPy's names, and the `_periodic` /
`_symmetric` suffixes. Names SciPy knows but that need parameters (kaiser, gaussian, chebwin,
dpss, general_*, kaiser_bessel_derived) raise SciPy's ValueError, as any unknown name does:
a string cannot carry them, so Keras cannot use them either."""

from __future__ import annotations

import math as pymath

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.ops import arithmetic, init_ops, math, math_trig, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import reshape
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.cast import cast


# -- SciPy's windows (scipy/signal/windows/_windows.py), float64 -----------------------------
def _general_cosine(m: int, coefficients) -> np.ndarray:
    fac = np.linspace(-np.pi, np.pi, m)
    w = np.zeros(m)
    for k, a in enumerate(coefficients):
        w += a * np.cos(k * fac)
    return w


def _triang(m: int) -> np.ndarray:
    n = np.arange(1, (m + 1) // 2 + 1, dtype=np.float64)
    if m % 2 == 0:
        w = (2 * n - 1.0) / m
        return np.concatenate([w, w[::-1]])
    w = 2 * n / (m + 1.0)
    return np.concatenate([w, w[-2::-1]])


def _parzen(m: int) -> np.ndarray:
    n = np.arange(-(m - 1) / 2.0, (m - 1) / 2.0 + 0.5, 1.0)
    a = np.abs(n) / (m / 2.0)
    return np.where(np.abs(n) <= (m - 1) / 4.0, 1 - 6 * a ** 2.0 + 6 * a ** 3.0,
                    2 * (1 - a) ** 3.0)


def _bohman(m: int) -> np.ndarray:
    fac = np.abs(np.linspace(-1, 1, m)[1:-1])
    w = (1 - fac) * np.cos(np.pi * fac) + 1.0 / np.pi * np.sin(np.pi * fac)
    return np.concatenate([[0.0], w, [0.0]])


def _bartlett(m: int) -> np.ndarray:
    n = np.arange(0, m, dtype=np.float64)
    return np.where(n <= (m - 1) / 2.0, 2.0 * n / (m - 1), 2.0 - 2.0 * n / (m - 1))


def _barthann(m: int) -> np.ndarray:
    fac = np.abs(np.arange(0, m, dtype=np.float64) / (m - 1.0) - 0.5)
    return 0.62 - 0.48 * fac + 0.38 * np.cos(2 * np.pi * fac)


def _cosine(m: int) -> np.ndarray:
    return np.sin(np.pi / m * (np.arange(m, dtype=np.float64) + 0.5))


def _exponential(m: int) -> np.ndarray:   # center None, tau 1
    return np.exp(-np.abs(np.arange(0, m, dtype=np.float64) - (m - 1) / 2))


def _tukey(m: int, alpha: float = 0.5) -> np.ndarray:
    n = np.arange(0, m, dtype=np.float64)
    width = int(pymath.floor(alpha * (m - 1) / 2.0))
    n1, n2, n3 = n[0:width + 1], n[width + 1:m - width - 1], n[m - width - 1:]
    w1 = 0.5 * (1 + np.cos(np.pi * (-1 + 2.0 * n1 / alpha / (m - 1))))
    w3 = 0.5 * (1 + np.cos(np.pi * (-2.0 / alpha + 1 + 2.0 * n3 / alpha / (m - 1))))
    return np.concatenate([w1, np.ones(n2.shape), w3])


def _taylor(m: int, nbar: int = 4, sll: float = 30) -> np.ndarray:   # norm=True
    b = 10 ** (sll / 20)
    a = np.arccosh(b) / np.pi
    s2 = nbar ** 2 / (a ** 2 + (nbar - 0.5) ** 2)
    ma = np.arange(1, nbar, dtype=np.float64)
    fm = np.empty(nbar - 1)
    signs = np.empty_like(ma)
    signs[::2], signs[1::2] = 1, -1
    m2 = ma * ma
    for mi in range(len(ma)):
        numer = signs[mi] * np.prod(1 - m2[mi] / s2 / (a ** 2 + (ma - 0.5) ** 2))
        denom = 2 * np.prod(1 - m2[mi] / m2[:mi]) * np.prod(1 - m2[mi] / m2[mi + 1:])
        fm[mi] = numer / denom

    def w_of(n):
        return 1 + 2 * np.matmul(fm, np.cos(2 * np.pi * ma[:, np.newaxis] * (n - m / 2. + 0.5)
                                            / m))
    return w_of(np.arange(m, dtype=np.float64)) * (1.0 / w_of((m - 1) / 2))


def _lanczos(m: int) -> np.ndarray:
    def right(n, mm):
        return np.sinc(2. * np.arange(n, mm, dtype=np.float64) / (mm - 1) - 1.0)
    if m % 2 == 0:
        wh = right(m / 2, m)
        return np.concatenate([wh[::-1], wh])
    wh = right((m + 1) / 2, m)
    return np.concatenate([wh[::-1], np.ones(1), wh])


_WINDOWS = {
    ("barthann", "brthan", "bth"): _barthann,
    ("bartlett", "bart", "brt"): _bartlett,
    ("blackman", "black", "blk"): lambda m: _general_cosine(m, [0.42, 0.50, 0.08]),
    ("blackmanharris", "blackharr", "bkh"):
        lambda m: _general_cosine(m, [0.35875, 0.48829, 0.14128, 0.01168]),
    ("bohman", "bman", "bmn"): _bohman,
    ("boxcar", "box", "ones", "rect", "rectangular"): np.ones,
    ("cosine", "halfcosine"): _cosine,
    ("exponential", "poisson"): _exponential,
    ("flattop", "flat", "flt"): lambda m: _general_cosine(
        m, [0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368]),
    ("hamming", "hamm", "ham"): lambda m: _general_cosine(m, [0.54, 1.0 - 0.54]),
    ("hann", "han"): lambda m: _general_cosine(m, [0.5, 1.0 - 0.5]),
    ("lanczos", "sinc"): _lanczos,
    ("nuttall", "nutl", "nut"): lambda m: _general_cosine(
        m, [0.3635819, 0.4891775, 0.1365995, 0.0106411]),
    ("parzen", "parz", "par"): _parzen,
    ("taylor", "taylorwin"): _taylor,
    ("triangle", "triang", "tri"): _triang,
    ("tukey", "tuk"): _tukey,
}
WINDOWS = {name: fn for names, fn in _WINDOWS.items() for name in names}
# SciPy's windows that need parameters (a tuple), which a window name cannot give
NEEDS_PARAMETERS = frozenset((
    "chebwin", "cheb", "dpss", "gaussian", "gauss", "gss", "general cosine", "general_cosine",
    "general gaussian", "general_gaussian", "general gauss", "general_gauss", "ggs",
    "general hamming", "general_hamming", "kaiser", "ksr", "kaiser bessel derived",
    "kaiser_bessel_derived", "kbd"))


def get_window(window: str, length: int, fftbins: bool = True) -> np.ndarray:
    """`scipy.signal.get_window(window, length, fftbins)` for a window name (float64):
    periodic (`fftbins`, the window of `length + 1` samples less its last) or symmetric."""
    if not (isinstance(length, (int, np.integer)) and length > 0):
        raise ValueError(f"Parameter Nx={length!r} is not a positive integer")
    if not isinstance(fftbins, bool):
        raise ValueError(f"Parameter fftbins={fftbins!r} is not of type bool!")
    sym, name = not fftbins, window
    if name.endswith("_symmetric"):
        sym, name = True, name[:-10]
    elif name.endswith("_periodic"):
        sym, name = False, name[:-9]
    if name in NEEDS_PARAMETERS:
        raise ValueError(f"'{name}' must have parameters, but window={window!r}!")
    if name not in WINDOWS:
        raise ValueError(f"Invalid window name '{name}' in parameter window={window!r}!")
    if length == 1:
        return np.ones(1)
    w = WINDOWS[name](length if sym else length + 1)
    return np.asarray(w, dtype=np.float64) if sym else np.asarray(w[:-1], dtype=np.float64)


def window_argument(window):
    """A window argument as given, or the array a saved config holds: Keras writes an array
    window as a `__numpy__` (or `__tensor__`) dict, which Keras 3.15 then cannot load; a
    name must be one get_window makes (Keras' check)."""
    if isinstance(window, dict) and window.get("class_name") in ("__numpy__", "__tensor__"):
        config = window.get("config") or {}
        return np.asarray(config.get("value"), dtype=config.get("dtype"))
    if isinstance(window, str):
        get_window(window, 1)
    return window


def check_scaling(scaling) -> None:
    if scaling is not None and scaling not in ("density", "spectrum"):
        raise ValueError("Scaling is invalid, it must be `None`, 'density' or 'spectrum'. "
                         f"Received scaling={scaling}")


@tf_export("initializers.STFT", "initializers.STFTInitializer", "initializers.stft",
           "keras.initializers.STFT", "keras.initializers.STFTInitializer",
           "keras.initializers.stft",
           v1=["keras.initializers.STFT", "keras.initializers.STFTInitializer",
               "keras.initializers.stft"])
class STFT(init_ops.Initializer):
    """Keras 3's `STFT(side="real", window="hann", scaling="density", periodic=False)`:
    kernels `(frame_length, 1, fft_length // 2 + 1)` of the real or imaginary part of a
    windowed DFT (the frequencies k / ((bins - 1) * 2), as Keras)."""

    def __init__(self, side="real", window="hann", scaling="density", periodic=False):
        super().__init__()
        if side not in ("real", "imag"):
            raise ValueError(f"side should be 'real' or 'imag', not {side}")
        window = window_argument(window)
        check_scaling(scaling)
        self.side, self.window, self.scaling, self.periodic = side, window, scaling, periodic

    def __call__(self, shape, dtype=None, **kwargs):
        dtype = self._dtype(dtype)
        frame_length, _, bins = (int(d) for d in init_ops._shape_list(shape))
        win, scaling = None, None
        if self.window is not None:
            win = self.window
            if isinstance(win, str):
                win = get_window(win, frame_length, self.periodic)
            if not hasattr(win, "shape") or isinstance(win, np.ndarray):
                win = np.asarray(win)
            win = cast(convert_to_tensor(win), dtype)   # (Keras: convert_to_tensor(win, dtype))
            if win.shape.rank != 1 or win.shape[-1] != frame_length:
                raise ValueError("The shape of `window` must be equal to [frame_length]."
                                 f"Received: window shape={win.shape}")
            win = reshape(win, [frame_length, 1, 1])
            if self.scaling == "density":
                scaling = math.sqrt(reduction.reduce_sum(math.square(win)))
            elif self.scaling == "spectrum":
                scaling = reduction.reduce_sum(math.abs(win))
        n = (bins - 1) * 2
        freq = reshape(tf_range(bins, dtype=dtype), [1, 1, bins]) / cast(n, dtype)
        time = reshape(tf_range(frame_length, dtype=dtype), [frame_length, 1, 1])
        pi = math_trig.acos(cast(-1, dtype))
        args = arithmetic.multiply(arithmetic.multiply(cast(-2, dtype), time), freq) * pi
        kernel = math_trig.cos(args) if self.side == "real" else math_trig.sin(args)
        if win is not None:
            kernel = kernel * win
            if scaling is not None:
                kernel = kernel / scaling
        return kernel

    def get_config(self) -> dict:
        window = self.window
        return {"side": self.side,
                "window": window.tolist() if isinstance(window, np.ndarray) else window,
                "periodic": self.periodic, "scaling": self.scaling}


stft = STFTInitializer = STFT
init_ops.KERAS_INITIALIZERS["STFT"] = STFT
init_ops.KERAS_INITIALIZERS["STFTInitializer"] = STFT
init_ops._SNAKE["stft"] = STFT

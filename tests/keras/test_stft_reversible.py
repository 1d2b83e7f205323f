"""keras.initializers.STFT (ndflow/ops/init_stft.py), keras.layers.STFTSpectrogram
(ndflow/keras/layers/stft_spectrogram.py) and keras.layers.ReversibleEmbedding
(ndflow/keras/layers/reversible_embedding.py) against Keras 3.15 on TF 2.21 with SciPy 1.17
(tests/fixtures/keras_stft_reversible: windows, kernels, outputs, shapes, configs, weight
paths, gradients, errors, and models Keras saved), and against float64 NumPy: the windows by
their formulas, the spectrogram by np.fft.rfft of the frames, the reverse projection and its
finite-difference gradients.

Tolerances: SciPy's windows 1e-12 (both float64); the initializer's float32 kernels 1e-6
absolute (they come out within 1.5e-7: the same float32 arithmetic); layer outputs 1e-5
relative plus 1e-6 of the output's largest value (float32 sums of up to 64 products in
another order: near-zero bins have no relative precision to speak of); the 'angle' mode as
its error times the magnitude (the phase of a near-zero bin is noise); gradients 1e-4
relative plus 1e-5 of the largest."""

from __future__ import annotations

import io
import json
import warnings
import zipfile

import h5py
import numpy as np
import pytest

import ndflow as tf
from ndflow.ops import init_stft
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_stft_reversible"
CONFIGS = fixture_modules.load("keras_stft_reversible")
KERAS = json.loads((HERE / "values.json").read_text())
with warnings.catch_warnings():
    warnings.simplefilter("ignore")   # (odd_fft's power-of-two warning, checked below)
    CASES = CONFIGS.cases(tf, init_stft.get_window)
SAVED = ["stft_model", "stft_image", "stft_numpy_window", "reversible_lm", "reversible_untied"]


def _array(summary):
    return np.asarray(summary["values"], dtype=summary["dtype"]).reshape(summary["shape"])


def _compare(got, want, rtol, atol_scale, path):
    """got and want (record()'s summaries) equal: arrays of the same dtype and shape within
    rtol * |want| + atol_scale * max|want| (atol_scale None: exactly), the rest exactly."""
    if isinstance(want, dict) and "values" in want:
        assert isinstance(got, dict) and "values" in got, (path, got)
        assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"]), path
        g, w = _array(got), _array(want)
        if atol_scale is None:
            np.testing.assert_array_equal(g, w, err_msg=path)
        elif w.size:
            atol = atol_scale * float(np.max(np.abs(w.astype(np.float64))))
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=path)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), (path, got)
        for key in want:
            _compare(got[key], want[key], rtol, atol_scale, f"{path}/{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (path, got)
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, rtol, atol_scale, f"{path}[{i}]")
    else:
        assert got == want, (path, got, want)


TOLERANCES = {   # kind: (rtol, atol as a fraction of the largest |value|; None: exact)
    "window": (0.0, 1e-12), "init": (0.0, 1e-6), "layer": (1e-5, 1e-6), "rev": (1e-5, 1e-6),
    "grad": (1e-4, 1e-5), "meta": (0.0, None), "error": (0.0, None)}


@pytest.mark.filterwarnings("ignore:`fft_length` is recommended")
@pytest.mark.parametrize("name", sorted(n for n in CASES if not n.startswith("angle/")))
def test_matches_keras(name):
    got = json.loads(json.dumps(CONFIGS.record(CASES[name])))
    rtol, atol = TOLERANCES[name.split("/")[0]]
    if name.startswith(("rev/mixed_float16", "layer/mixed_float16")):
        rtol, atol = 1e-3, 1e-3   # float16 outputs
    if name.startswith("init/"):   # (absolute, the brief's 1e-6)
        want = KERAS[name]
        assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"])
        np.testing.assert_allclose(_array(got), _array(want), rtol=0, atol=1e-6)
        return
    _compare(got, KERAS[name], rtol, atol, name)


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith("angle/")))
def test_angle_matches_keras_weighed_by_magnitude(name):
    got = CONFIGS.record(CASES[name])
    want = KERAS[name]
    _compare(got["magnitude"], want["magnitude"], 1e-5, 1e-6, name)
    g, w, mag = _array(got["angle"]), _array(want["angle"]), _array(want["magnitude"])
    assert g.shape == w.shape and got["angle"]["dtype"] == "float32"
    wrapped = np.angle(np.exp(1j * (g.astype(np.float64) - w)))   # (pi and -pi are one)
    assert np.max(np.abs(wrapped) * mag) <= 1e-6 * mag.max()
    assert np.max(np.abs(wrapped)[mag > 1e-2 * mag.max()]) < 1e-4


def test_every_case_was_generated():
    assert sorted(CASES) == sorted(k for k in KERAS if k != "versions"
                                   and not k.startswith("saved/"))
    assert KERAS["versions"]["keras"].startswith("3.15")


# -- the windows and kernels by their formulas (float64 NumPy) -------------------------------
def _formula(name, m, periodic):
    """The textbook windows: periodic ones are the symmetric window of m + 1, less its last."""
    n_total = m + 1 if periodic else m
    n = np.arange(m)
    d = n_total - 1
    return {
        "hann": 0.5 - 0.5 * np.cos(2 * np.pi * n / d),
        "hamming": 0.54 - 0.46 * np.cos(2 * np.pi * n / d),
        "blackman": 0.42 - 0.5 * np.cos(2 * np.pi * n / d) + 0.08 * np.cos(4 * np.pi * n / d),
        "bartlett": 1 - np.abs(2 * n / d - 1),
        "boxcar": np.ones(m),
        "cosine": np.sin(np.pi * (n + 0.5) / n_total),
    }[name]


@pytest.mark.parametrize("name", ["hann", "hamming", "blackman", "bartlett", "boxcar", "cosine"])
@pytest.mark.parametrize("periodic", [False, True])
def test_windows_and_kernels_match_their_formulas(name, periodic):
    for m in (5, 16, 31):
        want = _formula(name, m, periodic)
        np.testing.assert_allclose(init_stft.get_window(name, m, periodic), want, atol=1e-12)
    # the kernel: window * exp(-2 pi i t k / fft_length) / ||window||, in float32 (whose
    # rounding of the arguments, up to 2 pi 30 * 16 / 32 ~ 94, moves them by up to ~6e-6)
    m, bins = 31, 17
    window = _formula(name, m, periodic)
    t, k = np.arange(m)[:, None], np.arange(bins)[None, :]
    dft = np.exp(-2j * np.pi * t * k / ((bins - 1) * 2)) * window[:, None]
    for side, part, scaling, norm in [("real", dft.real, "density", np.sqrt(np.sum(window ** 2))),
                                      ("imag", dft.imag, "spectrum", np.sum(np.abs(window))),
                                      ("imag", dft.imag, None, 1.0)]:
        kernel = keras.initializers.STFT(side, name, scaling, periodic)((m, 1, bins))
        assert kernel.dtype == tf.float32 and kernel.shape == (m, 1, bins)
        np.testing.assert_allclose(kernel.numpy()[:, 0, :], part / norm, rtol=0, atol=1e-5)


def test_window_names_scipy_cannot_make_without_parameters_are_refused():
    with pytest.raises(ValueError, match="'kaiser' must have parameters"):
        keras.initializers.STFT("real", "kaiser")
    with pytest.raises(ValueError, match="Invalid window name 'welch'"):
        keras.layers.STFTSpectrogram(window="welch")
    with pytest.raises(ValueError, match="Invalid window name 'hann '"):
        init_stft.get_window("hann ", 8)


# -- the spectrogram against np.fft.rfft of the frames ----------------------------------------
def _frames(x, length, step, padding):
    """[batch, channels, frames, length] of x [batch, time, channels], TF's 'same' padding
    (the extra sample on the right)."""
    x = np.moveaxis(x, 1, -1).astype(np.float64)
    if padding == "same":
        out = -(-x.shape[-1] // step)
        total = max((out - 1) * step + length - x.shape[-1], 0)
        x = np.pad(x, [(0, 0), (0, 0), (total // 2, total - total // 2)])
    count = (x.shape[-1] - length) // step + 1
    idx = np.arange(count)[:, None] * step + np.arange(length)[None, :]
    return x[..., idx]


@pytest.mark.parametrize("mode", ["real", "imag", "stft", "magnitude", "psd", "log", "angle"])
@pytest.mark.parametrize("padding", ["valid", "same"])
def test_spectrogram_matches_numpy_fft(mode, padding):
    length, step, fft, window = 24, 10, 32, "hann"
    x = CONFIGS.signal((2, 150, 2), 11)
    got = keras.layers.STFTSpectrogram(mode=mode, frame_length=length, frame_step=step,
                                       fft_length=fft, window=window, padding=padding,
                                       expand_dims=True)(x).numpy()
    win = _formula("hann", length, periodic=False)
    spec = np.fft.rfft(_frames(x, length, step, padding) * win, n=fft) / np.sqrt(
        np.sum(win ** 2))                               # [batch, channels, frames, bins]
    power = np.abs(spec) ** 2
    psd = power.copy()
    psd[..., 1:-1] *= 2
    want = {"real": spec.real, "imag": spec.imag,
            "stft": np.concatenate([spec.real, spec.imag], axis=-1),
            "magnitude": np.sqrt(np.maximum(power, 1e-7)), "psd": psd,
            "log": np.log(np.sqrt(np.maximum(power, 1e-7))), "angle": np.angle(spec)}[mode]
    want = np.transpose(want, [0, 2, 3, 1])             # [batch, frames, bins, channels]
    assert got.shape == want.shape
    if mode == "angle":
        mag = np.transpose(np.abs(spec), [0, 2, 3, 1])
        err = np.abs(np.angle(np.exp(1j * (got - want)))) * mag
        assert err.max() <= 1e-5 * mag.max()
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_odd_fft_length_warns_and_uses_keras_frequencies():
    with pytest.warns(UserWarning, match="recommended to be a power of two. Received "
                                         "fft_length=45"):
        layer = keras.layers.STFTSpectrogram(mode="real", frame_length=20, fft_length=45,
                                             window=None)
    x = CONFIGS.signal((1, 60, 1), 2)
    got = layer(x).numpy()
    # Keras' kernels take frequencies k / ((bins - 1) * 2) = k / 44, not k / 45
    want = np.fft.rfft(_frames(x, 20, 10, "valid"), n=44).real[0, 0]
    assert got.shape == (1, 5, 23)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)


def test_kernels_train_and_frozen_layers_keep_them():
    x = CONFIGS.signal((4, 128, 1), 5)
    y = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    for trainable in (True, False):
        spec = keras.layers.STFTSpectrogram(mode="magnitude", frame_length=16,
                                            trainable=trainable)
        model = keras.Sequential([keras.Input((128, 1)), spec,
                                  keras.layers.GlobalAveragePooling1D(),
                                  keras.layers.Dense(2)])
        before = spec.real_kernel.numpy().copy()
        model.compile("sgd", "mse")
        model.fit(x, y, epochs=1, verbose=0)
        assert bool(np.any(spec.real_kernel.numpy() != before)) is trainable


def test_int_inputs_are_refused():
    layer = keras.layers.STFTSpectrogram(frame_length=8)
    with pytest.raises(TypeError, match="Invalid input type. Expected `float16`, `float32` "
                                        "or `float64`. Received: input type=<dtype: 'int32'>"):
        layer(np.zeros((1, 32, 1), np.int32))
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        layer(np.zeros((1, 32), np.float32))


# -- ReversibleEmbedding against NumPy --------------------------------------------------------
def _reverse_loss(layer, hidden, weights):
    return tf.reduce_sum(layer(hidden, reverse=True) * weights)


@pytest.mark.parametrize("tie_weights", [True, False])
def test_reverse_pass_matches_numpy_and_finite_differences(tie_weights):
    rng = np.random.default_rng(1)
    layer = keras.layers.ReversibleEmbedding(6, 3, tie_weights=tie_weights,
                                             logit_soft_cap=1.5, dtype="float64")
    layer.build()
    layer.set_weights([rng.standard_normal(w.shape) for w in layer.weights])
    kernel_var = layer.embeddings if tie_weights else layer.reverse_embeddings
    hidden = rng.standard_normal((2, 4, 3))
    weights = rng.standard_normal((2, 4, 6))
    kernel = kernel_var.numpy().T if tie_weights else kernel_var.numpy()
    logits = layer(hidden, reverse=True).numpy()
    np.testing.assert_allclose(logits, np.tanh(hidden @ kernel / 1.5) * 1.5, rtol=1e-12)

    h = tf.constant(hidden)
    with tf.GradientTape() as tape:
        tape.watch(h)
        loss = _reverse_loss(layer, h, weights)
    d_hidden, d_kernel = tape.gradient(loss, [h, kernel_var])
    eps = 1e-6

    def numeric(array, assign):
        out = np.zeros_like(array)
        for i in np.ndindex(array.shape):
            step = np.zeros_like(array)
            step[i] = eps
            hi = assign(array + step)
            lo = assign(array - step)
            out[i] = (hi - lo) / (2 * eps)
        assign(array)
        return out

    want_hidden = numeric(hidden, lambda v: _reverse_loss(layer, v, weights).numpy())
    np.testing.assert_allclose(d_hidden.numpy(), want_hidden, rtol=1e-6, atol=1e-8)
    value = kernel_var.numpy()

    def with_kernel(v):
        kernel_var.assign(v)
        return _reverse_loss(layer, hidden, weights).numpy()
    np.testing.assert_allclose(tf.convert_to_tensor(d_kernel).numpy(),
                               numeric(value, with_kernel), rtol=1e-6, atol=1e-8)


def test_forward_pass_masks_and_is_a_lookup():
    layer = keras.layers.ReversibleEmbedding(5, 2, mask_zero=True,
                                             embeddings_initializer="ones")
    ids = np.array([[0, 4, -1, 2]])
    out = layer(ids)
    np.testing.assert_array_equal(out.numpy(), np.ones((1, 4, 2), np.float32))
    np.testing.assert_array_equal(out._keras_mask.numpy(), [[False, True, True, True]])
    assert layer.compute_mask(ids) is None
    assert layer(out, reverse=True).shape == (1, 4, 5)


def test_built_with_weights():
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    layer = keras.layers.ReversibleEmbedding(4, 2, weights=[table])
    np.testing.assert_array_equal(layer(np.array([3, 1])).numpy(), table[[3, 1]])
    np.testing.assert_allclose(layer(np.ones((1, 2), np.float32), reverse=True).numpy(),
                               [table.sum(axis=1)])


# -- models Keras saved -----------------------------------------------------------------------
@pytest.mark.parametrize("name", SAVED)
def test_model_keras_saved_loads_and_predicts_the_same(name, tmp_path):
    saved = KERAS[f"saved/{name}"]
    model = keras.models.load_model(HERE / f"{name}.keras")
    x = _array(saved["input"])
    want = _array(saved["prediction"])
    got = model.predict(x, verbose=0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
    assert [w.path for w in model.weights] == saved["weights"]

    # saved again by ndflow: Keras' weights file layout and layer configs, same predictions
    model.save(tmp_path / "again.keras")
    again = keras.models.load_model(tmp_path / "again.keras")
    np.testing.assert_array_equal(again.predict(x, verbose=0), got)

    def contents(path):
        with zipfile.ZipFile(path) as z:
            config = json.loads(z.read("config.json"))
            weights = h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
            names = []
            weights.visit(lambda n: names.append((n, getattr(weights[n], "shape", None))))
        layers = {layer["config"]["name"]: layer["config"]
                  for layer in config["config"]["layers"]}
        return sorted(names), layers
    ours, theirs = contents(tmp_path / "again.keras"), contents(HERE / f"{name}.keras")
    assert ours[0] == theirs[0]
    for layer in ("spectrogram", "embed"):
        if layer in theirs[1]:
            want_config = dict(theirs[1][layer])
            if isinstance(want_config.get("window"), dict):   # Keras' `__numpy__` window,
                want_config["window"] = want_config["window"]["config"]["value"]   # a list
            assert ours[1][layer] == want_config


def test_frozen_reversible_embedding_weights_are_not_trainable():
    layer = keras.layers.ReversibleEmbedding(6, 3, tie_weights=False, trainable=False)
    model = keras.Sequential([keras.Input((2,), dtype="int32"), layer,
                              keras.layers.Dense(1)])
    assert [w.trainable for w in layer.weights] == [False, False]
    assert len(model.trainable_weights) == 2   # the Dense layer's
    layer.trainable = True
    assert [w.trainable for w in layer.weights] == [True, True]
    assert len(model.trainable_weights) == 4

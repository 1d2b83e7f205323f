"""keras.ops, keras.random and the new activations against Keras 3.15's own outputs: the
calls of tests/fixtures/keras_ops/generate_values.py (the test runs the same functions on
tf.keras) on the stored inputs give Keras' stored outputs (keras_ops_values.npz). Random
draws with int seeds and SeedGenerators equal Keras' bit for bit (same Philox streams)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "keras_ops"
_spec = importlib.util.spec_from_file_location("keras_ops_cases",
                                               FIXTURES / "generate_values.py")
CASES_MODULE = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(CASES_MODULE)
VALUES = dict(np.load(FIXTURES / "keras_ops_values.npz"))
NAMES = sorted(CASES_MODULE.CASES)
STORED = sorted({k.split("/")[0] for k in VALUES})
# Float32 round-off (different summation orders), looser where errors compound.
TOLERANCE = {"stft": 1e-4, "stft_hamming_nocenter": 1e-4, "istft": 1e-4, "pinv": 1e-4,
             "lstsq": 1e-4, "norms": 1e-4, "cholesky_inverse": 1e-4, "ctc_loss": 1e-4,
             "fft2_ifft2": 1e-5, "rfft_irfft": 1e-5, "resize_bicubic": 1e-5,
             "ssim": 1e-4, "perspective": 1e-4, "slogdet": 1e-5}


def _run(name):
    fn, _ = CASES_MODULE.CASES[name]
    index = 0
    inputs = []
    while f"{name}/in{index}" in VALUES:
        inputs.append(tf.constant(VALUES[f"{name}/in{index}"]))
        index += 1
    return tf.nest.flatten(fn(tf.keras, *inputs))


def _check(name) -> str | None:
    outs = _run(name)
    expected = []
    while f"{name}/out{len(expected)}" in VALUES:
        expected.append(VALUES[f"{name}/out{len(expected)}"])
    if len(outs) != len(expected):
        return f"{name}: {len(outs)} outputs, Keras {len(expected)}"
    tol = TOLERANCE.get(name, 2e-6)
    for i, (got, want) in enumerate(zip(outs, expected)):
        got = np.asarray(got)
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"{name}[{i}]: {got.dtype}{got.shape}, Keras {want.dtype}{want.shape}"
        if not np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True):
            return f"{name}[{i}]: max error {np.nanmax(np.abs(got - want))}"
    return None


def test_every_case_was_generated_except_keras_own_failures():
    """Keras cannot run two of the calls (its TF backend has no NCHW conv on CPU, and its
    map_coordinates 'mirror' mode gathers out of range); every other case is stored."""
    assert set(NAMES) - set(STORED) == {"conv2d_channels_first", "map_coordinates_mirror"}


GROUPS = {g: [n for n in STORED if n.split("_")[0] == g] for g in
          sorted({n.split("_")[0] for n in STORED})}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_outputs_equal_keras(group):
    problems = [p for p in map(_check, GROUPS[group]) if p]
    assert not problems, "\n".join(problems)


def test_channels_first_conv_and_mirror_mode_where_keras_fails():
    """The two calls Keras' TF backend cannot run, against their NumPy equivalents."""
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 5)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((3, 2, 3, 4)).astype(np.float32)
    first = tf.keras.ops.conv(x, w, data_format="channels_first").numpy()
    last = tf.keras.ops.conv(np.moveaxis(x, 1, -1), w).numpy()
    np.testing.assert_allclose(first, np.moveaxis(last, -1, 1), rtol=1e-6)
    image = np.arange(20.0).reshape(4, 5)
    coords = np.array([[-2.0, 4.5, 6.0], [-1.0, 5.0, 8.0]])
    got = tf.keras.ops.image.map_coordinates(image, coords, 0, fill_mode="mirror").numpy()
    # scipy's 'mirror': ... 2 1 | 0 1 2 3 | 2 1 ...
    rows = np.array([2, 3, 2])   # -2 -> 2, 4.5 -> round 4 -> 2, 6 -> 0 ... with period 6
    rows = np.array([2, 2, 0])
    cols = np.array([1, 3, 0])   # -1 -> 1, 5 -> 3, 8 -> 0 (period 8)
    np.testing.assert_array_equal(got, image[rows, cols])

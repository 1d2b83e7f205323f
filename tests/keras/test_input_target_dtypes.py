"""Keras 3's dtype conversions of data, as TF 2.21 does them (tests/fixtures/
keras_input_target_dtypes, generate.py runs configs.run): NumPy float arrays other than floatx
become floatx in the array adapter (datasets and generators pass their dtypes through), a
model casts its inputs to its Input's dtype (bool arrays reach an LSTM as float32), and a
Loss casts targets and predictions to its dtype before calling a plain function (float64 or
integer targets minus float32 predictions)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("keras_input_target_dtypes")
EXPECTED = fixture_modules.expected("keras_input_target_dtypes", "calls")


@pytest.fixture(scope="module")
def results():
    return CONFIGS.run(tf)


@pytest.mark.parametrize("i", range(len(EXPECTED)))
def test_dtypes_as_tensorflow(results, i):
    assert results[i] == EXPECTED[i]


def test_bool_sequences_train_an_lstm():
    rng = np.random.default_rng(0)
    x, y = rng.random((16, 5, 3)) > 0.5, rng.integers(0, 2, (16,))
    model = tf.keras.Sequential([tf.keras.Input((5, 3)), tf.keras.layers.LSTM(4),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile("adam", "binary_crossentropy")
    loss = model.fit(x, y, batch_size=8, epochs=1, verbose=0).history["loss"][0]
    assert np.isfinite(loss)
    want = model.predict(x.astype(np.float32), verbose=0)
    np.testing.assert_array_equal(model.predict(x, verbose=0), want)


def test_floatx_float64_makes_float32_arrays_float64():
    tf.keras.backend.set_floatx("float64")
    try:
        seen = []

        def loss(y_true, y_pred):
            seen.append((y_true.dtype, y_pred.dtype))
            return tf.reduce_mean(tf.square(y_true - y_pred))
        model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
        model.compile("sgd", loss=loss)
        model.fit(np.ones((4, 2), np.float32), np.ones((4, 1), np.float32), verbose=0)
        assert set(seen) == {(tf.float64, tf.float64)}
    finally:
        tf.keras.backend.set_floatx("float32")

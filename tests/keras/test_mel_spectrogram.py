"""keras.layers.MelSpectrogram (ndflow/keras/layers/audio_spectrogram.py) against Keras 3 on
TF 2.21 (tests/fixtures/keras_mel_spectrogram): outputs (decibel and power, batched and
not, other windows), output shapes and configs; in a model that saves and loads."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_mel_spectrogram"
CONFIGS = fixture_modules.load("keras_mel_spectrogram")
KERAS = np.load(HERE / "values.npz")
KERAS_CONFIGS = json.loads((HERE / "configs.json").read_text())
NAMES = sorted(CONFIGS.CASES)


@pytest.mark.parametrize("name", NAMES)
def test_outputs_shapes_and_configs_match_keras(name):
    kwargs, shape = CONFIGS.CASES[name]
    layer = keras.layers.MelSpectrogram(**kwargs)
    got = layer(CONFIGS.waveform(shape, NAMES.index(name))).numpy()
    want = KERAS[name]
    assert got.shape == want.shape
    # decibels to 1e-4 (float32 logs of powers differ in the last bits), powers relatively
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-4)
    assert list(layer.compute_output_shape(shape)) == KERAS_CONFIGS[name]["output_shape"]
    config = json.loads(json.dumps(layer.get_config(), default=list))
    assert {k: v for k, v in config.items() if k != "name"} == \
        {k: v for k, v in KERAS_CONFIGS[name]["config"].items() if k != "name"}


def test_in_a_model_that_saves_and_loads(tmp_path):
    model = keras.Sequential([keras.Input((2048,)),
                              keras.layers.MelSpectrogram(fft_length=256, sequence_stride=128,
                                                          num_mel_bins=16),
                              keras.layers.Flatten(), keras.layers.Dense(2)])
    x = CONFIGS.waveform((2, 2048), 7)
    model.save(tmp_path / "m.keras")
    again = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0))


def test_fft_shorter_than_the_window_is_refused():
    with pytest.raises(ValueError, match="fft_length"):
        keras.layers.MelSpectrogram(fft_length=256, sequence_length=512)

"""tf.audio: encode_wav writes TF 2.21's bytes (fixture stereo.wav), decode_wav reads them
with TF's desired_channels/desired_samples rules and header errors, in graphs too."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

HERE = Path(__file__).parents[1] / "fixtures" / "audio_wav"
WAV = (HERE / "stereo.wav").read_bytes()
FIXTURE = json.loads((HERE / "decoded.json").read_text())


def test_encode_writes_tensorflows_bytes():
    audio = np.array(FIXTURE["audio"], np.float32)
    assert tf.audio.encode_wav(audio, 16000).numpy() == WAV


@pytest.mark.parametrize("key", sorted(FIXTURE["decoded"]))
def test_decode_matches_tensorflow(key):
    channels, samples = map(int, key.split(","))
    audio, rate = tf.audio.decode_wav(WAV, desired_channels=channels, desired_samples=samples)
    want, want_rate = FIXTURE["decoded"][key]
    np.testing.assert_array_equal(audio.numpy(), np.array(want, np.float32).reshape(
        audio.shape))
    assert int(rate) == want_rate and audio.dtype == tf.float32


@pytest.mark.parametrize("name", sorted(FIXTURE["errors"]))
def test_bad_files_are_tensorflows_errors(name):
    wav = WAV
    data = {"short": wav[:30], "truncated_data": wav[:-1],
            "8_bit": wav[:34] + b"\x08\x00" + wav[36:],
            "float_format": wav[:20] + b"\x03\x00" + wav[22:], "rifx": b"RIFX" + wav[4:]}[name]
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.audio.decode_wav(data)
    assert FIXTURE["errors"][name] in str(e.value)


def test_round_trip_in_a_graph_and_bad_audio():
    @tf.function
    def round_trip(x):
        return tf.audio.decode_wav(tf.audio.encode_wav(x, 8000), desired_channels=1)

    x = np.linspace(-1, 1, 11, dtype=np.float32)[:, None]
    audio, rate = round_trip(tf.constant(x))
    assert audio.shape.as_list() == [11, 1] and int(rate) == 8000
    np.testing.assert_allclose(audio.numpy(), np.clip(x, -1, 32767 / 32768), atol=1 / 32768)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must have rank 2"):
        tf.audio.encode_wav(np.zeros([3], np.float32), 100)

"""text/audio_dataset_from_directory, timeseries_dataset_from_array, pad_sequences and
split_dataset against Keras 3.15 (tests/fixtures/keras_utils_data, generate.py)."""

import json
import os

import numpy as np
import pytest

import ndflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_utils_data")
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))
with open(os.path.join(FIXTURES, "expected.json")) as f:
    META = json.load(f)


def test_text_dataset_matches_keras(capsys):
    ds = tf.keras.utils.text_dataset_from_directory(os.path.join(FIXTURES, "texts"),
                                                    shuffle=False, max_length=6)
    assert capsys.readouterr().out == "Found 5 files belonging to 2 classes.\n"
    x, y = next(iter(ds))
    assert [t.decode() for t in x.numpy()] == META["texts"]["x"]
    assert y.numpy().tolist() == META["texts"]["y"]
    assert ds.class_names == META["texts"]["class_names"]


def test_text_dataset_split_both_and_errors():
    train, val = tf.keras.utils.text_dataset_from_directory(
        os.path.join(FIXTURES, "texts"), validation_split=0.4, subset="both", seed=1,
        verbose=False, label_mode="categorical")
    xs = [t for b in train for t in b[0].numpy()] + [t for b in val for t in b[0].numpy()]
    assert len(xs) == 5 and next(iter(val))[1].shape == (2, 2)
    with pytest.raises(ValueError, match="you must provide a `seed`"):
        tf.keras.utils.text_dataset_from_directory(os.path.join(FIXTURES, "texts"),
                                                   validation_split=0.5, subset="training")


def test_audio_dataset_matches_keras():
    audio = os.path.join(FIXTURES, "audio")
    x, y = next(iter(tf.keras.utils.audio_dataset_from_directory(audio, shuffle=False,
                                                                 verbose=False)))
    np.testing.assert_array_equal(x.numpy(), EXPECTED["audio_x"])  # padded to the longest
    np.testing.assert_array_equal(y.numpy(), EXPECTED["audio_y"])
    x, _ = next(iter(tf.keras.utils.audio_dataset_from_directory(
        audio, shuffle=False, output_sequence_length=32, verbose=False)))
    np.testing.assert_array_equal(x.numpy(), EXPECTED["audio32_x"])
    with pytest.raises(ValueError, match="Cannot set both `ragged` and"):
        tf.keras.utils.audio_dataset_from_directory(audio, ragged=True,
                                                    output_sequence_length=3)


def test_timeseries_matches_keras():
    data = np.arange(40, dtype="float32").reshape(20, 2)
    ds = tf.keras.utils.timeseries_dataset_from_array(
        data, np.arange(20), sequence_length=4, sequence_stride=3, sampling_rate=2,
        batch_size=2, start_index=1, end_index=18)
    batches = list(ds)
    assert [int(b[0].shape[0]) for b in batches] == META["ts_batches"]
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]),
                                  EXPECTED["ts_x"])
    np.testing.assert_array_equal(np.concatenate([b[1].numpy() for b in batches]),
                                  EXPECTED["ts_y"])
    shuffled = tf.keras.utils.timeseries_dataset_from_array(data, None, 3, shuffle=True,
                                                            seed=2, batch_size=None)
    firsts = sorted(int(w.numpy()[0, 0]) for w in shuffled)
    assert firsts == list(range(0, 36, 2))
    with pytest.raises(ValueError, match="`sequence_stride` must be higher than 0"):
        tf.keras.utils.timeseries_dataset_from_array(data, None, 3, sequence_stride=0)


@pytest.mark.parametrize("padding", ["pre", "post"])
@pytest.mark.parametrize("truncating", ["pre", "post"])
def test_pad_sequences_matches_keras(padding, truncating):
    out = tf.keras.utils.pad_sequences([[1, 2, 3], [4], [5, 6, 7, 8, 9]], maxlen=4,
                                       padding=padding, truncating=truncating, value=-1)
    np.testing.assert_array_equal(out, EXPECTED[f"pad_{padding}_{truncating}"])
    assert out.dtype == np.int32


def test_pad_sequences_errors_and_default():
    np.testing.assert_array_equal(tf.keras.utils.pad_sequences([[1, 2, 3], [4], [5, 6, 7, 8, 9]]),
                                  EXPECTED["pad_default"])
    with pytest.raises(ValueError, match='Padding type "middle" not understood'):
        tf.keras.utils.pad_sequences([[1]], padding="middle")
    with pytest.raises(ValueError, match="must be a list of iterables"):
        tf.keras.utils.pad_sequences([1, 2])
    with pytest.raises(ValueError, match="is not compatible with `value`'s type"):
        tf.keras.utils.pad_sequences([[1]], value="x")


def test_split_dataset():
    x, y = np.arange(10).reshape(10, 1), np.arange(10) * 2
    left, right = tf.keras.utils.split_dataset((x, y), left_size=0.8)
    left = [(a.numpy(), b.numpy()) for a, b in left]
    assert len(left) == 8 and len(list(right)) == 2
    assert all(b == 2 * a[0] for a, b in left)
    ds = tf.data.Dataset.from_tensor_slices(x).batch(3)
    a, b = tf.keras.utils.split_dataset(ds, right_size=3, shuffle=True, seed=0)
    got = np.concatenate([t.numpy() for t in a] + [t.numpy() for t in b])
    assert sorted(got[:, 0]) == list(range(10)) and [t.shape[0] for t in b] == [3]
    import random
    order = list(range(10))
    random.Random(0).shuffle(order)  # Keras' random.seed(seed); random.shuffle
    assert got[:, 0].tolist() == order
    with pytest.raises(ValueError, match="At least one of the `left_size` or `right_size`"):
        tf.keras.utils.split_dataset((x,))
    with pytest.raises(ValueError, match="`left_size` should be either a positive integer"):
        tf.keras.utils.split_dataset((x,), left_size=10)


def test_audio_ragged_and_unlabelled_as_keras():
    audio = os.path.join(FIXTURES, "audio")
    x, _ = next(iter(tf.keras.utils.audio_dataset_from_directory(
        audio, shuffle=False, ragged=True, verbose=False, batch_size=5)))
    assert isinstance(x, tf.RaggedTensor)
    assert [int(r.shape[0]) for r in x] == [30, 50, 40, 20, 35]  # Keras 3.15's lengths
    np.testing.assert_array_equal(np.stack(list(x[1].numpy())), EXPECTED["audio_x"][1])
    clips = tf.keras.utils.audio_dataset_from_directory(audio, labels=None, shuffle=False,
                                                        verbose=False, batch_size=None)
    assert [tuple(a.shape) for a in clips] == [(30, 1), (50, 1), (40, 1), (20, 1), (35, 1)]

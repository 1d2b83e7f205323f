"""Keras 3's seeding gives TensorFlow's numbers: initializers (seeded, or unseeded after
`keras.utils.set_random_seed`) draw TF 2.21's exact values, so a seeded model starts from
TF's weights and (without shuffling) trains to TF's losses; a multi-output model logs each
output's loss (`a_loss`) and orders `evaluate`'s list as Keras does. Expected values:
tests/fixtures/keras_seeded/expected.json, written by TF 2.21 (generate.py beside it)."""

import json
import os
import random

import numpy as np
import pytest

import ndflow as tf

keras = tf.keras
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_seeded",
                       "expected.json")


@pytest.fixture(scope="module")
def expected():
    with open(FIXTURE) as f:
        return json.load(f)


def test_initializers_draw_tfs_values(expected):
    made = {
        "GlorotUniform(seed=3)": keras.initializers.GlorotUniform(seed=3),
        "HeNormal(seed=1)": keras.initializers.HeNormal(seed=1),
        "RandomNormal(seed=5)": keras.initializers.RandomNormal(seed=5),
        "TruncatedNormal(seed=2)": keras.initializers.TruncatedNormal(seed=2),
        "RandomUniform(seed=4)": keras.initializers.RandomUniform(seed=4),
        "VarianceScaling(2.0, 'fan_out', 'untruncated_normal', seed=9)":
            keras.initializers.VarianceScaling(2.0, "fan_out", "untruncated_normal", seed=9),
    }
    np.testing.assert_allclose(keras.initializers.Orthogonal(seed=3)((4, 4)).numpy(),
                               expected["initializers"]["Orthogonal(seed=3)"], atol=2e-6)
    for name, init in made.items():
        np.testing.assert_array_equal(init((3, 4)).numpy(),
                                      np.float32(expected["initializers"][name]), err_msg=name)
        # an int seed gives the same values on every call (Keras 3)
        np.testing.assert_array_equal(init((3, 4)).numpy(), init((3, 4)).numpy())
    keras.utils.set_random_seed(11)
    unseeded = [keras.initializers.GlorotUniform(), keras.initializers.LecunNormal()]
    want = expected["initializers"]["after set_random_seed(11): GlorotUniform(), LecunNormal()"]
    for init, values in zip(unseeded, want):
        np.testing.assert_array_equal(init((2, 5)).numpy(), np.float32(values))
    assert keras.initializers.GlorotUniform().get_config()["seed"] is None


def test_tf_random_initializers_stay_stateful():
    init = tf.random_uniform_initializer(seed=3)   # init_ops_v2: a new draw each call
    assert not np.array_equal(init((3,)).numpy(), init((3,)).numpy())


def test_seeded_model_trains_like_tf(expected):
    keras.utils.set_random_seed(7)
    inp = keras.Input((5,), name="x")
    h = keras.layers.Dense(8, activation="relu")(inp)
    a = keras.layers.Dense(1, name="a")(h)
    b = keras.layers.Dense(3, name="b")(h)
    model = keras.Model(inp, {"a": a, "b": b})
    model.compile("sgd", loss={"a": "mse",
                               "b": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
                  loss_weights={"a": 2.0, "b": 0.5}, metrics={"b": ["accuracy"]})
    for w, want in zip(model.weights, expected["weights"]):
        np.testing.assert_array_equal(w.numpy(), np.float32(want))
    rng = np.random.RandomState(0)
    x = rng.rand(32, 5).astype("float32")
    ya = rng.rand(32, 1).astype("float32")
    yb = rng.randint(0, 3, 32)
    history = model.fit(x, {"a": ya, "b": yb}, batch_size=8, epochs=2, verbose=0,
                        shuffle=False)
    assert sorted(history.history) == sorted(expected["history"])
    for key, values in expected["history"].items():
        np.testing.assert_allclose(history.history[key], values, rtol=2e-5, err_msg=key)
    assert model.metrics_names == expected["metrics_names"]
    np.testing.assert_allclose(model.evaluate(x, {"a": ya, "b": yb}, verbose=0),
                               expected["evaluate"], rtol=2e-5)


def test_seeded_recurrent_layers_start_from_tfs_weights(expected):
    keras.utils.set_random_seed(4)
    layers = [keras.layers.Embedding(50, 4), keras.layers.LSTM(3), keras.layers.GRU(3),
              keras.layers.SimpleRNN(3)]
    tokens = np.array([[1, 2, 3]])
    for layer in layers[1:]:
        layer(layers[0](tokens))
    weights = [w.numpy() for layer in layers for w in layer.weights]
    assert len(weights) == len(expected["rnn_weights"])
    for w, want in zip(weights, expected["rnn_weights"]):   # QR's rounding in orthogonal ones
        np.testing.assert_allclose(w, np.float32(want), atol=2e-6)


def test_seeded_einsum_projections_start_from_tfs_weights():
    # EinsumDense clones its variance-scaling kernel initializer at build (to give it the
    # einsum's fans) with the seed it already drew: no second Python-random draw, so an
    # attention layer's projections get TF 2.21's kernels (values printed by TF 2.21)
    keras.utils.set_random_seed(5)
    mha = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)
    x = np.ones((1, 2, 4), np.float32)
    mha(x, x)
    kernels = [w.numpy().ravel()[:4] for w in mha.weights if "kernel" in w.path]
    np.testing.assert_allclose(kernels, [
        [0.6685315370559692, 0.10833853483200073, 0.4823429584503174, 0.4109368324279785],
        [-0.26161760091781616, -0.6577886343002319, -0.23380374908447266, 0.04969984292984009],
        [-0.0994461178779602, -0.2880958318710327, 0.18147313594818115, 0.17216110229492188],
        [-0.7549641132354736, 0.7357337474822998, 0.19959580898284912, 0.01557689905166626]],
        rtol=1e-6)
    keras.utils.set_random_seed(5)
    dense = keras.layers.EinsumDense("ab,bc->ac", output_shape=3)
    state = random.getstate()
    dense.build((None, 2))
    assert random.getstate() == state
    np.testing.assert_allclose(dense.kernel.numpy(), [
        [0.5282925367355347, 0.4615514278411865, -0.295812726020813],
        [0.6544259786605835, 0.9987657070159912, 0.4983927011489868]], rtol=1e-6)


def test_a_layer_overriding_compute_mask_supports_masking():
    class Split(keras.layers.Layer):
        def call(self, inputs):
            return keras.ops.split(inputs, 2, axis=1)

        def compute_mask(self, inputs, mask=None):
            return None if mask is None else keras.ops.split(mask, 2, axis=1)

    x = keras.layers.Masking()(np.array([[[1.0], [0.0], [2.0], [0.0]]], np.float32))
    first, second = Split()(x)
    np.testing.assert_array_equal(first._keras_mask.numpy(), [[True, False]])
    np.testing.assert_array_equal(second._keras_mask.numpy(), [[True, False]])


def test_lookup_vocabularies_are_numpy_terms_as_keras():
    # TF 2.21: the terms come back as NumPy scalars, the special tokens as Python values
    lookup = keras.layers.StringLookup()
    lookup.adapt(["x", "y", "y"])
    vocab = lookup.get_vocabulary()
    assert vocab == ["[UNK]", "y", "x"] and type(vocab[0]) is str
    assert all(type(v) is np.str_ for v in vocab[1:])
    ints = keras.layers.IntegerLookup()
    ints.adapt([3, 4, 4])
    assert repr(ints.get_vocabulary()) == "[-1, np.int64(4), np.int64(3)]"

"""Keras layers and Sequential: outputs against NumPy float64 references, gradients against the
analytic ones, Keras 3's names, defaults, freezing, weights I/O, configs and errors."""

import numpy as np
import pytest

import ndflow as tf

layers = tf.keras.layers
RNG = np.random.default_rng(3)


def test_dense_matches_numpy_and_builds_on_first_call():
    d = layers.Dense(3, activation="relu", kernel_initializer="ones", bias_initializer="zeros")
    assert not d.built and d.name.startswith("dense")
    x = RNG.normal(size=(5, 4)).astype(np.float32)
    w, b = RNG.normal(size=(4, 3)), RNG.normal(size=3)
    d(x)
    assert d.built and [v.shape.as_list() for v in d.weights] == [[4, 3], [3]]
    assert [v.name for v in d.weights] == ["kernel", "bias"]  # Keras 3: short names
    assert [v.path for v in d.weights] == [f"{d.name}/kernel", f"{d.name}/bias"]
    d.set_weights([w, b])
    np.testing.assert_allclose(d(x).numpy(), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)
    seq = RNG.normal(size=(2, 6, 4)).astype(np.float32)  # rank 3: the last axis
    np.testing.assert_allclose(d(seq).numpy(), np.maximum(seq @ w + b, 0), rtol=1e-5,
                               atol=1e-6)
    x64 = x.astype(np.float64)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(d(x64) ** 2)
    gw, gb = tape.gradient(loss, d.trainable_variables)
    y = np.maximum(x @ w + b, 0)
    dy = 2 * y * (y > 0)
    np.testing.assert_allclose(gw.numpy(), x.T @ dy, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gb.numpy(), dy.sum(0), rtol=1e-4, atol=1e-5)


def test_default_initializers_and_unique_names():
    a, b = layers.Dense(256), layers.Dense(256)
    assert a.name != b.name and b.name.startswith("dense_")
    a(np.ones((1, 512), np.float32))
    k = a.kernel.numpy()
    limit = np.sqrt(6 / (512 + 256))  # glorot_uniform
    assert np.abs(k).max() <= limit and abs(k.std() - limit / np.sqrt(3)) < 0.05 * limit
    assert not a.bias.numpy().any()


def test_activation_flatten_dropout():
    x = RNG.normal(size=(2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(layers.Activation("tanh")(x).numpy(), np.tanh(x), rtol=1e-6)
    assert layers.Flatten()(x).shape.as_list() == [2, 60]
    np.testing.assert_allclose(layers.Flatten(data_format="channels_first")(x).numpy(),
                               np.transpose(x, (0, 2, 3, 1)).reshape(2, -1))
    drop = layers.Dropout(0.5, seed=1)
    big = np.ones((200, 200), np.float32)
    np.testing.assert_array_equal(drop(big).numpy(), big)  # inference: identity
    kept = drop(big, training=True).numpy()
    assert set(np.unique(kept)) == {0.0, 2.0} and abs((kept > 0).mean() - 0.5) < 0.02
    assert tf.keras.activations.get("relu") is tf.keras.activations.relu
    np.testing.assert_allclose(
        tf.keras.activations.relu(np.array([-2.0, 1.0, 9.0]), negative_slope=0.1,
                                  max_value=5.0).numpy(), [-0.2, 1.0, 5.0], rtol=1e-6)


def test_sequential_chains_trains_and_freezes():
    model = tf.keras.Sequential([layers.Dense(4, activation="tanh"), layers.Dropout(0.5),
                                 layers.Dense(1)])
    x = RNG.normal(size=(8, 3)).astype(np.float32)
    out = model(x)
    w1, b1, w2, b2 = model.get_weights()
    np.testing.assert_allclose(out.numpy(), np.tanh(x @ w1 + b1) @ w2 + b2, rtol=1e-5,
                               atol=1e-6)
    assert len(model.trainable_weights) == 4
    opt = tf.keras.optimizers.SGD(0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True)))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                            model.trainable_variables))
    assert not np.allclose(model.get_weights()[0], w1)
    model.layers[0].trainable = False
    assert len(model.trainable_weights) == 2 and len(model.non_trainable_weights) == 2
    assert tf.function(lambda t: model(t))(tf.constant(x)).shape.as_list() == [8, 1]
    clone = tf.keras.Sequential.from_config(model.get_config())
    assert [type(l).__name__ for l in clone.layers] == ["Dense", "Dropout", "Dense"]
    assert clone.layers[0].get_config()["units"] == 4 and not clone.layers[0].trainable


def test_bad_input():
    with pytest.raises(ValueError, match="expected a positive integer"):
        layers.Dense(0)
    d = layers.Dense(2)
    d(np.ones((1, 3), np.float32))
    with pytest.raises(ValueError, match="with a weight list of length 1, but the layer was "
                                         "expecting 2 weights"):
        d.set_weights([np.ones((3, 2))])
    with pytest.raises(ValueError, match="weight shape \\(3, 2\\) is not compatible"):
        d.set_weights([np.ones((4, 2)), np.ones(2)])
    with pytest.raises(ValueError, match="Unrecognized keyword arguments"):
        layers.Dense(2, bogus=1)
    with pytest.raises(ValueError, match="Only instances of `keras.Layer`"):
        tf.keras.Sequential([lambda x: x])
    with pytest.raises(ValueError, match="Could not interpret activation"):
        layers.Activation("no_such")

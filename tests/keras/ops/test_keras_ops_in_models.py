"""keras.ops where Keras programs use them: on a functional model's KerasTensors (each call a
step of the model that replays, trains, saves and loads), inside a custom Layer of a
functional Model, inside tf.function graphs with unknown dimensions; their gradients against
float64 finite differences; bad input raising Keras' error types."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras.keras_tensor import KerasTensor

K = tf.keras.ops


def test_ops_on_keras_tensors_build_model_steps_that_replay_train_save_and_load(tmp_path):
    inputs = tf.keras.Input((4,))
    hidden = tf.keras.layers.Dense(3)(inputs)
    mixed = K.concatenate([K.relu(hidden), K.sum(hidden, axis=-1, keepdims=True) * 2.0],
                          axis=-1)
    assert isinstance(mixed, KerasTensor)
    assert mixed.shape == (None, 4) and mixed.dtype.name == "float32"
    top_values, top_indices = K.top_k(mixed, 2)
    assert top_indices.dtype.name == "int32" and top_indices.shape == (None, 2)
    outputs = K.where(mixed > 0, mixed, K.zeros_like(mixed)) + K.cast(top_indices[:, :1],
                                                                      "float32")
    model = tf.keras.Model(inputs, outputs)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    h = model.layers[1](x).numpy()
    mixed_np = np.concatenate([np.maximum(h, 0), h.sum(-1, keepdims=True) * 2], -1)
    expected = np.where(mixed_np > 0, mixed_np, 0) + np.argsort(-mixed_np, -1)[:, :1]
    np.testing.assert_allclose(model(x).numpy(), expected, rtol=1e-5, atol=1e-6)

    model.compile("sgd", "mse")
    model.fit(x, np.ones((5, 4), np.float32), epochs=2, verbose=0)
    path = tmp_path / "ops_model.keras"
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    clone = tf.keras.Model.from_config(model.get_config())
    assert [type(layer).__name__ for layer in clone.layers] == \
        [type(layer).__name__ for layer in model.layers]


class GatedAttention(tf.keras.layers.Layer):
    """A custom layer written with keras.ops only (no tf.* calls)."""

    def build(self, input_shape):
        self.gate = self.add_weight(shape=(input_shape[-1], input_shape[-1]),
                                    initializer="glorot_uniform")

    def call(self, x):
        batch, steps = K.shape(x)[0], K.shape(x)[1]
        heads = K.reshape(x, (batch, steps, 2, -1))
        attended = K.dot_product_attention(heads, heads, heads, is_causal=True)
        merged = K.reshape(attended, (batch, steps, -1))
        gated = merged * K.sigmoid(K.matmul(x, self.gate))
        return K.layer_normalization(gated + x, axis=-1)


def test_custom_layer_of_ops_in_a_functional_model_and_tf_function():
    inputs = tf.keras.Input((None, 8))
    features = GatedAttention()(inputs)
    pooled = K.mean(features, axis=1)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(pooled))
    x = np.random.default_rng(1).standard_normal((3, 5, 8)).astype(np.float32)
    eager = model(x).numpy()

    @tf.function(input_signature=[tf.TensorSpec([None, None, 8], tf.float32)])
    def traced(batch):
        return model(batch)
    np.testing.assert_allclose(traced(x).numpy(), eager, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(traced(x[:2, :3]).numpy(), model(x[:2, :3]).numpy(),
                               rtol=1e-5, atol=1e-6)
    model.compile("adam", "mse")
    history = model.fit(x, np.zeros((3, 2), np.float32), epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_core_ops_in_a_graph_with_unknown_dimensions():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def program(v):
        n = K.shape(v)[0]
        total, ys = K.scan(lambda c, x: (c + x, c * x), K.zeros(()), v)
        loop = K.fori_loop(0, n, lambda i, acc: acc + K.take(v, i), 0.0)
        counted = K.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + 2.0), (0, 0.0))[1]
        branch = K.cond(n > 2, lambda: K.max(v), lambda: K.min(v))
        picked = K.switch(1, [lambda a: a * 0.0, lambda a: a + 1.0], v)
        return total, ys, loop, counted, branch, picked, K.sort(v)
    v = np.array([0.5, -1.0, 2.0, 3.0], np.float32)
    total, ys, loop, counted, branch, picked, ordered = program(v)
    carries = np.concatenate([[0.0], np.cumsum(v)[:-1]])
    np.testing.assert_allclose(ys.numpy(), carries * v, rtol=1e-6)
    assert total.numpy() == pytest.approx(v.sum()) and loop.numpy() == pytest.approx(v.sum())
    assert counted.numpy() == 8.0 and branch.numpy() == 3.0
    np.testing.assert_allclose(picked.numpy(), v + 1)
    np.testing.assert_allclose(ordered.numpy(), np.sort(v))


def _numeric_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


RNG = np.random.default_rng(7)
GRADIENT_CASES = {
    "logsumexp": (lambda x: K.logsumexp(x, axis=1), (2, 3)),
    "norm_nuc": (lambda x: K.norm(x, ord="nuc", axis=(0, 1)), (3, 3)),
    "layer_normalization": (lambda x: K.layer_normalization(x) * np.arange(4.0), (2, 4)),
    "dot_product_attention": (lambda x: K.dot_product_attention(
        K.reshape(x, (1, 3, 1, 2)), K.reshape(x, (1, 3, 1, 2)) * 0.5,
        K.reshape(x, (1, 3, 1, 2)), is_causal=True), (3, 2)),
    "conv": (lambda x: K.conv(K.reshape(x, (1, 4, 4, 1)), np.arange(9.0).reshape(3, 3, 1, 1)
                              / 9.0, padding="same"), (4, 4)),
    "take_along_axis": (lambda x: K.take_along_axis(x, np.array([[2, 0, 1]]), axis=1) ** 2,
                        (2, 3)),
    "map_coordinates": (lambda x: K.image.map_coordinates(
        x, np.array([[0.3, 1.7, 2.2], [0.5, 2.5, 1.1]]), 1), (3, 4)),
    "quantile": (lambda x: K.quantile(x, [0.3, 0.8]), (2, 3)),
    "std_cumprod": (lambda x: K.std(K.cumprod(x, axis=0), axis=1), (3, 2)),
    "scan": (lambda x: K.scan(lambda c, v: (c * v + 1.0, c), K.ones((2,), "float64"), x)[1],
             (3, 2)),
    "sparse_categorical_crossentropy": (lambda x: K.sparse_categorical_crossentropy(
        np.array([1, 0]), x, from_logits=True), (2, 3)),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_float64_finite_differences(name):
    fn, shape = GRADIENT_CASES[name]
    x0 = RNG.uniform(0.2, 1.5, shape)
    weights = None

    def scalar(x):
        out = np.asarray(fn(tf.constant(x)))
        return float((out * weights).sum())
    weights = RNG.standard_normal(np.asarray(fn(tf.constant(x0))).shape)
    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = K.sum(fn(x) * weights)
    analytic = tape.gradient(loss, x).numpy()
    np.testing.assert_allclose(analytic, _numeric_gradient(scalar, x0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("call, error, message", [
    (lambda: K.reshape(np.ones(6), (4, -1)), (ValueError, tf.errors.InvalidArgumentError),
     None),
    (lambda: K.matmul(np.ones((2, 3)), np.ones((4, 2))), (ValueError,
                                                          tf.errors.InvalidArgumentError),
     None),
    (lambda: K.pad(np.ones((2, 2)), 1, mode="wrap"), ValueError, "only supports modes"),
    (lambda: K.squeeze(np.ones((2, 3)), axis=0), ValueError, "Cannot squeeze axis 0"),
    (lambda: K.split(np.ones(5), 2), ValueError, "equal division"),
    (lambda: K.binary_crossentropy(np.ones((2, 3)), np.ones((3, 2))), ValueError,
     "must have the same shape"),
    (lambda: K.dot_product_attention(np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3))),
     ValueError, "only supports 4D inputs"),
    (lambda: K.image.resize(np.ones((1, 4, 4, 3)), (2, 2), interpolation="cubic"),
     ValueError, "interpolation"),
    (lambda: K.image.rgb_to_hsv(np.ones((1, 2, 2, 3), np.int32)), ValueError, "float dtype"),
    (lambda: K.cholesky(-np.eye(3)), ValueError, "Cholesky decomposition failed"),
    (lambda: K.qr(np.ones((2, 2)), mode="r"), ValueError, "not supported"),
    (lambda: K.normalize(np.ones(3), order=0), ValueError, "order"),
    (lambda: K.stft(np.ones(16, np.int32), 8, 4, 8), TypeError, "Expected `float32`"),
    (lambda: K.sigmoid(np.ones(3, np.int32)), (TypeError, tf.errors.InvalidArgumentError),
     None),
    (lambda: K.ldexp(np.ones(3), np.ones(3)), TypeError, "integer"),
    (lambda: K.where(np.ones(3) > 0, np.ones(3)), ValueError, "both should be `None`"),
    (lambda: K.segment_sum(np.ones(3), [0, 0, 1], num_segments=2, sorted=True), ValueError,
     "num_segments"),
    (lambda: tf.keras.random.uniform((2,), dtype="int32"), ValueError, "floating point"),
    (lambda: tf.keras.random.randint((2,), 0, 3, dtype="float32"), ValueError, "integer"),
    (lambda: tf.keras.random.normal((2,), seed="x"), ValueError, "SeedGenerator"),
    (lambda: tf.keras.tree.pack_sequence_as([0, 0], [1]), ValueError, "Too few leaves"),
])
def test_bad_input_raises_keras_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    if message:
        assert message in str(info.value)

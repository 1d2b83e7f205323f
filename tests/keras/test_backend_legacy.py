"""`tf.keras.backend`'s Keras 1/2 functions against TensorFlow 2.21's on the same inputs
(tests/fixtures/keras_backend_legacy: 81 calls — math, reductions, shapes, dot/batch_dot,
activations, the Keras-2 cross-entropies, convolutions, pooling, padding, resizing), plus
variables, updates, switch, random draws and result_type."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("keras_backend_legacy")
VALUES = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures",
                              "keras_backend_legacy", "values.npz"))
K = tf.keras.backend


@pytest.mark.parametrize("case,name,args,kwargs", CONFIGS.CASES,
                         ids=[c[0] for c in CONFIGS.CASES])
def test_values_equal_tensorflows(case, name, args, kwargs):
    got = getattr(K, name)(*[CONFIGS.tensors(a, tf.constant) for a in args], **kwargs)
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    want = VALUES[case]
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_variables_updates_and_values():
    v = K.variable(np.zeros(3), name="v")
    assert K.dtype(v) == "float32" and K.int_shape(v) == (3,) and K.ndim(v) == 1
    K.update_add(v, np.ones(3))
    K.update_sub(v, np.full(3, 0.5))
    np.testing.assert_array_equal(K.eval(v), [0.5, 0.5, 0.5])
    K.moving_average_update(v, np.full(3, 1.5), 0.9)
    np.testing.assert_allclose(K.get_value(v), 0.5 * 0.9 + 1.5 * 0.1, rtol=1e-6)
    K.batch_set_value([(v, [1.0, 2.0, 3.0])])
    assert K.batch_get_value([v])[0].tolist() == [1.0, 2.0, 3.0]
    z = K.zeros((2, 2))
    assert K.eval(z).tolist() == [[0.0, 0.0], [0.0, 0.0]] and K.eval(K.eye(2)).trace() == 2.0
    assert K.get_uid("my_prefix") + 1 == K.get_uid("my_prefix")
    assert K.backend() == "tensorflow" and K.is_float_dtype("float16") and \
        K.is_int_dtype("int8")


def test_switch_random_and_result_type():
    assert float(K.switch(K.constant(1.0) > 0, lambda: K.constant(2.0),
                          lambda: K.constant(3.0))) == 2.0
    picked = K.switch(K.constant([True, False]), K.constant([[1.0, 1.0], [2.0, 2.0]]),
                      K.constant([[5.0, 5.0], [6.0, 6.0]]))
    np.testing.assert_array_equal(picked.numpy(), [[1.0, 1.0], [6.0, 6.0]])
    draws = K.random_uniform((2000,), 1.0, 3.0, seed=1).numpy()
    assert 1.0 <= draws.min() and draws.max() < 3.0 and abs(draws.mean() - 2.0) < 0.1
    bern = K.random_bernoulli((4000,), p=0.25, seed=2).numpy()
    assert set(np.unique(bern)) <= {0.0, 1.0} and abs(bern.mean() - 0.25) < 0.04
    # Keras 3's promotion (checked against TF 2.21's K.result_type)
    assert [K.result_type(*a) for a in (("int32", "float32"), ("int64", "float16"),
                                        ("float16", "bfloat16"), ("int8", "uint8"),
                                        ("bool", "int32"), (), (float,), (int, "int8"))] == \
        ["float32", "float16", "float32", "int16", "int32", "float32", "float32", "int8"]


def test_custom_metric_in_keras_2_style_trains():
    """The Keras-2 recall metric public programs define with K.* in compile()."""
    def recall(y_true, y_pred):
        true_positives = K.sum(K.round(K.clip(y_true * y_pred, 0, 1)))
        possible = K.sum(K.round(K.clip(y_true, 0, 1)))
        return true_positives / (possible + K.epsilon())

    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(
        1, activation="sigmoid", kernel_initializer="ones")])
    model.compile("sgd", "binary_crossentropy", metrics=[recall])
    x = np.array([[1.0, 1.0, 1.0], [-1.0, -1.0, -1.0]], np.float32)
    logs = model.evaluate(x, np.array([[1.0], [1.0]], np.float32), return_dict=True, verbose=0)
    assert logs["recall"] == pytest.approx(0.5, abs=1e-6)


def _numpy_rnn(x, w, u, c, mask, go_backwards, zero_output_for_mask):
    """Keras 2's masked RNN loop in NumPy: masked steps repeat the previous output/state."""
    order = range(x.shape[1] - 1, -1, -1) if go_backwards else range(x.shape[1])
    h, outs, masks = np.zeros((x.shape[0], w.shape[1]), np.float32), [], []
    for t in order:
        new = np.tanh(x[:, t] @ w + h @ u + c)
        m = mask[:, t:t + 1] if mask is not None else np.ones((x.shape[0], 1), bool)
        prev = outs[-1] if outs else np.zeros_like(new)
        outs.append(np.where(m, new, prev))
        h = np.where(m, new, h)
        masks.append(m)
    outputs = np.stack(outs, 1)
    last = outs[-1]
    if zero_output_for_mask:
        outputs = np.where(np.stack(masks, 1), outputs, 0)
        last = np.where(masks[-1], last, 0)
    return last, outputs, h


@pytest.mark.parametrize("kwargs", [{}, {"go_backwards": True}, {"mask": True},
                                    {"mask": True, "zero_output_for_mask": True},
                                    {"mask": True, "go_backwards": True,
                                     "zero_output_for_mask": True}])
def test_rnn_loops_step_function_as_keras(kwargs):
    rng = np.random.RandomState(0)
    x = rng.rand(2, 4, 3).astype("float32")
    w, u = rng.rand(3, 5).astype("float32"), rng.rand(5, 5).astype("float32")
    c = np.full((2, 5), 0.1, np.float32)
    mask = np.array([[1, 1, 0, 1], [1, 0, 0, 0]], bool) if kwargs.get("mask") else None

    def step(inp, states):
        h = tf.tanh(tf.matmul(inp, w) + tf.matmul(states[0], u) + states[1])
        return h, [h]

    last, outputs, states = tf.keras.backend.rnn(
        step, tf.constant(x), [tf.zeros((2, 5))], constants=[tf.constant(c)], mask=mask,
        go_backwards=kwargs.get("go_backwards", False),
        zero_output_for_mask=kwargs.get("zero_output_for_mask", False))
    want_last, want_outputs, want_h = _numpy_rnn(
        x, w, u, c, mask, kwargs.get("go_backwards", False),
        kwargs.get("zero_output_for_mask", False))
    np.testing.assert_allclose(last.numpy(), want_last, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outputs.numpy(), want_outputs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(states[0].numpy(), want_h, rtol=1e-5, atol=1e-6)
    _, only_last, _ = tf.keras.backend.rnn(step, tf.constant(x), [tf.zeros((2, 5))],
                                           constants=[tf.constant(c)], mask=mask,
                                           return_all_outputs=False)
    assert only_last.shape == (2, 1, 5)

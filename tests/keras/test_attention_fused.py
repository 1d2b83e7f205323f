"""Keras attention on the fused _ScaledDotProductAttention op (ops/attention.py): where
Keras 3 takes `dot_product_attention` (no dropout, no returned scores) the layer's graph holds
the op and no Softmax, and its outputs and gradients equal the portable Einsum/Softmax form
that a SavedModel keeps (traced under core/save_context), masks with fully masked rows
included; what is saved holds no ndflow-only op and reloads equal."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.save_context import save_context

L = tf.keras.layers
B, T, D = 3, 6, 8


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((B, T, D)).astype(np.float32)
    y = rng.standard_normal((B, T + 1, D)).astype(np.float32)
    mask = rng.random((B, T, T + 1)) > 0.3
    mask[0, 2] = False          # a query whose keys are all masked: it averages every value
    return x, y, mask


def _op_types(fn, *args):
    return {op.type for op in tf.function(fn).get_concrete_function(*args).graph
            .get_operations()}


def _outputs_and_grads(layer, x, y, **kwargs):
    xv, yv = tf.Variable(x), tf.Variable(y)
    with tf.GradientTape() as tape:
        out = layer(xv, yv, **kwargs)
        loss = tf.reduce_sum(out * out)
    grads = tape.gradient(loss, [xv, yv, *layer.trainable_weights])
    return [out.numpy()] + [g.numpy() for g in grads]


@pytest.mark.parametrize("kwargs", [{}, {"attention_mask": "mask"}, {"use_causal_mask": True},
                                    {"attention_mask": "mask", "use_causal_mask": True}])
@pytest.mark.parametrize("value_dim", [None, 5])
def test_mha_fused_equals_portable_form(kwargs, value_dim):
    x, y, mask = _data()
    kwargs = {k: (tf.constant(mask) if v == "mask" else v) for k, v in kwargs.items()}
    layer = L.MultiHeadAttention(num_heads=2, key_dim=4, value_dim=value_dim, dtype="float32",
                                 kernel_initializer=tf.keras.initializers.GlorotUniform(1))
    layer(x, y)
    fused = _outputs_and_grads(layer, x, y, **kwargs)
    with save_context():
        portable = _outputs_and_grads(layer, x, y, **kwargs)
    for a, b in zip(fused, portable):   # float32 sums in another order
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)

    types = _op_types(lambda a, b: layer(a, b, **kwargs), x, y)
    assert "_ScaledDotProductAttention" in types and "Softmax" not in types
    with save_context():
        types = _op_types(lambda a, b: layer(a, b, **kwargs), x, y)
    assert "_ScaledDotProductAttention" not in types and "Softmax" in types


def test_dropout_and_returned_scores_keep_the_softmax():
    x, y, _ = _data(1)
    for layer, kwargs in ((L.MultiHeadAttention(2, 4, dropout=0.1), {}),
                          (L.MultiHeadAttention(2, 4), {"return_attention_scores": True})):
        types = _op_types(lambda a, b, layer=layer, kwargs=kwargs: layer(a, b, **kwargs), x, y)
        assert "_ScaledDotProductAttention" not in types and "Softmax" in types


def test_keras_ops_dot_product_attention_fused_equals_composite():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, n, 3, 4)).astype(np.float32) for n in (5, 6, 6))
    mask = rng.random((2, 1, 5, 6)) > 0.3
    mask[1, 0, 4] = False
    ops = tf.keras.ops
    zero_bias = np.zeros((1, 1, 5, 6), np.float32)   # a bias keeps the composite form
    for kwargs in ({}, {"mask": mask}, {"is_causal": True}, {"mask": mask, "scale": 0.3}):
        fused = ops.dot_product_attention(q, k, v, **kwargs).numpy()
        composite = ops.dot_product_attention(q, k, v, bias=zero_bias, **kwargs).numpy()
        np.testing.assert_allclose(fused, composite, rtol=1e-5, atol=1e-6)
        assert "_ScaledDotProductAttention" in _op_types(
            lambda a, b, c, kwargs=kwargs: ops.dot_product_attention(a, b, c, **kwargs), q, k, v)


def test_saved_model_keeps_the_portable_form(tmp_path):
    x, _, _ = _data(3)
    inputs = tf.keras.Input((T, D))
    out = L.MultiHeadAttention(num_heads=2, key_dim=4)(inputs, inputs)
    model = tf.keras.Model(inputs, L.Dense(1)(out))
    want = model(x).numpy()
    model.export(str(tmp_path / "export"), verbose=False)
    data = (tmp_path / "export" / "saved_model.pb").read_bytes()
    assert b"_ScaledDotProductAttention" not in data and b"Softmax" in data
    got = tf.saved_model.load(str(tmp_path / "export")).serve(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_grouped_query_attention_fused_equals_portable_form():
    x, y, mask = _data(4)
    layer = L.GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2,
                                  dtype="float32",
                                  kernel_initializer=tf.keras.initializers.GlorotUniform(2))
    layer(x, y)
    fused = _outputs_and_grads(layer, x, y, attention_mask=tf.constant(mask))
    with save_context():
        portable = _outputs_and_grads(layer, x, y, attention_mask=tf.constant(mask))
    for a, b in zip(fused, portable):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    assert "_ScaledDotProductAttention" in _op_types(lambda a, b: layer(a, b), x, y)

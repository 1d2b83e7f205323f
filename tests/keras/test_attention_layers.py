"""MultiHeadAttention, EinsumDense, Attention, AdditiveAttention, TimeDistributed,
UnitNormalization, RMSNormalization: outputs, scores, output masks, weight paths/shapes and
configs equal Keras 3.15's (tests/fixtures/keras_attention, built from Keras' own configs),
a Keras 3 `.keras` transformer block loading and computing the same, NumPy float64
references, finite-difference gradients, errors."""

import json
import os

import numpy as np
import pytest

import ndflow as tf
from tests.keras.layer_checks import check_gradients, normal_config

L = tf.keras.layers
HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_attention")
with open(os.path.join(HERE, "cases.json")) as _f:
    META = json.load(_f)
with np.load(os.path.join(HERE, "cases.npz")) as _z:
    ARRAYS = dict(_z)
RNG = np.random.default_rng(11)


def _inputs(name, meta):
    ts = [tf.constant(ARRAYS[f"{name}/in{i}"]) for i in range(meta["n_inputs"])]
    for i in meta["mask_at"]:
        ts[i]._keras_mask = tf.constant(ARRAYS[f"{name}/mask{i}"])
    kwargs = dict(meta["call_kwargs"])
    for k in meta["call_arrays"]:
        kwargs[k] = tf.constant(ARRAYS[f"{name}/kw_{k}"])
    return ts, kwargs


def _call(layer, meta, ts, kwargs):
    return layer(ts, **kwargs) if meta["list_input"] else layer(*ts, **kwargs)


@pytest.mark.parametrize("name", sorted(META))
def test_matches_keras_fixture(name):
    meta = META[name]
    config = json.loads(json.dumps(meta["config"]))
    if "layer" in config:   # a wrapper: its layer built in its scope, as in Keras' fixture
        config["layer"].pop("build_config")
    layer = L.deserialize({"class_name": meta["cls"], "config": config,
                           "build_config": meta["build_config"]})
    ts, kwargs = _inputs(name, meta)
    if not layer.built:
        _call(layer, meta, ts, kwargs)
    n_weights = len(meta["weight_shapes"])
    assert [list(w.shape) for w in layer.weights] == meta["weight_shapes"]
    assert [w.path if hasattr(w, "path") else None for w in layer.weights] == \
        meta["weight_paths"]
    layer.set_weights([ARRAYS[f"{name}/w{i}"] for i in range(n_weights)])
    out = _call(layer, meta, ts, kwargs)
    outs = list(out) if isinstance(out, tuple) else [out]
    assert len(outs) == meta["n_outputs"]
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.numpy(), ARRAYS[f"{name}/out{i}"], rtol=1e-5, atol=1e-5,
                                   err_msg=f"{name} output {i}")
    out_mask = getattr(outs[0], "_keras_mask", None)
    assert (out_mask is not None) == meta["has_out_mask"]
    if out_mask is not None:
        np.testing.assert_array_equal(out_mask.numpy(), ARRAYS[f"{name}/outmask"])
    assert normal_config(layer.get_config()) == meta["config"]
    assert normal_config(layer.get_build_config()) == meta["build_config"]


# -- a Keras 3 .keras transformer block -----------------------------------------------------


def test_keras3_transformer_block_loads_and_matches(tmp_path):
    model = tf.keras.models.load_model(os.path.join(HERE, "transformer.keras"))
    out = model(tf.constant(ARRAYS["transformer/in"]))
    np.testing.assert_allclose(out.numpy(), ARRAYS["transformer/out"], rtol=1e-5, atol=1e-5)
    mha = model.get_layer("self_attention")
    assert [w.shape.as_list() for w in mha.weights[:2]] == [[8, 2, 4], [2, 4]]
    # and ndflow's own file of it loads back into the same numbers
    path = str(tmp_path / "block.keras")
    model.save(path)
    again = tf.keras.models.load_model(path)
    np.testing.assert_allclose(again(tf.constant(ARRAYS["transformer/in"])).numpy(),
                               out.numpy(), rtol=1e-6, atol=1e-6)


def test_keras3_masked_model_predicts_the_same():
    """Embedding(mask_zero) masks through a causal MHA, a residual Add, LayerNormalization,
    TimeDistributed, Attention and the masked average: Keras' numbers (its functional model
    keeps the padding mask past the attention)."""
    model = tf.keras.models.load_model(os.path.join(HERE, "masked.keras"))
    out = model(tf.constant(ARRAYS["masked/in"]))
    np.testing.assert_allclose(out.numpy(), ARRAYS["masked/out"], rtol=1e-5, atol=1e-6)


# -- NumPy float64 references ----------------------------------------------------------------


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_mha_matches_numpy_reference_with_masks():
    q, v = RNG.normal(size=(2, 4, 6)), RNG.normal(size=(2, 5, 7))
    layer = L.MultiHeadAttention(3, 2, value_dim=4, dtype="float64")
    mask = RNG.random((2, 4, 5)) > 0.3
    mask[..., 0] = True   # no fully masked row
    out, scores = layer(q, v, attention_mask=mask, return_attention_scores=True)
    wq, bq, wk, bk, wv, bv, wo, bo = [w.numpy() for w in layer.weights]
    qp = np.einsum("btd,dnh->btnh", q, wq) + bq
    kp = np.einsum("bsd,dnh->bsnh", v, wk) + bk
    vp = np.einsum("bsd,dnh->bsnh", v, wv) + bv
    logits = np.einsum("btnh,bsnh->bnts", qp / np.sqrt(2.0), kp)
    logits = np.where(mask[:, None], logits, -1e9)
    probs = _softmax(logits)
    want = np.einsum("bnts,bsnh->btnh", probs, vp)
    want = np.einsum("btnh,nhd->btd", want, wo) + bo
    np.testing.assert_allclose(scores.numpy(), probs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)


def test_attention_layers_match_numpy():
    q, v = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 5, 4))
    att = L.Attention(dtype="float64")
    np.testing.assert_allclose(att([q, v]).numpy(),
                               _softmax(q @ v.transpose(0, 2, 1)) @ v, rtol=1e-12)
    add = L.AdditiveAttention(dtype="float64")
    out = add([q, v]).numpy()
    scale = add.scale.numpy()
    scores = (scale * np.tanh(q[:, :, None] + v[:, None])).sum(-1)
    np.testing.assert_allclose(out, _softmax(scores) @ v, rtol=1e-12)


def test_normalizations_and_time_distributed_match_numpy():
    x = RNG.normal(size=(2, 3, 4))
    np.testing.assert_allclose(L.UnitNormalization(dtype="float64")(x).numpy(),
                               x / np.linalg.norm(x, axis=-1, keepdims=True), rtol=1e-12)
    rms = L.RMSNormalization(axis=[1, 2], dtype="float64")
    rms.build(x.shape)
    rms.scale.assign(RNG.normal(size=(3, 4)))
    want = x / np.sqrt((x ** 2).mean(axis=(1, 2), keepdims=True) + 1e-6) * rms.scale.numpy()
    np.testing.assert_allclose(rms(x).numpy(), want, rtol=1e-12)
    td = L.TimeDistributed(L.Dense(3, dtype="float64"), dtype="float64")
    y = td(x).numpy()
    kernel, bias = (w.numpy() for w in td.layer.weights)
    np.testing.assert_allclose(y, x @ kernel + bias, rtol=1e-12)
    assert td.compute_output_shape((None, 3, 4)) == (None, 3, 3)


# -- gradients (float64 finite differences) --------------------------------------------------


class _SelfAttention(L.Layer):
    """MHA(q, v) as one-input layer over [q, v] for the gradient check."""

    def __init__(self, mha, **kwargs):
        super().__init__(**kwargs)
        self.mha = mha

    def call(self, inputs):
        return self.mha(inputs[0], inputs[1], use_causal_mask=True)


def test_mha_gradients_by_finite_differences():
    mha = L.MultiHeadAttention(2, 2, dtype="float64")
    wrapper = _SelfAttention(mha, dtype="float64")
    q, v = RNG.normal(size=(1, 3, 4)), RNG.normal(size=(1, 3, 4))
    wrapper([q, v])
    check_gradients(wrapper, [q, v], weights=[mha.weights[0], mha.weights[6]], rtol=1e-5,
                    atol=1e-7)


@pytest.mark.parametrize("make", [
    lambda: L.Attention(use_scale=True, score_mode="concat", dtype="float64"),
    lambda: L.AdditiveAttention(dtype="float64"),
])
def test_attention_gradients_by_finite_differences(make):
    layer = make()
    q, v = RNG.normal(size=(1, 3, 2)), RNG.normal(size=(1, 4, 2))
    layer([q, v])
    check_gradients(layer, [q, v], weights=layer.weights)


def test_einsum_dense_and_rms_gradients():
    layer = L.EinsumDense("abc,cde->abde", output_shape=(None, 2, 2), bias_axes="e",
                          dtype="float64")
    x = RNG.normal(size=(1, 2, 3))
    layer(x)
    check_gradients(layer, x, weights=layer.weights)
    rms = L.RMSNormalization(dtype="float64")
    rms(x)
    check_gradients(rms, x, weights=rms.weights)
    check_gradients(L.UnitNormalization(dtype="float64"), x)


# -- graphs, defaults, errors ---------------------------------------------------------------


def test_mha_in_tf_function_with_unknown_batch():
    layer = L.MultiHeadAttention(2, 3)
    x = RNG.normal(size=(2, 4, 6)).astype("float32")
    eager = layer(x, x, use_causal_mask=True).numpy()
    fn = tf.function(lambda t: layer(t, t, use_causal_mask=True),
                     input_signature=[tf.TensorSpec([None, None, 6], tf.float32)])
    np.testing.assert_allclose(fn(tf.constant(x)).numpy(), eager, rtol=1e-5, atol=1e-6)


def test_einsum_dense_default_initializer_uses_kernel_axes():
    layer = L.EinsumDense("abc,cde->abde", output_shape=(None, 16, 32))
    layer.build((None, 4, 64))
    kernel = layer.kernel.numpy()   # glorot over fan_in 64, fan_out 16 * 32
    limit = np.sqrt(6.0 / (64 + 16 * 32))
    assert np.abs(kernel).max() <= np.float32(limit)   # the bound as float32 (it rounds up)
    assert np.abs(kernel).max() > 0.95 * limit
    np.testing.assert_allclose(kernel.std(), limit / np.sqrt(3.0), rtol=0.05)


def test_errors_match_keras():
    with pytest.raises(ValueError, match="num_heads"):
        L.MultiHeadAttention(0, 2)
    with pytest.raises(ValueError, match="All dimensions of `value` and `key`"):
        L.MultiHeadAttention(2, 2)(np.zeros((1, 2, 3)), np.zeros((1, 4, 3)),
                                   np.zeros((1, 5, 3)))
    with pytest.raises(ValueError, match="must be called on a list of inputs"):
        L.Attention()(np.zeros((1, 2, 3)))
    with pytest.raises(ValueError, match="score_mode"):
        L.Attention(score_mode="add")
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        L.EinsumDense("ab->b", output_shape=3)(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        L.TimeDistributed(L.Dense(2))(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="TimeDistributed"):
        L.TimeDistributed(object())


def test_saved_under_keras_names():
    """GroupQueryAttention is written by its exported name (Keras' class is
    GroupedQueryAttention, its weights under grouped_query_attention/_query_dense ...), the
    legacy ThresholdedReLU under keras._legacy.layers, as Keras 3 reads them."""
    gqa = L.serialize(L.GroupQueryAttention(2, 2, 1))
    assert (gqa["module"], gqa["class_name"]) == ("keras.layers", "GroupQueryAttention")
    assert type(L.deserialize(gqa)).__name__ == "GroupedQueryAttention"
    relu = L.serialize(L.ThresholdedReLU(0.5))
    assert (relu["module"], relu["class_name"]) == ("keras._legacy.layers", "ThresholdedReLU")
    assert L.deserialize(relu).theta == 0.5

"""Keras 3 losses BinaryFocalCrossentropy, CategoricalFocalCrossentropy, CosineSimilarity,
Dice, Tversky, CategoricalGeneralizedCrossEntropy, Circle (functions and classes): values vs
Keras 3 (tests/fixtures/keras_losses_extra, made by generate.py there), float64 NumPy
references, finite-difference gradients, configs, lookup by name and errors."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.autodiff.tape import GradientTape
from ndflow.keras import loss_functions as losses
from ndflow.keras import loss_functions_extra as extra
from ndflow.runtime.function import function
from tests.keras.layer_checks import numeric_grad

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_losses_extra")
with open(os.path.join(HERE, "losses.json")) as _f:
    META = json.load(_f)
DATA = dict(np.load(os.path.join(HERE, "losses.npz")))


def _kwargs(d):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}


@pytest.mark.parametrize("key", sorted(META))
def test_values_and_config_match_keras(key):
    meta = META[key]
    cls = getattr(tf.keras.losses, meta["class_name"])
    fn = getattr(tf.keras.losses, meta["function"])
    y_true, y_pred = DATA[meta["y_true"]], DATA[meta["y_pred"]]
    kwargs = _kwargs(meta["kwargs"])

    def close(value, expected, what):
        np.testing.assert_allclose(np.asarray(value), expected, rtol=2e-5, atol=2e-6,
                                   err_msg=f"{key} {what}")

    close(fn(y_true, y_pred, **_kwargs(meta["fn_kwargs"])), DATA[f"{key}/fn"], "function")
    close(cls(**kwargs)(y_true, y_pred), DATA[f"{key}/default"], "default reduction")
    close(cls(reduction="sum", **kwargs)(y_true, y_pred), DATA[f"{key}/sum"], "sum")
    close(cls(reduction="none", **kwargs)(y_true, y_pred), DATA[f"{key}/none"], "none")
    if meta["weights"]:
        close(cls(**kwargs)(y_true, y_pred, sample_weight=DATA[meta["weights"]]),
              DATA[f"{key}/weighted"], "sample_weight")
    config = cls(**kwargs).get_config()
    assert json.loads(json.dumps(config, default=list)) == meta["config"]
    again = losses.deserialize(losses.serialize(cls(**kwargs)))
    assert type(again) is cls and again.get_config() == config


def test_circle_with_reference_embeddings():
    value = tf.keras.losses.circle(DATA["emb_labels"], DATA["emb"],
                                   ref_labels=DATA["ref_labels"], ref_embeddings=DATA["ref"])
    np.testing.assert_allclose(value.numpy(), DATA["circle_ref/fn"], rtol=2e-5, atol=2e-6)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _reference(name, t, p):
    """float64 NumPy forms of the Keras 3 formulas (default arguments)."""
    eps = 1e-7
    if name == "binary_focal_crossentropy":
        q = np.clip(p, eps, 1 - eps)
        bce = -(t * np.log(q) + (1 - t) * np.log(1 - q))
        p_t = t * p + (1 - t) * (1 - p)
        return np.mean((1 - p_t) ** 2 * bce, -1)
    if name == "categorical_focal_crossentropy":
        q = np.clip(p / p.sum(-1, keepdims=True), eps, 1 - eps)
        return np.sum(0.25 * (1 - q) ** 2 * -t * np.log(q), -1)
    if name == "cosine_similarity":
        def unit(x):
            return x / np.sqrt(np.maximum((x * x).sum(-1, keepdims=True), eps * eps))
        return -np.sum(unit(t) * unit(p), -1)
    if name == "dice":
        return 1 - 2 * np.sum(t * p) / (t.sum() + p.sum() + eps)
    if name == "tversky":
        tp, missed, extra_ = np.sum(t * p), np.sum(t * (1 - p)), np.sum((1 - t) * p)
        return 1 - tp / (tp + 0.5 * missed + 0.5 * extra_ + eps)
    raise AssertionError(name)


REFERENCE_CASES = ["binary_focal_crossentropy", "categorical_focal_crossentropy",
                   "cosine_similarity", "dice", "tversky"]


@pytest.mark.parametrize("name", REFERENCE_CASES)
def test_float64_values_and_gradients_by_finite_differences(name):
    rng = np.random.default_rng(1)
    t = (rng.uniform(size=(3, 4)) > 0.5).astype(np.float64)
    p = rng.uniform(0.05, 0.95, (3, 4))
    fn = getattr(tf.keras.losses, name)
    out = fn(t, p)
    assert out.dtype.name == "float64"
    np.testing.assert_allclose(out.numpy(), _reference(name, t, p), rtol=1e-12, atol=1e-12)
    x = tf.constant(p)
    with GradientTape() as tape:
        tape.watch(x)
        total = tf.reduce_sum(fn(t, x))
    grad = tape.gradient(total, x).numpy()
    expected = numeric_grad(lambda v: float(np.sum(_reference(name, t, v))), p)
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["circle", "categorical_generalized_cross_entropy"])
def test_gradients_of_label_losses_by_finite_differences(name):
    if name == "circle":
        labels, x0 = DATA["emb_labels"], DATA["emb"].astype(np.float64)
        kwargs = {"gamma": 4.0}
    else:
        labels, x0 = DATA["labels"], DATA["soft"].astype(np.float64)
        kwargs = {"q": 0.6}
    fn = getattr(tf.keras.losses, name)
    x = tf.constant(x0)
    with GradientTape() as tape:
        tape.watch(x)
        total = tf.reduce_sum(fn(labels, x, **kwargs))
    grad = tape.gradient(total, x).numpy()
    expected = numeric_grad(lambda v: float(tf.reduce_sum(fn(labels, v, **kwargs)).numpy()),
                            x0)
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-7)


def test_inside_tf_function_and_compile_by_name():
    key = "bfce_balanced"
    meta = META[key]
    loss = tf.keras.losses.BinaryFocalCrossentropy(**_kwargs(meta["kwargs"]))
    traced = function(lambda a, b: loss(a, b))
    np.testing.assert_allclose(traced(tf.constant(DATA["binary"]),
                                      tf.constant(DATA["logits"])).numpy(),
                               DATA[f"{key}/default"], rtol=2e-5)
    for name in ("binary_focal_crossentropy", "categorical_focal_crossentropy", "dice",
                 "tversky", "circle", "cosine_similarity",
                 "categorical_generalized_cross_entropy"):
        assert losses.get(name) is getattr(extra, name)
    assert isinstance(losses.get({"class_name": "Dice", "config": {"axis": None}}), extra.Dice)
    assert tf.keras.metrics.binary_focal_crossentropy is extra.binary_focal_crossentropy
    with pytest.raises(ValueError, match="Could not interpret metric"):   # as Keras 3.15
        tf.keras.metrics.get("binary_focal_crossentropy")
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(4, "sigmoid")])
    model.compile(optimizer="adamw", loss="binary_focal_crossentropy")
    history = model.fit(DATA["probs"], DATA["binary"], epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


def test_errors():
    with pytest.raises(ValueError, match=r"q must be in the interval \(0, 1\)"):
        tf.keras.losses.CategoricalGeneralizedCrossEntropy(q=1.5)
    with pytest.raises(ValueError, match="`axis` must be of type `int`"):
        tf.keras.losses.categorical_focal_crossentropy([[0.0, 1.0]], [[0.3, 0.7]], axis=True)
    with pytest.raises(TypeError, match="unexpected keyword"):
        tf.keras.losses.Dice(bogus=1)

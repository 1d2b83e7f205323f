"""Keras 3 optimizers AdamW, Adadelta, Adafactor, Adagrad, Adamax, Ftrl, Lamb, Lion, Muon,
Nadam, ScheduleFreeAdamW:
5-step trajectories and optimizer state vs Keras 3 (tests/fixtures/keras_optimizers, made by
generate.py there), float64 references, configs, errors and resuming a Keras 3 .keras file."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras import optimizers
from ndflow.keras.optimizers import schedules
from ndflow.ops import variables
from ndflow.runtime.function import function

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_optimizers")
with open(os.path.join(HERE, "trajectories.json")) as _f:
    META = json.load(_f)
DATA = dict(np.load(os.path.join(HERE, "trajectories.npz")))
NAMES = ("k", "b", "c", "t")
STEPS = 5


def _make(key):
    meta = META[key]
    kwargs = dict(meta["kwargs"])
    if isinstance(kwargs.get("learning_rate"), dict):
        kwargs["learning_rate"] = schedules.deserialize(kwargs["learning_rate"])
    return getattr(optimizers, meta["class_name"])(**kwargs)


def _variables():
    return [variables.Variable(DATA[f"init/{n}"], name=n) for n in NAMES]


def _grads(i):
    return [tf.constant(DATA[f"grad{i}/{n}"]) for n in NAMES]


def _check_step(key, i, vs):
    for n, v in zip(NAMES, vs):
        np.testing.assert_allclose(v.numpy(), DATA[f"{key}/step{i}/{n}"], rtol=2e-5,
                                   atol=2e-6, err_msg=f"{key} step {i} variable {n}")


@pytest.mark.parametrize("key", sorted(META))
def test_trajectory_state_and_config_match_keras(key):
    opt, vs = _make(key), _variables()
    for i in range(STEPS):
        opt.apply_gradients(zip(_grads(i), vs))
        _check_step(key, i, vs)
    expected = META[key]["variables"]
    assert len(opt.variables) == len(expected)
    for j, (var, (path, shape, dtype)) in enumerate(zip(opt.variables, expected)):
        assert var.shape.as_list() == shape and var.dtype.name == dtype, (j, path)
        if not path.endswith(("/b", "/iteration")) or dtype != "int32":
            np.testing.assert_allclose(var.numpy(), DATA[f"{key}/opt{j}"], rtol=2e-5,
                                       atol=2e-6, err_msg=f"{key} optimizer variable {path}")
    assert int(opt.iterations.numpy()) == STEPS
    mine, theirs = opt.get_config(), dict(META[key]["config"])
    assert set(mine) == set(theirs)
    for k, value in theirs.items():
        if k == "name":
            continue
        if k == "learning_rate" and isinstance(value, dict):
            assert mine[k]["class_name"] == value["class_name"]
            assert mine[k]["config"] == value["config"]
        elif isinstance(value, float):
            assert mine[k] == pytest.approx(value, rel=1e-6), k
        else:
            assert mine[k] == value, k
    again = type(opt).from_config(mine)
    assert again.get_config() == mine


@pytest.mark.parametrize("key", ["nadam", "adafactor", "ftrl", "lamb_wd", "muon",
                                 "schedule_free_adamw_warmup"])
def test_inside_tf_function_matches_eager_keras(key):
    opt, vs = _make(key), _variables()

    @function
    def step(g0, g1, g2, g3):
        opt.apply_gradients(zip([g0, g1, g2, g3], vs))

    for i in range(STEPS):
        step(*_grads(i))
        _check_step(key, i, vs)


def _float64_reference(kind, w, grads, lr):
    """Keras 3's Lion / Adamax / Adagrad / Adadelta rules in float64 with default betas."""
    m, u = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        if kind == "lion":
            w = w - lr * np.sign(0.9 * m + 0.1 * g)
            m = 0.99 * m + 0.01 * g
        elif kind == "adamax":
            m = m + (g - m) * 0.1
            u = np.maximum(0.999 * u, np.abs(g))
            w = w - lr * m / ((1 - 0.9 ** t) * (u + 1e-7))
        elif kind == "adagrad":
            m = (m if t > 1 else np.full_like(w, 0.1)) + g * g
            w = w - lr * g / np.sqrt(m + 1e-7)
        elif kind == "adadelta":
            m = 0.95 * m + 0.05 * g * g
            delta = -np.sqrt(u + 1e-7) * g / np.sqrt(m + 1e-7)
            u = 0.95 * u + 0.05 * delta * delta
            w = w + lr * delta
    return w


@pytest.mark.parametrize("kind", ["lion", "adamax", "adagrad", "adadelta"])
def test_float64_variables_follow_the_formulas(kind):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(6)
    grads = [rng.standard_normal(6) for _ in range(4)]
    cls = {"lion": optimizers.Lion, "adamax": optimizers.Adamax,
           "adagrad": optimizers.Adagrad, "adadelta": optimizers.Adadelta}[kind]
    opt = cls(learning_rate=0.25)   # exactly representable: lr is a float32 variable
    v = variables.Variable(w0)
    for g in grads:
        opt.apply_gradients([(tf.constant(g), v)])
    assert v.dtype.name == "float64"
    # Keras casts the default betas to float32 (0.9 != float32(0.9)): compare loosely
    tol = 1e-12 if kind in ("adagrad", "adadelta") else 1e-6
    np.testing.assert_allclose(v.numpy(), _float64_reference(kind, w0, grads, 0.25),
                               rtol=tol, atol=tol)


def test_get_serialize_and_names():
    for name in ("adamw", "adadelta", "adafactor", "adagrad", "adamax", "ftrl", "lamb",
                 "lion", "nadam", "muon", "schedulefreeadamw"):
        opt = optimizers.get(name)
        assert type(opt).__name__.lower() == name
        again = optimizers.deserialize(optimizers.serialize(opt))
        assert type(again) is type(opt)
    assert optimizers.AdamW().name.startswith("adam_w")
    assert tf.keras.optimizers.AdamW is optimizers.AdamW
    assert tf.optimizers.Lion is optimizers.Lion


def test_constructor_errors():
    with pytest.raises(ValueError, match="weight_decay=None"):
        optimizers.AdamW(weight_decay=None)
    with pytest.raises(ValueError, match="beta_1=1.5"):
        optimizers.Lion(beta_1=1.5)
    with pytest.raises(ValueError, match="learning_rate_power=0.5"):
        optimizers.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength=-1"):
        optimizers.Ftrl(l1_regularization_strength=-1)
    with pytest.raises(ValueError, match="not recognized"):
        optimizers.Nadam(bogus=1)


def test_keras_adamw_model_file_resumes_identically():
    saved = np.load(os.path.join(HERE, "adamw_resume.npz"))
    model = tf.keras.models.load_model(os.path.join(HERE, "adamw_model.keras"))
    opt = model.optimizer
    assert type(opt).__name__ == "AdamW" and opt.weight_decay == pytest.approx(0.05)
    assert int(opt.iterations.numpy()) == 3
    losses = [float(model.train_on_batch(saved["x"], saved["y"])) for _ in range(2)]
    np.testing.assert_allclose(losses, saved["losses"], rtol=1e-5)
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_allclose(w, saved[f"w{i}"], rtol=1e-5, atol=1e-6)


def _multi():
    o = optimizers
    return o.MultiOptimizer(o.OptimizerMap(o.Adam(0.01, name="adam"), {
        "k": o.SGD(0.1, momentum=0.9, name="sgd"), ".*c": o.Lion(0.01, name="lion")}),
        name="multi")


def test_multi_optimizer_matches_keras():
    with open(os.path.join(HERE, "multi_optimizer.json")) as f:
        meta = json.load(f)
    data = np.load(os.path.join(HERE, "multi_optimizer.npz"))
    opt, vs = _multi(), _variables()
    for i in range(STEPS):
        opt.apply_gradients(zip(_grads(i), vs))
        for n, v in zip(NAMES, vs):
            np.testing.assert_allclose(v.numpy(), data[f"step{i}/{n}"], rtol=2e-5, atol=2e-6)
    assert [[v.shape.as_list(), v.dtype.name] for v in opt.variables] == \
        [[shape, dtype] for _, shape, dtype in meta["variables"]]
    for j, v in enumerate(opt.variables):
        np.testing.assert_allclose(v.numpy(), data[f"opt{j}"], rtol=2e-5, atol=2e-6)
    assert [type(o).__name__ for o in opt.optimizers] == ["SGD", "Lion", "Adam"]
    serialized = optimizers.serialize(opt)
    theirs = meta["serialized"]
    assert serialized["class_name"] == theirs["class_name"] == "MultiOptimizer"
    inner = serialized["config"]["optimizer_map"]["config"]
    assert set(inner["optimizer_map"]) == {"k", ".*c"}
    assert inner["default_optimizer"]["class_name"] == "Adam"
    again = optimizers.deserialize(theirs)   # Keras 3's config
    assert isinstance(again, optimizers.MultiOptimizer) and again.name == "multi"
    # the map's order (sorted in the fixture's JSON), then the default
    assert [o.name for o in again.optimizers] == ["lion", "sgd", "adam"]
    with pytest.raises(AttributeError, match="sub-optimizers"):
        _ = opt.learning_rate
    with pytest.raises(ValueError, match="already exists"):
        opt._optimizer_map["k"] = optimizers.SGD()


@pytest.mark.parametrize("key", ["nadam", "adafactor", "lion_clip"])
def test_loss_scale_optimizer_unscales_for_the_new_optimizers(key):
    scale = 256.0
    opt = tf.keras.mixed_precision.LossScaleOptimizer(_make(key), initial_scale=scale)
    vs = _variables()
    for i in range(STEPS):
        opt.apply_gradients(zip([g * scale for g in _grads(i)], vs))
        _check_step(key, i, vs)

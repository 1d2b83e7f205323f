"""TF1's tf.compat.v1.distributions against TensorFlow 2.21 (tests/fixtures/tf_distributions_v1,
written by generate.py from the cases of configs.py there): every value method and statistic
of twelve distributions over broadcast parameter batches (float32 and float64), shapes,
registered KL pairs, seeded samples (where the random ops reproduce TF's streams), gradients
of log_prob and of a reparameterized sample, graph names, and TF's errors for bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_distributions_v1"
sys.path.insert(0, str(FIXTURES))
import configs  # noqa: E402

sys.path.remove(str(FIXTURES))

TF = json.loads((FIXTURES / "distributions_v1.json").read_text())
tfd = tf.compat.v1.distributions
CASES = configs.all_cases()


def _tol(dtype: str) -> dict:
    return {"rtol": 1e-10, "atol": 1e-12} if dtype == "float64" else {"rtol": 1e-5,
                                                                       "atol": 1e-6}


def _check(got, want: dict, what: str):
    got = np.asarray(got)
    assert list(got.shape) == want["shape"], what
    assert str(got.dtype) == want["dtype"], what
    np.testing.assert_allclose(got.astype(np.float64).ravel(), want["values"], equal_nan=True,
                               err_msg=what, **_tol(want["dtype"]))


def _expect(fn, want: dict, what: str):
    if "error" in want:
        if want["error"] == "NotImplementedError":
            with pytest.raises(NotImplementedError) as e:
                fn()
            assert str(e.value) == want["message"], what
        else:  # TF fails on these parameters (shapes it cannot broadcast, a dtype mix)
            with pytest.raises(Exception):  # noqa: B017 - any failure, as TF's
                fn()
        return
    _check(fn(), want, what)


@pytest.mark.parametrize("name", [c[0] for c in configs.CASES])
def test_methods_and_statistics_match_tensorflow(name):
    case, want = CASES[name], TF["cases"][name]
    d = configs.build(tf, tfd, case)
    x = tf.constant(case[3][0], dtype=case[3][1])
    assert d.batch_shape.as_list() == want["batch_shape"]
    assert d.event_shape.as_list() == want["event_shape"]
    assert d.batch_shape_tensor().numpy().tolist() == want["batch_shape_tensor"]
    assert d.event_shape_tensor().numpy().tolist() == want["event_shape_tensor"]
    assert d.dtype.name == want["dtype"] and d.name == want["name"]
    assert repr(d.reparameterization_type) == want["reparam"]
    assert sorted(d.parameters) == want["parameters"]
    assert str(d) == want["str"] and repr(d) == want["repr"]
    assert bool(d.is_scalar_batch()) == want["is_scalar_batch"]
    assert bool(d.is_scalar_event()) == want["is_scalar_event"]
    for m in configs.VALUE_METHODS:
        _expect(lambda m=m: getattr(d, m)(x), want[m], f"{name}.{m}")
    for m in configs.STATS:
        _expect(lambda m=m: getattr(d, m)(), want[m], f"{name}.{m}")


@pytest.mark.parametrize("pair", configs.KL_PAIRS, ids=lambda p: "|".join(p))
def test_registered_kl_matches_tensorflow(pair):
    a, b = (configs.build(tf, tfd, CASES[n]) for n in pair)
    want = TF["kl"]["|".join(pair)]
    _check(tfd.kl_divergence(a, b), want["kl"], "kl_divergence")
    _check(a.kl_divergence(b), want["method"], "Distribution.kl_divergence")
    _expect(lambda: a.cross_entropy(b), want["cross_entropy"], "cross_entropy")


def test_kl_lookup_uses_the_nearest_registered_ancestors():
    class MyNormal(tfd.Normal):
        pass

    a, b = MyNormal(0.0, 1.0), tfd.Normal(1.0, 2.0)
    np.testing.assert_allclose(tfd.kl_divergence(a, b), tfd.kl_divergence(tfd.Normal(0.0, 1.0),
                                                                           b))

    @tfd.RegisterKL(MyNormal, tfd.Normal)
    def _kl(x, y, name=None):
        return tf.constant(42.0)

    assert float(tfd.kl_divergence(a, b)) == 42.0


# Samples whose random ops reproduce TensorFlow's streams (RandomStandardNormal,
# RandomUniform); the others (gamma and multinomial draws) are tested by their moments.
EXACT_SAMPLES = {"normal_f32", "normal_f64_tails", "uniform", "uniform_f64", "bernoulli_probs",
                 "exponential", "laplace"}


@pytest.mark.parametrize("entry", TF["samples"], ids=lambda e: e["case"])
def test_seeded_samples_match_tensorflow(entry):
    tf.random.set_seed(configs.GLOBAL_SEED)
    try:
        d = configs.build(tf, tfd, CASES[entry["case"]])
        got = d.sample(entry["shape"], seed=entry["seed"])
    finally:
        tf.random.set_seed(None)
    want = entry["sample"]
    assert list(got.shape) == want["shape"] and str(got.dtype.name) == want["dtype"]
    if entry["case"] in EXACT_SAMPLES:
        _check(got, want, entry["case"])


@pytest.mark.parametrize("name,shape", [
    ("gamma", [4000]), ("beta", [4000]), ("student_t_f64", [4000]), ("dirichlet", [3000]),
    ("categorical_logits", [4000]), ("multinomial", [2000]), ("dirichlet_multinomial_f64", [2000]),
    ("exponential", [4000]), ("laplace_f64", [4000]), ("bernoulli_logits_f64", [4000]),
])
def test_sample_moments(name, shape):
    d = configs.build(tf, tfd, CASES[name])
    s = d.sample(shape, seed=17)
    assert s.shape.as_list() == shape + d.batch_shape.as_list() + d.event_shape.as_list()
    s = np.asarray(s, np.float64)
    if name == "categorical_logits":
        freq = np.stack([(s == k).mean(0) for k in range(3)], -1)
        np.testing.assert_allclose(freq, np.asarray(d.probs), atol=0.03)
        return
    n = shape[0]
    mean = np.asarray(d.mean(), np.float64)
    if name == "student_t_f64":  # df 3: heavy tails (and TF's float64 variance fails)
        np.testing.assert_allclose(s.mean(0), mean, atol=0.2)
        return
    var = np.asarray(d.variance(), np.float64)
    np.testing.assert_allclose(s.mean(0), mean, atol=5 * np.sqrt(var.max() / n) + 1e-6)
    np.testing.assert_allclose(s.var(0), var, rtol=0.15, atol=0.02)
    if name in ("multinomial", "dirichlet_multinomial_f64"):
        total = np.asarray(d.total_count, np.float64)
        np.testing.assert_array_equal(s.sum(-1), np.broadcast_to(total, s.shape[:-1]))


@pytest.mark.parametrize("name", configs.GRAD_CASES)
def test_log_prob_gradients_match_tensorflow(name):
    case, want = CASES[name], TF["grads"][name]
    variables = {k: tf.Variable(v, dtype=dt) for k, (v, dt) in case[2].items()}
    with tf.GradientTape() as tape:
        d = getattr(tfd, case[1])(**variables)
        lp = tf.reduce_sum(d.log_prob(tf.constant(case[3][0], dtype=case[3][1])))
    got = tape.gradient(lp, variables)
    for k, w in want.items():
        if w is None:
            assert got[k] is None, k
        else:
            np.testing.assert_allclose(np.asarray(got[k]).ravel(), w["values"], rtol=1e-8,
                                       atol=1e-10, err_msg=f"{name} d/d{k}")


def test_reparameterized_sample_gradient_matches_tensorflow_and_differences():
    loc, scale = tf.Variable([0.5, -1.0]), tf.Variable([1.0, 2.0])

    def loss_at(loc_v, scale_v):
        tf.random.set_seed(3)
        return float(configs.reparameterized_loss(tf, tfd, tf.constant(loc_v),
                                                  tf.constant(scale_v)))

    tf.random.set_seed(3)
    try:
        with tf.GradientTape() as tape:
            loss = configs.reparameterized_loss(tf, tfd, loc, scale)
        g_loc, g_scale = tape.gradient(loss, [loc, scale])
        want = TF["reparameterized"]
        np.testing.assert_allclose(float(loss), want["loss"], rtol=1e-5)
        np.testing.assert_allclose(g_loc, want["loc"]["values"], rtol=1e-5)
        np.testing.assert_allclose(g_scale, want["scale"]["values"], rtol=1e-5)
        eps = 1e-2
        base_loc, base_scale = np.array([0.5, -1.0], np.float32), np.array([1.0, 2.0],
                                                                            np.float32)
        for i in range(2):
            for base, grad, is_loc in ((base_loc, g_loc, True), (base_scale, g_scale, False)):
                up, down = base.copy(), base.copy()
                up[i] += eps
                down[i] -= eps
                args = [(up, base_scale), (down, base_scale)] if is_loc else \
                    [(base_loc, up), (base_loc, down)]
                fd = (loss_at(*args[0]) - loss_at(*args[1])) / (2 * eps)
                np.testing.assert_allclose(float(np.asarray(grad)[i]), fd, rtol=2e-2, atol=1e-2)
    finally:
        tf.random.set_seed(None)


def test_reparameterized_normal_trains_in_a_tf_function():
    loc = tf.Variable(0.0)
    log_scale = tf.Variable(0.0)
    opt = tf.keras.optimizers.SGD(0.05)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            d = tfd.Normal(loc, tf.exp(log_scale))
            assert d.reparameterization_type == tfd.FULLY_REPARAMETERIZED
            x = d.sample(256, seed=1)
            loss = tf.reduce_mean(tf.square(x - 3.0))
        grads = tape.gradient(loss, [loc, log_scale])
        opt.apply_gradients(zip(grads, [loc, log_scale]))
        return loss, grads[0]

    first_loss, first_grad = step()
    assert float(first_grad) < -1.0  # d/dloc of E[(x - 3)^2] at loc 0 is about -6
    for _ in range(60):
        loss, _ = step()
    assert float(loss) < float(first_loss) / 4
    assert abs(float(loc.numpy()) - 3.0) < 0.3


def test_graph_names_and_static_shapes_match_tensorflow():
    with tf.Graph().as_default():
        got = configs.graph_names(tf, tfd)
    want = TF["graph"]
    assert got["names"] == want["names"]
    assert got["static"] == want["static"]
    assert got["tensors"] == want["tensors"]


ERRORS = {name: (thunk, key) for name, thunk, key in configs.error_calls(tf, tfd)}
_TYPES = {"InvalidArgumentError": InvalidArgumentError, "ValueError": ValueError,
          "TypeError": TypeError, "NotImplementedError": NotImplementedError}


@pytest.mark.parametrize("name", sorted(TF["errors"]))
def test_bad_input_raises_tensorflows_errors(name):
    thunk, key = ERRORS[name]
    want = TF["errors"][name]
    with pytest.raises(_TYPES[want["type"]]) as e:
        thunk()
    message = getattr(e.value, "message", None) or str(e.value)
    assert key in message
    if want["type"] in ("ValueError", "TypeError", "NotImplementedError") and \
            name not in ("register_twice", "int_loc"):
        assert message == want["message"]


@pytest.mark.parametrize("cls", configs.PARAM_SHAPE_CLASSES)
def test_param_static_shapes_match_tensorflow(cls):
    want = TF["param_static_shapes"][cls]
    if "error" in want:
        with pytest.raises(NotImplementedError, match=want["error"]):
            getattr(tfd, cls).param_static_shapes([3, 2])
        return
    got = getattr(tfd, cls).param_static_shapes([3, 2])
    assert {k: v.as_list() for k, v in got.items()} == want


def test_public_names_and_reparameterization_types():
    assert tfd.Normal(0.0, 1.0).reparameterization_type is tfd.FULLY_REPARAMETERIZED
    assert tfd.Bernoulli(probs=0.5).reparameterization_type is tfd.NOT_REPARAMETERIZED
    assert tfd.FULLY_REPARAMETERIZED != tfd.NOT_REPARAMETERIZED
    assert isinstance(tfd.FULLY_REPARAMETERIZED, tfd.ReparameterizationType)
    assert issubclass(tfd.Exponential, tfd.Gamma)
    n = tfd.Normal(loc=1.0, scale=2.0, validate_args=True, allow_nan_stats=False)
    assert n.validate_args and not n.allow_nan_stats
    assert set(n.parameters) == {"loc", "scale", "validate_args", "allow_nan_stats", "name"}
    assert float(n.copy(loc=5.0).mean()) == 5.0

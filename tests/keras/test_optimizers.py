"""Keras 3 optimizers (`tf.keras.optimizers.SGD/Adam/RMSprop`): exact updates, state, config."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow  # noqa: F401 - registers ops and kernels
import ndflow as tf
from ndflow.autodiff.tape import GradientTape
from ndflow.core import dtypes
from ndflow.core.tensor import EagerTensor
from ndflow.keras import optimizers
from ndflow.keras.optimizers import schedules
from ndflow.ops import variables
from ndflow.ops.apply import convert_to_tensor
from ndflow.runtime.function import function
from tests.train import reference as R

W0 = np.array([1.0, -2.0, 0.5])
C = np.array([0.5, 1.5, -3.0])   # loss = 0.5 * sum(C * w^2)  ->  grad = C * w
STEPS = 4
LR = float(np.float32(0.01))     # the float32 learning-rate variable, cast to float64
# Keras's `ops.cast(0.9, float64)` goes through a float32 tensor (SGD momentum, Adam's beta
# powers); Python operands of tensor arithmetic (1 - beta_1, epsilon, rho) stay exact.
F09, F0999 = float(np.float32(0.9)), float(np.float32(0.999))


def _grad(w):
    return C * w


def _loss(w):
    return tf.reduce_sum(w * w * C) * 0.5


def _reference(kind: str, steps: int = STEPS, lr_fn=lambda t: LR):
    """Keras 3's update rules in float64 (t = iterations before the step); checked once
    against TF 2.21's `tf.keras.optimizers` to 1e-16."""
    w = W0.copy()
    s1, s2, s3 = np.zeros(3), np.zeros(3), np.zeros(3)
    for t in range(steps):
        g, lr = _grad(w), lr_fn(t)
        if kind == "sgd":
            w = R.gradient_descent(w, lr, g)
        elif kind in ("momentum", "nesterov"):
            w, s1 = R.keras_momentum(w, s1, lr, g, F09, kind == "nesterov")
        elif kind == "adam":
            w, s1, s2 = R.adam(w, s1, s2, F09 ** (t + 1), F0999 ** (t + 1), lr, 0.9, 0.999,
                               1e-7, g)
        elif kind == "amsgrad":
            w, s1, s2, s3 = R.adam_amsgrad(w, s1, s2, s3, F09 ** (t + 1), F0999 ** (t + 1),
                                           lr, 0.9, 0.999, 1e-7, g)
        elif kind == "rmsprop":
            w, s1, _ = R.rms_prop(w, s1, np.zeros(3), lr, 0.9, 0.0, 1e-7, g)
        elif kind == "rmsprop_momentum":
            w, s1, s2 = R.rms_prop(w, s1, s2, lr, 0.9, 0.5, 1e-7, g)
        elif kind == "rmsprop_centered":
            w, s3, s1, _ = R.centered_rms_prop(w, s3, s1, np.zeros(3), lr, 0.9, 0.0, 1e-7, g)
        elif kind == "rmsprop_centered_momentum":
            w, s3, s1, s2 = R.centered_rms_prop(w, s3, s1, s2, lr, 0.9, 0.5, 1e-7, g)
    return w


MAKERS = {
    "sgd": lambda lr=0.01: optimizers.SGD(lr),
    "momentum": lambda lr=0.01: optimizers.SGD(lr, momentum=0.9),
    "nesterov": lambda lr=0.01: optimizers.SGD(lr, momentum=0.9, nesterov=True),
    "adam": lambda lr=0.01: optimizers.Adam(lr),
    "amsgrad": lambda lr=0.01: optimizers.Adam(lr, amsgrad=True),
    "rmsprop": lambda lr=0.01: optimizers.RMSprop(lr),
    "rmsprop_momentum": lambda lr=0.01: optimizers.RMSprop(lr, momentum=0.5),
    "rmsprop_centered": lambda lr=0.01: optimizers.RMSprop(lr, centered=True),
    "rmsprop_centered_momentum": lambda lr=0.01: optimizers.RMSprop(lr, momentum=0.5,
                                                                    centered=True),
}


@pytest.mark.parametrize("kind", list(MAKERS))
def test_eager_updates_match_keras_formulas(kind):
    w = variables.Variable(W0, name="w")
    opt = MAKERS[kind]()
    for t in range(STEPS):
        result = opt.apply_gradients([(convert_to_tensor(_grad(w.numpy())), w)])
        assert result is opt.iterations
        assert int(opt.iterations.numpy()) == t + 1
    np.testing.assert_allclose(w.numpy(), _reference(kind), rtol=1e-12, atol=1e-14)
    assert opt.iterations.dtype is dtypes.int64


@pytest.mark.parametrize("kind", ["sgd", "nesterov", "adam", "rmsprop_centered_momentum"])
def test_inside_tf_function(kind):
    w = variables.Variable(W0, name="w")
    opt = MAKERS[kind]()

    @function
    def step():
        with GradientTape() as tape:
            loss = _loss(w)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        return opt.iterations.read_value()

    for t in range(STEPS):
        assert int(step().numpy()) == t + 1
    # a first trace that makes slot variables is followed by one that creates none (TF's
    # rule); plain SGD has no slots
    assert step.experimental_get_tracing_count() == (1 if kind == "sgd" else 2)
    np.testing.assert_allclose(w.numpy(), _reference(kind), rtol=1e-12, atol=1e-14)
    # the slots were created outside the function (init_scope): eager variables it captures
    assert len(opt.variables) > 1
    for v in opt.variables:
        assert isinstance(v.handle, EagerTensor)


def test_minimize_with_callable_and_with_tape():
    w = variables.Variable(W0, name="w")
    opt = optimizers.SGD(0.01)
    opt.minimize(lambda: _loss(w), [w])
    with GradientTape() as tape:
        loss = _loss(w)
    opt.minimize(loss, [w], tape=tape)
    opt.minimize(lambda: _loss(w), lambda: [w])
    np.testing.assert_allclose(w.numpy(), _reference("sgd", 3), rtol=1e-12)
    assert int(opt.iterations.numpy()) == 3
    with pytest.raises(ValueError, match="`tape` is required when a `Tensor` loss is passed"):
        opt.minimize(_loss(w), [w])


def test_variables_names_and_order():
    w = variables.Variable(W0, name="w")
    b = variables.Variable(np.float64(1.0), name="b")
    opt = optimizers.Adam(0.01, amsgrad=True, name="adam")
    # Keras variables (TF 2.21's names and paths): the name is the path's last part
    assert [v.name for v in opt.variables] == ["iteration", "learning_rate"]
    assert [v.path for v in opt.variables] == ["adam/iteration", "adam/learning_rate"]
    opt.apply_gradients([(convert_to_tensor(W0), w), (convert_to_tensor(1.0, dtypes.float64),
                                                      b)])
    assert [v.path for v in opt.variables] == [
        "adam/iteration", "adam/learning_rate", "adam/w_0_momentum",
        "adam/w_0_velocity", "adam/b_0_momentum", "adam/b_0_velocity",
        "adam/w_0_velocity_hat", "adam/b_0_velocity_hat"]
    slot = opt.variables[2]
    assert slot.dtype is dtypes.float64 and slot.shape == w.shape and not slot.trainable
    rms = optimizers.RMSprop(centered=True, momentum=0.5, name="rms")
    rms.apply_gradients([(convert_to_tensor(W0), w)])
    assert [v.path for v in rms.variables][2:] == [
        "rms/w_0_velocity", "rms/w_0_momentum", "rms/w_0_average_gradient"]
    assert [v.path for v in optimizers.SGD(0.1, name="s").variables] == [
        "s/iteration", "s/learning_rate"]
    assert repr(optimizers.SGD(0.5, name="s2").learning_rate) == \
        "<Variable path=s2/learning_rate, shape=(), dtype=float32, value=0.5>"


def test_default_names_are_unique_snake_case():
    a, b = optimizers.RMSprop(), optimizers.RMSprop()
    assert a.name.startswith("rm_sprop") and b.name.startswith("rm_sprop") and a.name != b.name


def test_learning_rate_variable_and_setter():
    opt = optimizers.SGD(0.5)
    assert opt.learning_rate.dtype is dtypes.float32
    assert float(opt.learning_rate.numpy()) == 0.5
    opt.learning_rate = 0.25
    assert float(opt.learning_rate.numpy()) == 0.25
    w = variables.Variable(np.array([1.0]), name="w")
    opt.apply_gradients([(convert_to_tensor(np.array([1.0])), w)])
    np.testing.assert_allclose(w.numpy(), [0.75])


@pytest.mark.parametrize("staircase", [False, True])
def test_schedule_is_evaluated_at_iterations(staircase):
    sched = schedules.ExponentialDecay(0.1, 2, 0.5, staircase=staircase)
    opt = optimizers.SGD(sched)
    assert [v.path for v in opt.variables] == [f"{opt.name}/iteration"]
    w = variables.Variable(W0, name="w")
    for _ in range(STEPS):
        opt.apply_gradients([(convert_to_tensor(_grad(w.numpy())), w)])

    def lr(t):
        p = t // 2 if staircase else t / 2
        return float(np.float32(0.1) * np.float32(0.5) ** np.float32(p))

    np.testing.assert_allclose(w.numpy(), _reference("sgd", lr_fn=lr), rtol=1e-6)
    np.testing.assert_allclose(float(opt.learning_rate.numpy()), lr(STEPS), rtol=1e-6)
    with pytest.raises(TypeError, match="not settable"):
        opt.learning_rate = 0.1


def test_piecewise_schedule_and_callable_learning_rate():
    opt = optimizers.SGD(schedules.PiecewiseConstantDecay([1], [1.0, 0.5]))
    w = variables.Variable(np.array([0.0]), name="w")
    for _ in range(3):
        opt.apply_gradients([(convert_to_tensor(np.array([1.0])), w)])
    np.testing.assert_allclose(w.numpy(), [-(1.0 + 1.0 + 0.5)])
    opt2 = optimizers.SGD(lambda: 0.25)
    opt2.apply_gradients([(convert_to_tensor(np.array([1.0])), w)])
    np.testing.assert_allclose(w.numpy(), [-2.75])


def test_get_config_and_from_config():
    opt = optimizers.Adam(0.1, name="adam_cfg")
    assert opt.get_config() == {
        "name": "adam_cfg", "learning_rate": float(np.float32(0.1)), "weight_decay": None,
        "clipnorm": None, "global_clipnorm": None, "clipvalue": None, "use_ema": False,
        "ema_momentum": 0.99, "ema_overwrite_frequency": None, "loss_scale_factor": None,
        "gradient_accumulation_steps": None, "beta_1": 0.9, "beta_2": 0.999,
        "epsilon": 1e-07, "amsgrad": False}
    sgd = optimizers.SGD(schedules.ExponentialDecay(0.1, 10, 0.5), momentum=0.9)
    config = sgd.get_config()
    assert config["learning_rate"]["class_name"] == "ExponentialDecay"
    assert (config["momentum"], config["nesterov"]) == (0.9, False)
    again = optimizers.SGD.from_config(config)
    assert isinstance(again._learning_rate, schedules.ExponentialDecay)
    restored = optimizers.deserialize(optimizers.serialize(optimizers.RMSprop(0.5, rho=0.8)))
    assert isinstance(restored, optimizers.RMSprop) and restored.rho == 0.8
    assert isinstance(optimizers.get("adam"), optimizers.Adam)
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        optimizers.get("nope")


def test_errors():
    w = variables.Variable(W0, name="w")
    other = variables.Variable(W0, name="other")
    opt = optimizers.SGD(0.1)
    with pytest.raises(ValueError, match="No gradients provided for any variable."):
        opt.apply_gradients([(None, w)])
    opt.apply_gradients([(convert_to_tensor(W0), w)])
    with pytest.raises(ValueError, match="Unknown variable"):
        opt.apply_gradients([(convert_to_tensor(W0), other)])
    with pytest.raises(ValueError, match="Argument `learning_rate` should be float"):
        optimizers.SGD(1)
    with pytest.raises(ValueError, match="`momentum` must be a float between"):
        optimizers.SGD(0.1, momentum=2.0)
    with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue`"):
        optimizers.SGD(0.1, clipnorm=1.0, clipvalue=1.0)
    with pytest.raises(ValueError, match="Argument\\(s\\) not recognized"):
        optimizers.Adam(0.1, bogus=1)
    with pytest.raises(TypeError, match="tf.Variable"):
        optimizers.SGD(0.1).apply_gradients([(convert_to_tensor(W0), convert_to_tensor(W0))])


def test_missing_gradient_is_skipped_with_a_warning():
    w = variables.Variable(W0, name="w")
    other = variables.Variable(W0, name="other")
    opt = optimizers.SGD(0.01)
    with pytest.warns(UserWarning, match="Gradients do not exist for variables"):
        opt.apply_gradients([(convert_to_tensor(_grad(W0)), w), (None, other)])
    np.testing.assert_allclose(w.numpy(), _reference("sgd", 1), rtol=1e-12)
    np.testing.assert_array_equal(other.numpy(), W0)


def test_gradient_clipping_and_weight_decay():
    g = np.array([3.0, 4.0, 0.0])  # norm 5
    for kwargs, expected_g in [({"clipnorm": 1.0}, g / 5), ({"clipvalue": 2.0}, [2.0, 2.0, 0]),
                               ({"global_clipnorm": 2.5}, g / 2)]:
        w = variables.Variable(np.zeros(3), name="w")
        optimizers.SGD(1.0, **kwargs).apply_gradients([(convert_to_tensor(g), w)])
        np.testing.assert_allclose(w.numpy(), -np.asarray(expected_g), rtol=1e-6)
    w = variables.Variable(np.array([2.0]), name="w")
    optimizers.SGD(0.5, weight_decay=0.1).apply_gradients([(convert_to_tensor([1.0]), w)])
    np.testing.assert_allclose(w.numpy(), [2.0 - 2.0 * 0.1 * 0.5 - 0.5], rtol=1e-7)

"""`tf.keras.mixed_precision.LossScaleOptimizer` (Keras 2's contract, and Keras 3's scale_loss
protocol) and `Policy`: scaling,
skipped steps that still count `iterations` (eager and tf.function), properties, errors."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes
from ndflow.keras.mixed_precision import LossScaleOptimizer, Policy
from ndflow.ops import variables

W0 = np.array([1.0, -2.0, 0.5], np.float32)
NAN, INF = float("nan"), float("inf")
FACTORS = [1.0, NAN, 1.0, INF, 1.0, 1.0]
SCALES = [4.0, 2.0, 2.0, 1.0, 1.0, 2.0]     # initial 4, growth every 2 finite steps


def _loss(w, f):
    return tf.reduce_sum(w * w) * f


def _reference(factors):
    """The inner optimizer alone: finite steps applied, `iterations` set as the wrapper sets
    it (every step counts, so Adam's bias correction sees the skipped steps)."""
    w = variables.Variable(W0)
    opt = tf.keras.optimizers.Adam(0.1)
    out = []
    for f in factors:
        if np.isfinite(f):
            with tf.GradientTape() as tape:
                loss = _loss(w, f)
            opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        else:
            opt.iterations.assign_add(1)
        out.append(w.numpy().copy())
    return out


def _run(step_fn, opt, w):
    got = []
    for f in FACTORS:
        step_fn(tf.constant(f))
        got.append((w.numpy().copy(), int(opt.iterations.numpy()),
                    float(opt.loss_scale.numpy()), int(opt.dynamic_counter.numpy())))
    return got


def _check(got):
    ref = _reference(FACTORS)
    for i, ((w, iterations, scale, _), w_ref, s) in enumerate(zip(got, ref, SCALES)):
        np.testing.assert_array_equal(w, w_ref)
        assert iterations == i + 1                    # skipped steps count too
        assert scale == s
    assert [c for *_, c in got] == [1, 0, 1, 0, 1, 0]


def _tape_step(opt, w):
    def step(f):
        with tf.GradientTape() as tape:
            scaled = opt.get_scaled_loss(_loss(w, f))
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w]))
        opt.apply_gradients(zip(grads, [w]))
    return step


def test_skipped_steps_eager():
    w = variables.Variable(W0)
    opt = LossScaleOptimizer(tf.keras.optimizers.Adam(0.1), initial_scale=4,
                             dynamic_growth_steps=2)
    _check(_run(_tape_step(opt, w), opt, w))


def test_skipped_steps_tf_function():
    w = variables.Variable(W0)
    opt = LossScaleOptimizer(tf.keras.optimizers.Adam(0.1), initial_scale=4,
                             dynamic_growth_steps=2)
    got = _run(tf.function(_tape_step(opt, w)), opt, w)
    _check(got)
    m, v = opt.inner_optimizer.variables[2:]
    assert np.all(np.isfinite(m.numpy())) and np.all(np.isfinite(v.numpy()))


def _keras3_step(opt, w):
    """Keras 3's protocol (TF 2.21's tf.keras): scale_loss, then the scaled gradients go to
    apply_gradients as they are and the step unscales them."""
    def step(f):
        with tf.GradientTape() as tape:
            scaled = opt.scale_loss(_loss(w, f))
        opt.apply_gradients(zip(tape.gradient(scaled, [w]), [w]))
    return step


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf_function"])
def test_keras3_scale_loss_protocol(compiled, capfd):
    w = variables.Variable(W0)
    opt = LossScaleOptimizer(tf.keras.optimizers.Adam(0.1), initial_scale=4,
                             dynamic_growth_steps=2)
    assert float(opt.scale_loss(tf.constant(2.0)).numpy()) == 8.0
    assert float(opt.dynamic_scale.numpy()) == 4.0
    step = _keras3_step(opt, w)
    _check(_run(tf.function(step) if compiled else step, opt, w))
    assert "You forgot" not in capfd.readouterr().err   # Keras 3 has nothing to warn about


def test_minimize_scales_and_unscales():
    w = variables.Variable(W0)
    opt = LossScaleOptimizer(tf.keras.optimizers.SGD(0.25))
    opt.minimize(lambda: tf.reduce_sum(w * w), var_list=[w])
    np.testing.assert_allclose(w.numpy(), W0 - 0.25 * 2 * W0, rtol=1e-6)
    assert int(opt.dynamic_counter.numpy()) == 1
    pairs = opt.compute_gradients(lambda: tf.reduce_sum(w * 3.0), [w])
    np.testing.assert_allclose(pairs[0][0].numpy(), [3.0, 3.0, 3.0])


def test_scaled_loss_and_unscaled_gradients():
    opt = LossScaleOptimizer(tf.keras.optimizers.SGD(), initial_scale=8)
    assert float(opt.get_scaled_loss(tf.constant(2.0)).numpy()) == 16.0
    half = opt.get_scaled_loss(tf.constant(2.0, dtype=dtypes.float16))
    assert half.dtype is dtypes.float16 and float(half.numpy()) == 16.0
    fn = opt.get_scaled_loss(lambda: tf.constant(3.0))
    assert float(fn().numpy()) == 24.0
    grads = opt.get_unscaled_gradients([tf.constant([8.0, 16.0]), None])
    np.testing.assert_array_equal(grads[0].numpy(), [1.0, 2.0])
    assert grads[1] is None


def test_fixed_scale():
    w = variables.Variable(W0)
    opt = LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), dynamic=False, initial_scale=16)
    assert not opt.dynamic and opt.initial_scale == 16.0
    assert opt.dynamic_counter is None and opt.dynamic_growth_steps is None
    assert float(opt.loss_scale.numpy()) == 16.0
    opt.apply_gradients([(tf.constant([NAN, 0.0, 0.0]), w)])   # never skipped
    assert np.isnan(w.numpy()[0]) and int(opt.iterations.numpy()) == 1


def test_properties_and_config():
    inner = tf.keras.optimizers.Adam(0.01)
    opt = LossScaleOptimizer(inner)
    assert opt.inner_optimizer is inner and opt.iterations is inner.iterations
    assert opt.dynamic and opt.initial_scale == 2 ** 15 and opt.dynamic_growth_steps == 2000
    assert opt.dynamic_counter.dtype is dtypes.int64 and opt.dynamic_counter.name == \
        "good_steps:0"
    assert opt.loss_scale.dtype is dtypes.float32
    assert float(opt.learning_rate.numpy()) == pytest.approx(0.01)
    opt.learning_rate = 0.5
    assert float(inner.learning_rate.numpy()) == 0.5
    assert isinstance(opt, tf.keras.optimizers.Optimizer)
    config = opt.get_config()
    assert config["dynamic"] is True and config["initial_scale"] == 2 ** 15
    clone = LossScaleOptimizer.from_config(config)
    assert type(clone.inner_optimizer).__name__ == "Adam" and clone.dynamic_growth_steps == 2000


def test_warns_when_scaling_was_skipped(capfd):
    w = variables.Variable(W0)
    opt = LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    opt.apply_gradients([(tf.constant([1.0, 1.0, 1.0]), w)])
    assert "You forgot to call LossScaleOptimizer.get_scaled_loss() and" in \
        capfd.readouterr().err
    opt.get_scaled_loss(tf.constant(1.0))
    opt.apply_gradients([(tf.constant([1.0, 1.0, 1.0]), w)])
    err = capfd.readouterr().err
    assert "You forgot to call LossScaleOptimizer.get_unscaled_gradients()" in err
    opt.get_unscaled_gradients([tf.constant(1.0)])
    opt.apply_gradients([(tf.constant([1.0, 1.0, 1.0]), w)])
    assert "You forgot" not in capfd.readouterr().err


def test_errors():
    with pytest.raises(TypeError, match=r'^"inner_optimizer" must be an instance of '
                                        r"`tf.keras.optimizers.Optimizer` or "
                                        r"`tf.keras.optimizers.experimental.Optimizer`, but "
                                        r"got: 3.$"):
        LossScaleOptimizer(3)
    with pytest.raises(TypeError, match=r'must be an instance of .*GradientDescent'):
        LossScaleOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1))
    with pytest.raises(TypeError, match=r'^"dynamic" argument to LossScaleOptimizer.__init__ '
                                        r"must be a bool, but got: 'dynamic'$"):
        LossScaleOptimizer(tf.keras.optimizers.SGD(), "dynamic")
    with pytest.raises(TypeError, match=r"must be a bool, but got: 128$"):
        LossScaleOptimizer(tf.keras.optimizers.SGD(), 128)
    wrapped = LossScaleOptimizer(tf.keras.optimizers.SGD())
    with pytest.raises(TypeError, match="^LossScaleOptimizer cannot wrap another "
                                        "LossScaleOptimizer, but got: "):
        LossScaleOptimizer(wrapped)
    with pytest.raises(ValueError, match='^"inner_optimizer" is already wrapped by a '
                                         "LossScaleOptimizer. An optimizer can only be wrapped "
                                         "by a single LossScaleOptimizer$"):
        LossScaleOptimizer(wrapped.inner_optimizer)
    with pytest.raises(ValueError, match='^"initial_scale" must be specified if "dynamic" is '
                                         "False$"):
        LossScaleOptimizer(tf.keras.optimizers.SGD(), dynamic=False)
    with pytest.raises(ValueError, match='^"dynamic_growth_steps" must be None if "dynamic" '
                                         "is False, but got: 10$"):
        LossScaleOptimizer(tf.keras.optimizers.SGD(), dynamic=False, initial_scale=2,
                           dynamic_growth_steps=10)
    opt = LossScaleOptimizer(tf.keras.optimizers.SGD())
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, variables.Variable(1.0))])


def test_policy():
    p = Policy("mixed_bfloat16")
    assert (p.name, p.compute_dtype, p.variable_dtype) == ("mixed_bfloat16", "bfloat16",
                                                           "float32")
    assert repr(p) == '<DTypePolicy "mixed_bfloat16">'
    assert Policy("mixed_float16").compute_dtype == "float16"
    assert Policy("float64").compute_dtype == Policy("float64").variable_dtype == "float64"
    assert p == Policy.from_config(p.get_config())
    assert tf.keras.mixed_precision.Policy is tf.keras.mixed_precision.DTypePolicy
    with pytest.raises(ValueError, match="^Cannot convert 'foo' to a mixed precision "
                                         "DTypePolicy. Valid policies include"):
        Policy("foo")
    with pytest.raises(TypeError, match="^'name' must be a string, such as 'mixed_float16'. "
                                        "Received: name=3"):
        Policy(3)


def test_global_policy():
    mpk = tf.keras.mixed_precision
    assert repr(mpk.global_policy()) == '<DTypePolicy "float32">'
    try:
        mpk.set_global_policy("mixed_bfloat16")
        assert mpk.global_policy().compute_dtype == "bfloat16"
        assert mpk.dtype_policy() is mpk.global_policy()
        with pytest.raises(ValueError, match="^Invalid `policy` argument. Expected the string "
                                             "name of a policy"):
            mpk.set_global_policy(None)
        assert mpk.global_policy().name == "mixed_bfloat16"
    finally:
        mpk.set_global_policy("float32")


def test_tf_function_step_is_a_cond_on_the_finite_check():
    """As Keras: the inner step is the then-branch of one If op, the else-branch only counts
    `iterations`; nothing of the step runs in the outer graph."""
    w = variables.Variable(W0)
    opt = LossScaleOptimizer(tf.keras.optimizers.Adam(0.1), initial_scale=4,
                             dynamic_growth_steps=2)
    graph = tf.function(_tape_step(opt, w)).get_concrete_function(tf.constant(1.0)).graph
    ifs = [op for op in graph.get_operations() if op.type in ("If", "StatelessIf")]
    assert [op.type for op in ifs] == ["If"]
    then_types = {op.type for op in ifs[0].attrs["then_branch"].get_operations()}
    else_types = {op.type for op in ifs[0].attrs["else_branch"].get_operations()}
    assert "ResourceApplyAdam" in then_types
    assert "AssignAddVariableOp" in else_types and "ResourceApplyAdam" not in else_types
    assert "ResourceApplyAdam" not in {op.type for op in graph.get_operations()}


def _sgd_reference(factors, transform=lambda g: g):
    w = variables.Variable(W0)
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    out = []
    for f in factors:
        if np.isfinite(f):
            with tf.GradientTape() as tape:
                loss = _loss(w, f)
            opt.apply_gradients(zip([transform(g) for g in tape.gradient(loss, [w])], [w]))
        out.append(w.numpy().copy())
    return out


def test_momentum_sgd_folds_the_unscaling_into_its_learning_rate():
    """In a graph the unscaled gradients `get_unscaled_gradients` made come back to
    `apply_gradients`: the finite check and the momentum step read the scaled gradients and
    the step's learning rate carries 1/scale, so no pass multiplies a gradient. With
    power-of-two scales the weights equal the unscaled reference bit for bit."""
    w = variables.Variable(W0)
    opt = LossScaleOptimizer(tf.keras.optimizers.SGD(0.1, momentum=0.9), initial_scale=4,
                             dynamic_growth_steps=2)
    step = tf.function(_tape_step(opt, w))
    got = _run(step, opt, w)
    for (w_got, iterations, scale, _), w_ref, s, i in zip(got, _sgd_reference(FACTORS), SCALES,
                                                         range(len(FACTORS))):
        np.testing.assert_array_equal(w_got, w_ref)
        assert iterations == i + 1 and scale == s
    graph = step.get_concrete_function(tf.constant(1.0)).graph
    (cond,) = [op for op in graph.get_operations() if op.type == "If"]
    finite = [op for op in graph.get_operations() if op.type == "_AllFinite"]
    fed = list(cond.inputs) + [t for op in finite for t in op.inputs]
    assert finite and not [t for t in fed if t.op.type == "Mul" and t.shape.rank]
    (apply,) = [op for op in cond.attrs["then_branch"].get_operations()
                if op.type == "ResourceApplyKerasMomentum"]
    assert apply.inputs[3].op.type != "Mul"        # the gradient, as the tape computed it


def test_gradients_changed_after_unscaling_are_applied_as_given():
    """Gradients that are not exactly the unscaled ones (clipped here) take the plain path."""
    w = variables.Variable(W0)
    opt = LossScaleOptimizer(tf.keras.optimizers.SGD(0.1, momentum=0.9), initial_scale=4,
                             dynamic_growth_steps=2)

    @tf.function
    def step(f):
        with tf.GradientTape() as tape:
            scaled = opt.get_scaled_loss(_loss(w, f))
        grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w]))
        opt.apply_gradients(zip([tf.clip_by_norm(g, 1.0) for g in grads], [w]))

    factors = [1.0, NAN, 1.0]
    for f in factors:
        step(tf.constant(f))
    ref = _sgd_reference(factors, lambda g: tf.clip_by_norm(g, 1.0))
    np.testing.assert_allclose(w.numpy(), ref[-1], rtol=1e-6)
    assert int(opt.iterations.numpy()) == 3

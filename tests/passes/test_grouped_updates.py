"""The remapper's last step: runs of momentum updates as one `_GroupedApplyMomentum`, of
Adam updates as one `_GroupedApplyAdam` (ndflow/passes/grouped_updates.py,
kernels/training_grouped.py), bit for bit the separate updates, and the ops between them
keeping their order."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

# variable shapes: small ones (multi-tensor calls) and one of 20480 elements (its own pass)
SHAPES = [(5, 5, 1, 8), (8,), (3, 7), (7,), (160, 128), (128,), (33,)]


def _assert_same_training(grouped: list, separate: list) -> None:
    """The values after each step bit for bit equal, and the first variable trained."""
    for got, want in zip(grouped, separate):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(grouped[-1][0], grouped[0][0])


def _ops(graph, op_type):
    return [op for op in graph.get_operations() if op.type == op_type]


def _keras_training(dtype, nesterov: bool, decay: float):
    """Five Keras SGD-with-momentum steps on a loss that touches every variable (an L2 term
    on the weights when `decay`: the remapper's _ResourceApplyMomentumWithDecay); the
    variables and slots after each step, and the optimized graph."""
    rng = np.random.default_rng(3)
    params = [tf.Variable(rng.normal(size=s).astype(np.float32), dtype=dtype) for s in SHAPES]
    opt = tf.keras.optimizers.SGD(0.05, momentum=0.9, nesterov=nesterov)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.add_n([tf.reduce_sum(tf.sin(p * x)) for p in params])
            if decay:
                loss += decay * tf.add_n([tf.nn.l2_loss(p) for p in params if p.shape.rank > 1])
        opt.apply_gradients(zip(tape.gradient(loss, params), params))

    out = []
    for k in range(5):
        step(tf.constant(1.0 + 0.1 * k, dtype))
        out.append([v.numpy().astype(np.float64) for v in params + opt.variables])
    return out, step.get_concrete_function(tf.constant(1.0, dtype)).optimized_graph()


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.bfloat16])
@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("decay", [0.0, 1e-2])
def test_keras_training_equals_the_separate_updates(dtype, nesterov, decay, ungrouped):
    grouped, graph = _keras_training(dtype, nesterov, decay)
    (group,) = _ops(graph, "_GroupedApplyMomentum")
    assert group.attrs["N"] == len(SHAPES) and group.attrs["keras"] == [1] * len(SHAPES)
    assert group.attrs["use_nesterov"] == [int(nesterov)] * len(SHAPES)
    assert sum(group.attrs["decay"]) == (3 if decay else 0)
    assert not _ops(graph, "ResourceApplyKerasMomentum")
    ungrouped()
    separate, graph_off = _keras_training(dtype, nesterov, decay)
    assert not _ops(graph_off, "_GroupedApplyMomentum")
    _assert_same_training(grouped, separate)


def test_float32_updates_of_different_scalars_share_one_launch(monkeypatch, ungrouped):
    # the weights carry an L2 term and the biases not (MNIST's mix), and one variable has
    # 20480 elements: all in one numba launch a step, with each one's own scalars
    from ndflow.kernels import momentum_numba
    launches = []
    real = momentum_numba.update_many
    monkeypatch.setattr(momentum_numba, "update_many",
                        lambda table, total, params: launches.append(len(table) // 6)
                        or real(table, total, params))
    grouped, _ = _keras_training(tf.float32, False, 1e-2)
    assert launches == [len(SHAPES)] * 5
    ungrouped()
    separate, _ = _keras_training(tf.float32, False, 1e-2)
    _assert_same_training(grouped, separate)


def test_keras_momentum_matches_a_float64_reference():
    """The grouped Keras update is Keras' formula (float64 NumPy, float32 tolerance)."""
    rng = np.random.default_rng(0)
    init = [rng.normal(size=s) for s in SHAPES]
    grads = [rng.normal(size=s) for s in SHAPES]
    params = [tf.Variable(w.astype(np.float32)) for w in init]
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.8)

    @tf.function
    def step():
        opt.apply_gradients(zip([tf.constant(g.astype(np.float32)) for g in grads], params))

    w, m = [x.copy() for x in init], [np.zeros(s) for s in SHAPES]
    for _ in range(3):
        step()
        for i, g in enumerate(grads):
            m[i] = 0.8 * m[i] - 0.1 * g
            w[i] = w[i] + m[i]
    assert _ops(step.get_concrete_function().optimized_graph(), "_GroupedApplyMomentum")
    for p, want in zip(params, w):
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make_optimizer", [
    lambda: tf.compat.v1.train.MomentumOptimizer(0.01, 0.9, use_nesterov=True),
    lambda: tf.compat.v1.train.AdamOptimizer(0.01)], ids=["momentum", "adam"])
def test_tf1_optimizer_in_a_session(make_optimizer, ungrouped):
    """TF1's MomentumOptimizer (TF's form) or AdamOptimizer, its train op a NoOp waiting on
    every update, in a Session: one group, the train op's control edges on it, values as
    without grouping."""
    def train(group: bool):
        if not group:
            ungrouped()
        rng = np.random.default_rng(5)
        with tf.Graph().as_default():
            params = [tf.compat.v1.Variable(rng.normal(size=s).astype(np.float32))
                      for s in SHAPES]
            loss = tf.add_n([tf.reduce_sum(tf.square(p)) for p in params])
            op = make_optimizer().minimize(loss)
            with tf.compat.v1.Session() as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                for _ in range(4):
                    sess.run(op)
                return [sess.run(p) for p in params]
    for a, b in zip(train(True), train(False)):
        np.testing.assert_array_equal(a, b)


def _raw_updates(read_between: bool, same_variable: bool = False):
    """Two hand-written updates; optionally a read of the first variable between them."""
    v1, v2 = tf.Variable([1.0, 2.0, 3.0]), tf.Variable([4.0, 5.0, 6.0])
    a1, a2 = tf.Variable([0.5, 0.5, 0.5]), tf.Variable([0.0, 0.0, 0.0])
    second = (v1, a1) if same_variable else (v2, a2)

    @tf.function
    def step():
        tf.raw_ops.ResourceApplyKerasMomentum(var=v1.handle, accum=a1.handle, lr=0.5,
                                              grad=tf.constant([1.0, 1.0, 1.0]), momentum=0.5)
        seen = v1.read_value() * 1.0 if read_between else tf.constant(0.0)
        tf.raw_ops.ResourceApplyKerasMomentum(var=second[0].handle, accum=second[1].handle,
                                              lr=0.5, grad=tf.constant([2.0, 2.0, 2.0]),
                                              momentum=0.5)
        return seen

    seen = step().numpy()
    return seen, v1.numpy(), v2.numpy(), step.get_concrete_function().optimized_graph()


def test_a_read_between_the_updates_sees_the_first_one_applied():
    seen, v1, v2, graph = _raw_updates(read_between=True)
    # accum = 0.5 * 0.5 - 0.5 * 1 = -0.25; var += accum
    np.testing.assert_array_equal(seen, [0.75, 1.75, 2.75])
    np.testing.assert_array_equal(v1, [0.75, 1.75, 2.75])
    np.testing.assert_array_equal(v2, [3.0, 4.0, 5.0])
    assert not _ops(graph, "_GroupedApplyMomentum")      # the read splits the run
    assert len(_ops(graph, "ResourceApplyKerasMomentum")) == 2
    _, v1, v2, graph = _raw_updates(read_between=False)
    np.testing.assert_array_equal(v1, [0.75, 1.75, 2.75])
    np.testing.assert_array_equal(v2, [3.0, 4.0, 5.0])
    (group,) = _ops(graph, "_GroupedApplyMomentum")
    assert group.attrs["N"] == 2


def test_two_updates_of_one_variable_stay_in_order():
    _, v1, _, graph = _raw_updates(read_between=False, same_variable=True)
    # first: accum -0.25, var 0.75..; second: accum -0.125 - 1 = -1.125
    np.testing.assert_allclose(v1, [-0.375, 0.625, 1.625])
    assert not _ops(graph, "_GroupedApplyMomentum")


def test_a_gradient_of_the_wrong_shape_is_tf_s_error():
    v1, v2 = tf.Variable(tf.zeros([3])), tf.Variable(tf.zeros([2, 2]))
    a1, a2 = tf.Variable(tf.zeros([3])), tf.Variable(tf.zeros([2, 2]))

    @tf.function
    def step(g):
        tf.raw_ops.ResourceApplyKerasMomentum(var=v1.handle, accum=a1.handle, lr=0.5,
                                              grad=tf.ones([3]), momentum=0.5)
        tf.raw_ops.ResourceApplyKerasMomentum(var=v2.handle, accum=a2.handle, lr=0.5, grad=g,
                                              momentum=0.5)

    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"var and grad do not have the same shape\[2,2\] \[4\]"):
        step(tf.ones([4]))


def _small_float32_training(hold_reads, make_optimizer=None):
    """Three Keras steps of small float32 variables (one numba launch for all); with
    `hold_reads` (True, or a flag per step), a read of every variable and slot is held
    across each step. Returns, per step, whether each variable kept its buffer, the held
    reads against copies taken before the step, and the final values."""
    holds = [hold_reads] * 3 if isinstance(hold_reads, bool) else hold_reads
    rng = np.random.default_rng(9)
    small = [s for s in SHAPES if np.prod(s) < 1 << 14]
    params = [tf.Variable(rng.normal(size=s).astype(np.float32)) for s in small]
    grads = [tf.constant(rng.normal(size=s).astype(np.float32)) for s in small]
    opt = (make_optimizer or (lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9)))()
    opt.build(params)

    @tf.function
    def step():
        opt.apply_gradients(zip(grads, params))

    step()
    owners = params + [v for v in opt.variables if v.shape.rank]   # and the slots
    kept_buffers, held = [], []
    for hold in holds:
        pointers = [v.handle._value.value.data_ptr() for v in owners]
        before = [v.numpy().copy() for v in owners]
        reads = [v.read_value() for v in owners] if hold else []
        step()
        kept_buffers.append([v.handle._value.value.data_ptr() == p
                             for v, p in zip(owners, pointers)])
        held.append([(r.numpy(), b) for r, b in zip(reads, before)])
        del reads
    return kept_buffers, held, [v.numpy() for v in params]


@pytest.mark.parametrize("make_optimizer", [None, lambda: tf.keras.optimizers.Adam(0.1)],
                         ids=["momentum", "adam"])
def test_small_float32_updates_run_in_place_unless_a_read_is_held(make_optimizer):
    """Nobody else holds the values: the updates write the variables' own buffers. A read
    held across the step keeps the old value (copy-on-write) and the training is the same."""
    kept, _, in_place = _small_float32_training(False, make_optimizer)
    assert all(all(step) for step in kept)
    kept, held, copied = _small_float32_training(True, make_optimizer)
    assert not any(any(step) for step in kept)
    for step in held:
        for read, before in step:
            np.testing.assert_array_equal(read, before)
    for a, b in zip(in_place, copied):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("make_optimizer", [None, lambda: tf.keras.optimizers.Adam(0.1),
                                            lambda: tf.keras.optimizers.RMSprop(0.01)],
                         ids=["momentum", "adam", "rmsprop"])
def test_a_read_held_after_steps_in_place_keeps_its_value(make_optimizer):
    """In-place steps let the group's launch keep its layout (kernels/identity_cache.py); a
    read held across a later step must still see the value it read, and the steps after it
    run in place again."""
    kept, held, mixed = _small_float32_training([False, False, True, False, False],
                                                make_optimizer)
    assert [all(step) for step in kept] == [True, True, False, True, True]
    for read, before in held[2]:
        np.testing.assert_array_equal(read, before)
    _, _, unheld = _small_float32_training([False] * 5, make_optimizer)
    for a, b in zip(mixed, unheld):
        np.testing.assert_array_equal(a, b)


# -- Adam ----------------------------------------------------------------------------------------

def _keras_adam_training(dtype):
    """Four Keras Adam steps (small variables and one of 20480 elements); the variables and
    slots after each step, and the optimized graph."""
    rng = np.random.default_rng(4)
    params = [tf.Variable(rng.normal(size=s).astype(np.float32), dtype=dtype) for s in SHAPES]
    opt = tf.keras.optimizers.Adam(0.01)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.add_n([tf.reduce_sum(tf.sin(p * x)) for p in params])
        opt.apply_gradients(zip(tape.gradient(loss, params), params))

    out = []
    for k in range(4):
        step(tf.constant(1.0 + 0.1 * k, dtype))
        out.append([v.numpy().astype(np.float64) for v in params + opt.variables])
    return out, step.get_concrete_function(tf.constant(1.0, dtype)).optimized_graph()


# (not bfloat16: 0.999 ** t rounds to 1 there, so Adam's step size is 0 in both)
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16])
def test_keras_adam_equals_the_separate_updates(dtype, ungrouped):
    grouped, graph = _keras_adam_training(dtype)
    (group,) = _ops(graph, "_GroupedApplyAdam")
    assert group.attrs["N"] == len(SHAPES) and not _ops(graph, "ResourceApplyAdam")
    ungrouped()
    separate, graph_off = _keras_adam_training(dtype)
    assert not _ops(graph_off, "_GroupedApplyAdam")
    assert len(_ops(graph_off, "ResourceApplyAdam")) == len(SHAPES)
    _assert_same_training(grouped, separate)


def test_float32_adam_updates_share_one_launch(monkeypatch, ungrouped):
    """Contiguous float32 variables (not Nesterov) take Adam's one-pass kernel in one launch
    a step, bit for bit what each update gives alone (which takes the same kernel)."""
    from ndflow.kernels import adam_numba
    launches, laid_out = [], []
    real, real_many = adam_numba.update_dense_laid_out, adam_numba.update_dense_many
    monkeypatch.setattr(adam_numba, "update_dense_laid_out",
                        lambda layout, grads, params: launches.append(len(grads)) or
                        real(layout, grads, params))
    monkeypatch.setattr(adam_numba, "update_dense_many",
                        lambda updates: laid_out.append(len(updates)) or real_many(updates))
    grouped, _ = _keras_adam_training(tf.float32)
    assert launches == [len(SHAPES)] * 4
    # laid out once: the later steps update the same tensors in place, in the same layout
    assert laid_out == [len(SHAPES)]
    ungrouped()
    separate, _ = _keras_adam_training(tf.float32)
    _assert_same_training(grouped, separate)


def test_keras_adam_matches_a_float64_reference():
    """The grouped update is Adam's formula (float64 NumPy, float32 tolerance)."""
    rng = np.random.default_rng(1)
    init = [rng.normal(size=s) for s in SHAPES]
    grads = [rng.normal(size=s) for s in SHAPES]
    params = [tf.Variable(w.astype(np.float32)) for w in init]
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-7
    opt = tf.keras.optimizers.Adam(lr, beta_1=b1, beta_2=b2, epsilon=eps)

    @tf.function
    def step():
        opt.apply_gradients(zip([tf.constant(g.astype(np.float32)) for g in grads], params))

    w, m, v = [x.copy() for x in init], [np.zeros(s) for s in SHAPES], [np.zeros(s)
                                                                         for s in SHAPES]
    for t in range(1, 4):
        step()
        alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        for i, g in enumerate(grads):
            m[i] += (g - m[i]) * (1 - b1)
            v[i] += (g * g - v[i]) * (1 - b2)
            w[i] -= alpha * m[i] / (np.sqrt(v[i]) + eps)
    assert _ops(step.get_concrete_function().optimized_graph(), "_GroupedApplyAdam")
    for p, want in zip(params, w):
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-5, atol=1e-6)


def _raw_adam(grad_shape=(3,), nesterov=(False, True), same_variable=False):
    """Two hand-written ResourceApplyAdam updates (Nesterov as given); the variables after."""
    w = [tf.Variable([1.0, 2.0, 3.0]), tf.Variable([4.0, 5.0, 6.0])]
    slots = [[tf.Variable([0.1, 0.2, 0.3]), tf.Variable([0.5, 0.5, 0.5])] for _ in range(2)]
    second = 0 if same_variable else 1

    @tf.function
    def step(g):
        for i, k in enumerate((0, second)):
            tf.raw_ops.ResourceApplyAdam(
                var=w[k].handle, m=slots[k][0].handle, v=slots[k][1].handle,
                beta1_power=0.9, beta2_power=0.999, lr=0.1, beta1=0.9, beta2=0.999,
                epsilon=1e-7, grad=tf.constant([1.0, -2.0, 0.5]) if i == 0 else g,
                use_nesterov=nesterov[i])

    step(tf.ones(grad_shape))
    return [x.numpy() for x in w], step.get_concrete_function(tf.ones(grad_shape))


def _adam_step(w, m, v, g, nesterov):
    alpha = 0.1 * np.sqrt(1 - 0.999) / (1 - 0.9)
    m = m + (g - m) * (1 - 0.9)
    v = v + (g * g - v) * (1 - 0.999)
    num = g * (1 - 0.9) + 0.9 * m if nesterov else m
    return w - alpha * num / (np.sqrt(v) + 1e-7), m, v


def test_raw_adam_updates_group_with_their_own_nesterov_flags():
    (w1, w2), fn = _raw_adam()
    (group,) = _ops(fn.optimized_graph(), "_GroupedApplyAdam")
    assert group.attrs["use_nesterov"] == [0, 1]
    m0, v0 = np.array([0.1, 0.2, 0.3]), np.full(3, 0.5)
    want1 = _adam_step(np.array([1.0, 2.0, 3.0]), m0, v0, np.array([1.0, -2.0, 0.5]), False)
    want2 = _adam_step(np.array([4.0, 5.0, 6.0]), m0, v0, np.ones(3), True)
    np.testing.assert_allclose(w1, want1[0], rtol=1e-6)
    np.testing.assert_allclose(w2, want2[0], rtol=1e-6)


def test_two_adam_updates_of_one_variable_stay_in_order():
    (w1, _), fn = _raw_adam(nesterov=(False, False), same_variable=True)
    assert not _ops(fn.optimized_graph(), "_GroupedApplyAdam")
    first = _adam_step(np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.2, 0.3]), np.full(3, 0.5),
                       np.array([1.0, -2.0, 0.5]), False)
    np.testing.assert_allclose(w1, _adam_step(*first, np.ones(3), False)[0], rtol=1e-6)


def test_an_adam_gradient_of_the_wrong_shape_is_tf_s_error():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"var and grad do not have the same shape\[3\] \[4\]"):
        _raw_adam(grad_shape=(4,))


@pytest.mark.parametrize("make_optimizer", [lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9),
                                            lambda: tf.keras.optimizers.RMSprop(0.01)],
                         ids=["momentum", "rmsprop"])
def test_a_variable_over_a_chunk_is_shared_by_the_threads(make_optimizer, ungrouped):
    """A grouped variable of 3.5 launch chunks (kernels/raw_memory.py split_rows) beside a
    small one: bit for bit the separate updates."""
    from ndflow.kernels import momentum_numba

    def train():
        rng = np.random.default_rng(2)
        shapes = [(7 * momentum_numba.CHUNK // 2,), (33,)]
        params = [tf.Variable(rng.normal(size=s).astype(np.float32)) for s in shapes]
        grads = [tf.constant(rng.normal(size=s).astype(np.float32)) for s in shapes]
        opt = make_optimizer()

        @tf.function
        def step():
            opt.apply_gradients(zip(grads, params))
        for _ in range(3):
            step()
        return [p.numpy() for p in params]
    grouped = train()
    ungrouped()
    for a, b in zip(grouped, train()):
        np.testing.assert_array_equal(a, b)

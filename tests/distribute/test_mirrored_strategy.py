"""MirroredStrategy on two logical CPU devices against one device with the global batch,
with the numbers checked in NumPy: variables mirrored per device, replicas run by
`strategy.run` (eagerly and traced into one tf.function graph), gradients summed by
`apply_gradients` (TF1 and Keras optimizers), datasets split per replica."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.runtime import device_config

CPU0, CPU1 = ("/job:localhost/replica:0/task:0/device:CPU:0",
              "/job:localhost/replica:0/task:0/device:CPU:1")


@pytest.fixture
def strategy(monkeypatch):
    """Two logical CPU devices (set directly: other tests may already have listed devices,
    after which TF forbids reconfiguring them)."""
    cpu = tf.config.list_physical_devices("CPU")[0]
    monkeypatch.setitem(device_config._logical, cpu,
                        [tf.config.LogicalDeviceConfiguration()] * 2)
    return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def _data():
    rng = np.random.RandomState(0)
    return rng.randn(8, 3).astype(np.float32), rng.randn(8, 1).astype(np.float32)


def test_devices_and_default_devices(strategy):
    assert strategy.num_replicas_in_sync == 2
    assert strategy.extended.worker_devices == (CPU0, CPU1)
    # by default every GPU, else every logical CPU device (TensorFlow's default)
    gpus = [f"/job:localhost/replica:0/task:0/device:GPU:{i}"
            for i in range(len(tf.config.list_physical_devices("GPU")))]
    assert tf.distribute.MirroredStrategy().extended.worker_devices == (tuple(gpus) or
                                                                        (CPU0, CPU1))


def test_bad_devices(strategy):
    with pytest.raises(ValueError, match="Unknown attribute 'foo'"):
        tf.distribute.MirroredStrategy(["foo"])
    with pytest.raises(ValueError, match="No duplicates allowed"):
        tf.distribute.MirroredStrategy(["/cpu:0", "/CPU:0"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="CPU:7 does not exist"):
        tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:7"])  # more towers than devices


def test_run_reduce_gather(strategy):
    def replica_value():
        rid = tf.distribute.get_replica_context().replica_id_in_sync_group
        return tf.ones([2, 3]) * tf.cast(rid + 1, tf.float32)

    per_replica = strategy.run(replica_value)
    parts = [p.numpy() for p in strategy.experimental_local_results(per_replica)]
    np.testing.assert_array_equal(parts[1], 2 * parts[0])
    np.testing.assert_allclose(strategy.reduce("SUM", per_replica, axis=None).numpy(),
                               np.full([2, 3], 3.0))
    np.testing.assert_allclose(
        strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica, axis=None).numpy(),
        np.full([2, 3], 1.5))
    np.testing.assert_allclose(strategy.reduce("SUM", per_replica, axis=0).numpy(),
                               np.full([3], 6.0))
    np.testing.assert_allclose(strategy.reduce("MEAN", per_replica, axis=0).numpy(),
                               np.full([3], 1.5))
    gathered = strategy.gather(per_replica, axis=0).numpy()
    np.testing.assert_array_equal(gathered, np.concatenate(parts))


def test_per_replica_str_shows_the_values_str_and_repr_their_repr(strategy):
    """TF's DistributedValues: print() shows tf.Tensor(...), repr() <tf.Tensor: ...>."""
    per_replica = strategy.run(lambda: tf.constant(
        tf.distribute.get_replica_context().replica_id_in_sync_group))
    assert str(per_replica) == ("PerReplica:{\n  0: tf.Tensor(0, shape=(), dtype=int32),\n"
                                "  1: tf.Tensor(1, shape=(), dtype=int32)\n}")
    assert repr(per_replica).startswith("PerReplica:{\n  0: <tf.Tensor: shape=(), "
                                        "dtype=int32, numpy=0>,")


def test_a_tf_function_returns_strategy_runs_per_replica_values(strategy):
    """`return strategy.run(...)` from a tf.function gives a PerReplica of values (its parts
    are the function's outputs), nested in a structure too, as TF's."""
    @tf.function
    def step(x):
        scaled = strategy.run(lambda v: v * tf.cast(
            tf.distribute.get_replica_context().replica_id_in_sync_group + 1, tf.float32),
            args=(x,))
        return {"scaled": scaled, "x": x}

    out = step(tf.constant(2.0))
    parts = strategy.experimental_local_results(out["scaled"])
    assert type(out["scaled"]).__name__ == "PerReplica"
    assert [float(p) for p in parts] == [2.0, 4.0]
    assert float(out["x"]) == 2.0


def test_all_reduce_and_merge_call(strategy):
    def fn():
        ctx = tf.distribute.get_replica_context()
        value = tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0
        total = ctx.all_reduce("SUM", value)
        seen = ctx.merge_call(lambda s, v: (tf.distribute.in_cross_replica_context(),
                                            [x.numpy() for x in v.values]), args=(value,))
        return total, seen

    total, seen = strategy.run(fn)
    assert [float(t.numpy()) for t in total.values] == [3.0, 3.0]  # a copy per replica
    assert seen == (True, [1.0, 2.0])


def test_contexts(strategy):
    assert not tf.distribute.has_strategy()
    assert not tf.distribute.in_cross_replica_context()
    assert tf.distribute.get_replica_context() is not None
    with strategy.scope():
        assert tf.distribute.get_strategy() is strategy
        assert tf.distribute.in_cross_replica_context()
        assert tf.distribute.get_replica_context() is None
        with pytest.raises(ValueError, match="Mixing different"):
            with tf.distribute.OneDeviceStrategy("/cpu:0").scope():
                pass
    ids = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
    assert [int(i.numpy()) for i in ids.values] == [0, 1]


def test_mirrored_variable_reads_and_writes(strategy):
    with strategy.scope():
        v = tf.Variable(1.0)
        mean = tf.Variable(0.0, aggregation=tf.VariableAggregation.MEAN)
        total = tf.Variable(0.0, aggregation=tf.VariableAggregation.SUM)
        first = tf.Variable(0.0, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
    assert v.values[1].name == "Variable/replica_1:0"
    v.assign(5.0)  # cross-replica: every copy
    assert [c.numpy() for c in v.values] == [5.0, 5.0]

    def write():
        rid = tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group,
                      tf.float32)
        mean.assign(rid + 1.0)
        total.assign(rid + 1.0)
        first.assign(rid + 7.0)

    strategy.run(write)
    assert [c.numpy() for c in mean.values] == [1.5, 1.5]
    assert [c.numpy() for c in total.values] == [3.0, 3.0]
    assert [c.numpy() for c in first.values] == [7.0, 7.0]
    np.testing.assert_allclose((v * 2).numpy(), 10.0)


def _sgd_reference(x, y, w0, b0, lr, steps):
    w, b = w0.copy(), b0.copy()
    for _ in range(steps):
        err = x @ w + b - y
        w -= lr * 2 * x.T @ err / len(x)
        b -= lr * 2 * err.sum(0) / len(x)
    return w, b


@pytest.mark.parametrize("optimizer", ["v1_sgd", "keras_sgd"])
def test_training_equals_one_device_global_batch(strategy, optimizer):
    x, y = _data()
    with strategy.scope():
        w = tf.Variable(np.ones([3, 1], np.float32))
        b = tf.Variable(np.zeros([1], np.float32))
        opt = (tf.compat.v1.train.GradientDescentOptimizer(0.1) if optimizer == "v1_sgd"
               else tf.keras.optimizers.SGD(0.1))

    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((tf.matmul(xb, w) + b - yb) ** 2) / 8.0
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
        return loss

    @tf.function
    def train_step(batch):
        return strategy.reduce("SUM", strategy.run(step, args=batch), axis=None)

    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat(3)
    losses = [float(train_step(batch).numpy())
              for batch in strategy.experimental_distribute_dataset(dataset)]
    w_ref, b_ref = _sgd_reference(x, y, np.ones([3, 1], np.float32),
                                  np.zeros([1], np.float32), 0.1, 3)
    for component in w.values:
        np.testing.assert_allclose(component.numpy(), w_ref, rtol=1e-5, atol=1e-6)
    for component in b.values:
        np.testing.assert_allclose(component.numpy(), b_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses[0], np.mean((x @ np.ones([3, 1]) - y) ** 2), rtol=1e-5)


def test_traced_step_has_one_tower_per_device(strategy):
    @tf.function
    def f(x):
        return strategy.run(lambda t: t * 2.0, args=(x,))

    graph = f.get_concrete_function(tf.TensorSpec([2], tf.float32)).graph
    muls = [op for op in graph.get_operations() if op.type == "Mul"]
    assert sorted(op.name for op in muls) == ["mul", "replica_1/mul"]
    assert sorted(op.device for op in muls) == [CPU0, CPU1]


def test_distribute_dataset_split_shapes(strategy):
    dataset = tf.data.Dataset.range(10).batch(5)
    batches = list(strategy.experimental_distribute_dataset(dataset))
    assert [[p.numpy().tolist() for p in b.values] for b in batches] == \
        [[[0, 1, 2], [3, 4]], [[5, 6, 7], [8, 9]]]
    pairs = tf.data.Dataset.from_tensor_slices((np.zeros([8, 3]), np.arange(8))).batch(
        8, drop_remainder=True)
    (xb, yb), = list(strategy.experimental_distribute_dataset(pairs))
    assert [tuple(p.shape) for p in xb.values] == [(4, 3), (4, 3)]
    assert [p.numpy().tolist() for p in yb.values] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_distribute_datasets_from_function(strategy):
    seen = []

    def dataset_fn(ctx):
        seen.append((ctx.num_input_pipelines, ctx.input_pipeline_id,
                     ctx.get_per_replica_batch_size(4)))
        return tf.data.Dataset.range(8).batch(ctx.get_per_replica_batch_size(4))

    batches = list(strategy.distribute_datasets_from_function(dataset_fn))
    assert seen == [(1, 0, 2)]
    assert [[p.numpy().tolist() for p in b.values] for b in batches] == \
        [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
    with pytest.raises(ValueError, match="not divisible"):
        tf.distribute.InputContext(1, 0, 4).get_per_replica_batch_size(7)


def test_variable_created_in_replicas_is_one_mirrored_variable(strategy):
    made = []

    def fn():
        made.append(tf.Variable(3.0))
        return made[-1] * 1.0

    with strategy.scope():
        strategy.run(fn)
    assert len(made) == 2 and made[0] is made[1]
    assert [c.numpy() for c in made[0].values] == [3.0, 3.0]


def test_replica_errors_reach_the_caller(strategy):
    def fails_on_replica_1():
        if tf.distribute.get_replica_context()._replica_id == 1:
            raise KeyError("boom")
        return 1.0

    with pytest.raises(KeyError, match="boom"):
        strategy.run(fails_on_replica_1)

    def unbalanced_merge():
        ctx = tf.distribute.get_replica_context()
        if ctx._replica_id == 0:
            ctx.merge_call(lambda s: None)
        return 1.0

    with pytest.raises(RuntimeError, match="different number of"):
        strategy.run(unbalanced_merge)
    with pytest.raises(ValueError, match="cannot be reduced"):
        strategy.reduce("SUM", tf.constant(1.0), axis=None)
    assert float(strategy.reduce("MEAN", tf.constant(1.0), axis=None).numpy()) == 1.0


def test_mirrored_variable_in_cross_replica_function(strategy):
    with strategy.scope():
        v = tf.Variable(2.0)

    @tf.function
    def double():
        v.assign_add(1.0)
        return v * 2.0

    assert float(double().numpy()) == 6.0
    assert [c.numpy() for c in v.values] == [3.0, 3.0]


def test_tf1_graph_and_session(strategy):
    x, y = _data()
    with tf.Graph().as_default():
        with strategy.scope():
            w = tf.Variable(np.ones([3, 1], np.float32))
            opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)

        def step(xb, yb):
            loss = tf.reduce_sum((tf.matmul(xb, w) - yb) ** 2) / 8.0
            return opt.apply_gradients(zip(tf.gradients(loss, [w]), [w]))

        batch = strategy.experimental_distribute_values_from_function(
            lambda ctx: (tf.constant(x[4 * ctx.replica_id_in_sync_group:][:4]),
                         tf.constant(y[4 * ctx.replica_id_in_sync_group:][:4])))
        train = strategy.run(step, args=batch)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(strategy.experimental_local_results(train))
            copies = sess.run([c.read_value() for c in w.values])
    w_ref = np.ones([3, 1], np.float32)
    w_ref = w_ref - 0.1 * 2 * x.T @ (x @ w_ref - y) / 8
    for c in copies:
        np.testing.assert_allclose(c, w_ref, rtol=1e-5)

"""What the "Custom training with tf.distribute.Strategy" guide needs of MirroredStrategy on
2 logical CPUs, checked against TF 2.21's behaviour: compute_average_loss and
scale_regularization_loss divide by the replicas in sync, Keras metrics keep per-replica state
summed on read, a distributed dataset's element_spec holds PerReplicaSpecs, `for x in
dist_dataset` runs inside a tf.function, logical devices are named as TF names them, and a
checkpoint restores into Keras weights a tf.function's trace builds."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.runtime import device_config


@pytest.fixture
def strategy(monkeypatch):
    cpu = tf.config.list_physical_devices("CPU")[0]
    monkeypatch.setitem(device_config._logical, cpu,
                        [tf.config.LogicalDeviceConfiguration()] * 2)
    return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def test_logical_device_names(strategy):
    # TF 2.21: [LogicalDevice(name='/device:CPU:0', ...), LogicalDevice(name='/device:CPU:1', ...)]
    names = [d.name for d in tf.config.list_logical_devices("CPU")]
    assert names == ["/device:CPU:0", "/device:CPU:1"]
    assert strategy.extended.worker_devices == (
        "/job:localhost/replica:0/task:0/device:CPU:0",
        "/job:localhost/replica:0/task:0/device:CPU:1")


def test_average_loss_over_replicas(strategy):
    per_example = np.array([1.0, 2.0, 3.0, 6.0], np.float32)
    dist = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices(per_example).batch(4))

    def replica_loss(x):
        return (tf.nn.compute_average_loss(x),
                tf.nn.scale_regularization_loss(tf.constant([4.0, 2.0])))

    for batch in dist:
        loss, reg = strategy.run(replica_loss, args=(batch,))
        # each replica divides by the global batch (its 2 rows x 2 replicas), so the SUM
        # over replicas is the global mean; the regularization is split over the replicas
        total = strategy.reduce(tf.distribute.ReduceOp.SUM, loss, axis=None)
        np.testing.assert_allclose(total.numpy(), per_example.mean())
        np.testing.assert_allclose([r.numpy() for r in reg.values], [3.0, 3.0])
    # no strategy: one replica
    assert tf.nn.compute_average_loss(per_example).numpy() == 3.0
    with strategy.scope(), pytest.raises(RuntimeError, match="`compute_average_loss` in "
                                         "cross replica context"):
        tf.nn.compute_average_loss(per_example)
    with strategy.scope(), pytest.raises(RuntimeError, match="`scale_regularization_loss`"):
        tf.nn.scale_regularization_loss([1.0])


@pytest.mark.parametrize("traced", [False, True])
def test_metrics_sum_the_replicas(strategy, traced):
    # TF 2.21 prints 5.0 0.6666667 [30.0, 6.0] [4.0, 6.0]: every replica's update counts
    with strategy.scope():
        mean = tf.keras.metrics.Mean()
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.array([1, 0, 0, 1, 1, 1])
    dist = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((x, y)).batch(6))

    def update(inputs):
        a, b = inputs
        mean.update_state(a[:, 0])
        accuracy.update_state(b, a)

    step = tf.function(lambda d: strategy.run(update, args=(d,))) if traced else \
        (lambda d: strategy.run(update, args=(d,)))
    for batch in dist:
        step(batch)
    assert mean.result().numpy() == 5.0
    np.testing.assert_allclose(accuracy.result().numpy(), 4 / 6)
    assert [v.numpy() for v in mean.variables] == [30.0, 6.0]
    mean.reset_state()
    assert [v.numpy() for v in mean.variables] == [0.0, 0.0]
    assert mean.result().numpy() == 0.0


def test_distributed_element_spec(strategy):
    ds = tf.data.Dataset.from_tensor_slices(({"a": np.zeros((8, 3), np.float32)},
                                             np.arange(8, dtype=np.int32)))
    spec = strategy.experimental_distribute_dataset(ds.batch(4, drop_remainder=True)).element_spec
    assert repr(spec) == (
        "({'a': PerReplicaSpec(TensorSpec(shape=(2, 3), dtype=tf.float32, name=None), "
        "TensorSpec(shape=(2, 3), dtype=tf.float32, name=None))}, "
        "PerReplicaSpec(TensorSpec(shape=(2,), dtype=tf.int32, name=None), "
        "TensorSpec(shape=(2,), dtype=tf.int32, name=None)))")
    assert spec[1].value_type.__name__ == "PerReplica"
    unknown = strategy.experimental_distribute_dataset(ds.batch(3)).element_spec[1]
    assert repr(unknown) == ("PerReplicaSpec(TensorSpec(shape=(None,), dtype=tf.int32, "
                             "name=None), TensorSpec(shape=(None,), dtype=tf.int32, name=None))")
    from_fn = strategy.distribute_datasets_from_function(lambda ctx: ds.batch(4, True))
    assert "TensorSpec(shape=(4,), dtype=tf.int32" in repr(from_fn.element_spec[1])


def test_for_loop_over_distributed_dataset_in_function(strategy):
    # the guide's distributed_train_epoch: `for x in dataset` inside a tf.function; TF 2.21
    # gives [[201, 205], [209, 213], [108, 109]] (100 * part size + part sum per replica)
    ds = tf.data.Dataset.range(10).map(lambda v: tf.cast(v, tf.float32)).batch(4)
    dist = strategy.experimental_distribute_dataset(ds)

    @tf.function
    def epoch(dataset):
        out = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        i = 0
        for x in dataset:
            r = strategy.run(lambda t: tf.cast(tf.size(t), tf.float32) * 100
                             + tf.reduce_sum(t), args=(x,))
            out = out.write(i, tf.stack(strategy.experimental_local_results(r)))
            i += 1
        return out.stack()

    assert epoch(dist).numpy().tolist() == [[201.0, 205.0], [209.0, 213.0], [108.0, 109.0]]
    eager = [[v.numpy().tolist() for v in x.values] for x in dist]
    assert eager == [[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]], [[8.0], [9.0]]]
    # a known global batch (drop_remainder) splits by its static sizes in the graph too
    fixed = strategy.experimental_distribute_dataset(
        tf.data.Dataset.range(8).map(lambda v: tf.cast(v, tf.float32)).batch(4, True))
    assert epoch(fixed).numpy().tolist() == [[201.0, 205.0], [209.0, 213.0]]


def test_restore_into_weights_built_in_a_trace(tmp_path):
    # TF 2.21: a restore waiting for a model's weights fills them when a tf.function's
    # trace builds the model (the guide's eval_step after restoring without strategy)
    def make():
        return tf.keras.Sequential([tf.keras.layers.Dense(2)])

    model = make()
    model(tf.ones([1, 3]))
    path = tf.train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))
    fresh = make()
    tf.train.Checkpoint(model=fresh).restore(path)
    tf.function(lambda x: fresh(x))(tf.ones([1, 3]))
    for a, b in zip(model.weights, fresh.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())

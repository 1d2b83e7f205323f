"""The default strategy, OneDeviceStrategy, ReduceOp, InputContext, variable creators and
mirrored-variable checkpoints (one saved copy, interchangeable with plain variables)."""

import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.runtime import device_config


def test_default_strategy():
    strategy = tf.distribute.get_strategy()
    assert not tf.distribute.has_strategy()
    assert strategy.num_replicas_in_sync == 1
    ctx = tf.distribute.get_replica_context()
    assert ctx.replica_id_in_sync_group == 0 and ctx.num_replicas_in_sync == 1
    assert strategy.run(lambda x: x + 1, args=(1,)) == 2
    t = tf.constant([1.0, 2.0])
    assert strategy.reduce("SUM", t, axis=None) is t
    assert strategy.experimental_local_results(t) == (t,)
    assert type(tf.Variable(1.0)).__name__ == "ResourceVariable"   # as TF: no wrapper
    # merge_call in the default replica context runs in cross-replica context
    assert ctx.merge_call(lambda s: tf.distribute.in_cross_replica_context())


def test_reduce_op():
    assert tf.distribute.ReduceOp("SUM") is tf.distribute.ReduceOp.SUM
    assert tf.distribute.ReduceOp.from_variable_aggregation(
        tf.VariableAggregation.MEAN) is tf.distribute.ReduceOp.MEAN
    with pytest.raises(ValueError, match="Could not convert"):
        tf.distribute.ReduceOp.from_variable_aggregation(tf.VariableAggregation.NONE)


def test_one_device_strategy():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    assert strategy.num_replicas_in_sync == 1
    with strategy.scope():
        assert tf.distribute.has_strategy() and tf.distribute.in_cross_replica_context()
        v = tf.Variable(2.0)
    out = strategy.run(lambda: v * 3.0)
    assert float(out.numpy()) == 6.0
    assert float(strategy.reduce("MEAN", out, axis=None).numpy()) == 6.0
    batches = list(strategy.experimental_distribute_dataset(tf.data.Dataset.range(4).batch(2)))
    assert [b.numpy().tolist() for b in batches] == [[0, 1], [2, 3]]


def test_variable_creator_scope():
    def creator(next_creator, **kwargs):
        kwargs["initial_value"] = 5.0
        return next_creator(**kwargs)

    with tf.variable_creator_scope(creator):
        v = tf.Variable(1.0, name="made")
    assert float(v.numpy()) == 5.0 and v.name == "made:0"


def test_input_context():
    ctx = tf.distribute.InputContext(2, 1, 4)
    assert str(ctx) == "tf.distribute.InputContext(input pipeline id 1, total: 2)"
    assert ctx.get_per_replica_batch_size(8) == 2


def test_mirrored_checkpoint_saves_one_copy(tmp_path, monkeypatch):
    cpu = tf.config.list_physical_devices("CPU")[0]
    monkeypatch.setitem(device_config._logical, cpu,
                        [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        v = tf.Variable([1.0, 2.0, 3.0])
    v.assign([4.0, 5.0, 6.0])
    path = tf.train.Checkpoint(v=v).save(os.path.join(tmp_path, "ckpt"))
    names = [n for n, _ in tf.train.list_variables(path)]
    assert names == ["_CHECKPOINTABLE_OBJECT_GRAPH", "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
                     "v/.ATTRIBUTES/VARIABLE_VALUE"]
    plain = tf.Variable([0.0, 0.0, 0.0])
    tf.train.Checkpoint(v=plain).restore(path)
    np.testing.assert_array_equal(plain.numpy(), [4.0, 5.0, 6.0])
    plain.assign([7.0, 8.0, 9.0])
    path = tf.train.Checkpoint(v=plain).save(os.path.join(tmp_path, "plain"))
    with strategy.scope():
        back = tf.Variable([0.0, 0.0, 0.0])
    tf.train.Checkpoint(v=back).restore(path)
    for component in back.values:
        np.testing.assert_array_equal(component.numpy(), [7.0, 8.0, 9.0])

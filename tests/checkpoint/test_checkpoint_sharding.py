"""Sharded checkpoints (`CheckpointOptions(experimental_sharding_callback=...)`) and
`tf.train.experimental.PythonState`, against TensorFlow 2.21's files
(tests/fixtures/checkpoint_sharding, written by generate.py beside them)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.checkpoint import bundle_merge, sstable, tensor_bundle

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "checkpoint_sharding"
VALUES = dict(np.load(FIXTURES / "values.npz"))
NAMES = ["w", "v", "ids", "scale", "small"]


class ListState(tf.train.experimental.PythonState):
    def __init__(self, items):
        self.items = items

    def serialize(self):
        return json.dumps(self.items).encode()

    def deserialize(self, string_value):
        self.items = json.loads(string_value.decode())


def _module(zero=False):
    m = tf.Module()
    for name in NAMES:
        value = VALUES[name]
        setattr(m, name, tf.Variable(np.zeros_like(value) if zero else value, name=name))
    m.state = ListState([] if zero else VALUES["state"].tolist())
    return m


def _options(callback):
    return tf.train.CheckpointOptions(experimental_sharding_callback=callback)


def _index(prefix) -> list:
    path = tensor_bundle.index_filename(str(prefix))
    return sstable.read_table(Path(path).read_bytes(), path)


def _files(prefix) -> dict:
    directory, base = os.path.split(str(prefix))
    return {n: Path(directory, n).read_bytes() for n in sorted(os.listdir(directory))
            if n.startswith(base + ".")}


@pytest.mark.parametrize("name, callback", [
    ("max_shard", tf.train.experimental.MaxShardSizePolicy(max_shard_size=64)),
    ("by_task", tf.train.experimental.ShardByTaskPolicy()),
])
def test_files_are_tensorflows(tmp_path, name, callback):
    """The same module written with the same policy gives TF's files byte for byte: the
    slices, their shards and offsets, the merged index (so TF reads ndflow's)."""
    prefix = tmp_path / name / "ckpt"
    tf.train.Checkpoint(model=_module()).write(str(prefix), options=_options(callback))
    assert _index(prefix) == _index(FIXTURES / name / "ckpt")
    assert _files(prefix) == _files(FIXTURES / name / "ckpt")
    assert not (tmp_path / name / "ckpt_temp").exists()  # the parts were merged away


def test_max_shard_size_layout():
    """TF's 64-byte policy: w in three 2x8 slices, v in two 5x3x1, ids 5+2+1+1 rows over
    two shards, the 146-byte PythonState a shard of its own, last."""
    reader = tensor_bundle.BundleReader(str(FIXTURES / "max_shard" / "ckpt"))
    slices = {k: [[(e.start, e.length) for e in s.extent] for s in reader._entry(k).slices]
              for k in reader.keys()}
    assert slices["model/w/.ATTRIBUTES/VARIABLE_VALUE"] == [
        [(0, 2), (0, 8)], [(2, 2), (0, 8)], [(4, 2), (0, 8)]]
    assert slices["model/v/.ATTRIBUTES/VARIABLE_VALUE"] == [
        [(0, 5), (0, 3), (0, 1)], [(0, 5), (0, 3), (1, 1)]]
    assert slices["model/ids/.ATTRIBUTES/VARIABLE_VALUE"] == [[(0, 5)], [(5, 2)], [(7, 1)],
                                                                [(8, 1)]]
    assert reader._entry("model/state/.ATTRIBUTES/py_state").shard_id == 7


@pytest.mark.parametrize("name", ["max_shard", "by_task"])
def test_reads_tensorflows_sharded_checkpoint(name):
    m = _module(zero=True)
    status = tf.train.Checkpoint(model=m).read(str(FIXTURES / name / "ckpt"))
    status.assert_consumed()
    for n in NAMES:
        np.testing.assert_array_equal(getattr(m, n).numpy(), VALUES[n])
    assert m.state.items == VALUES["state"].tolist()


def test_round_trip_and_counter(tmp_path):
    """save() with a policy numbers the checkpoint and restores it; list_variables and
    load_checkpoint see whole tensors."""
    ckpt = tf.train.Checkpoint(model=_module())
    path = ckpt.save(str(tmp_path / "ckpt"), options=_options(
        tf.train.experimental.MaxShardSizePolicy(max_shard_size=100)))
    assert path.endswith("ckpt-1")
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
    shapes = dict(tf.train.list_variables(path))
    assert shapes["model/v/.ATTRIBUTES/VARIABLE_VALUE"] == [5, 3, 2]
    np.testing.assert_array_equal(
        tf.train.load_checkpoint(path).get_tensor("model/w/.ATTRIBUTES/VARIABLE_VALUE"),
        VALUES["w"])
    m = _module(zero=True)
    tf.train.Checkpoint(model=m).restore(path).assert_consumed()
    np.testing.assert_array_equal(m.ids.numpy(), VALUES["ids"])
    assert m.state.items == VALUES["state"].tolist()


class _EachTensorAlone(tf.train.experimental.ShardingCallback):
    @property
    def description(self):
        return "one shard per tensor"

    def __call__(self, shardable_tensors):
        return [{t.checkpoint_key: {t.slice_spec: t.tensor}} for t in shardable_tensors]


def test_custom_callback(tmp_path):
    seen = []

    class Recording(_EachTensorAlone):
        def __call__(self, shardable_tensors):
            seen.extend(shardable_tensors)
            return super().__call__(shardable_tensors)

    prefix = str(tmp_path / "ckpt")
    tf.train.Checkpoint(model=_module()).write(prefix, options=_options(Recording()))
    keys = [t.checkpoint_key for t in seen]
    assert keys[-1] == "_CHECKPOINTABLE_OBJECT_GRAPH"  # TF hands the graph over last
    assert keys[:2] == ["model/w/.ATTRIBUTES/VARIABLE_VALUE",
                        "model/v/.ATTRIBUTES/VARIABLE_VALUE"]
    w = seen[0]
    assert w.dtype == tf.float32 and w.shape == tf.TensorShape([6, 8]) and w.slice_spec == ""
    assert w.device.task == 0 and w.trackable is not None
    assert len(os.listdir(tmp_path)) == 1 + len(seen)  # the index + a data file per tensor
    m = _module(zero=True)
    tf.train.Checkpoint(model=m).read(prefix).assert_consumed()
    np.testing.assert_array_equal(m.v.numpy(), VALUES["v"])


def test_bad_callback_option():
    with pytest.raises(ValueError, match="must be of type ShardingCallback"):
        tf.train.CheckpointOptions(experimental_sharding_callback=lambda ts: [ts])
    with pytest.raises(TypeError):
        tf.train.experimental.ShardingCallback()  # abstract


def test_merge_rejects_duplicate_keys(tmp_path):
    for part in ("a", "b"):
        w = tensor_bundle.BundleWriter(str(tmp_path / part))
        w.add("x", np.ones(2, np.float32))
        w.finish()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tensor keyed by x"):
        bundle_merge.merge_bundles([str(tmp_path / "a"), str(tmp_path / "b")],
                                   str(tmp_path / "out"))


def test_merge_v2_op_merges_shards(tmp_path):
    """The MergeV2Checkpoints op (TF1 sharded Savers) merges several parts too."""
    parts = []
    for i, value in enumerate([np.arange(3, dtype=np.float32), np.array(7, np.int64)]):
        part = str(tmp_path / "t_temp" / f"part-{i:05d}-of-00002")
        tf.raw_ops.SaveV2(prefix=part, tensor_names=[f"k{i}"], shape_and_slices=[""],
                          tensors=[tf.constant(value)])
        parts.append(part)
    tf.raw_ops.MergeV2Checkpoints(checkpoint_prefixes=parts,
                                  destination_prefix=str(tmp_path / "t"))
    reader = tensor_bundle.BundleReader(str(tmp_path / "t"))
    np.testing.assert_array_equal(reader.read("k0"), np.arange(3, dtype=np.float32))
    assert reader._entry("k1").shard_id == 1 and int(reader.read("k1")) == 7
    assert not (tmp_path / "t_temp").exists()


def test_max_shard_size_policy_oversized_tensor_is_its_own_shard():
    """A 1-D tensor's single element larger than the shard: each element is a shard of its
    own (TF: slices that cannot fit go to `large` shards after the others)."""
    t = tf.constant(np.arange(3, dtype=np.float64))
    st = tf.train.experimental.ShardableTensor(
        _tensor_save_spec=None, tensor=t, dtype=tf.float64,
        device=tf.DeviceSpec.from_string("/job:localhost/replica:0/task:0/device:CPU:0"),
        name="x", shape=t.shape, slice_spec="", checkpoint_key="x", trackable=None)
    shards = tf.train.experimental.MaxShardSizePolicy(max_shard_size=4)([st])
    specs = [list(s["x"]) for s in shards]
    assert specs == [["3 0,1"], ["3 1,1"], ["3 2,1"]]
    assert [float(next(iter(s["x"].values())).numpy()[0]) for s in shards] == [0.0, 1.0, 2.0]


def test_python_state_round_trip(tmp_path):
    """A PythonState alone: saved under TF's key and attribute, restored by deserialize."""
    root = tf.train.Checkpoint(state=ListState([1, 2, 3]))
    path = root.save(str(tmp_path / "ckpt"))
    assert dict(tf.train.list_variables(path))["state/.ATTRIBUTES/py_state"] == []
    assert tf.train.load_checkpoint(path).get_tensor("state/.ATTRIBUTES/py_state") == \
        b"[1, 2, 3]"
    root.state.items = []
    root.restore(path).assert_consumed()
    assert root.state.items == [1, 2, 3]


class _BytesState(tf.train.experimental.PythonState):
    def __init__(self, data):
        self.data = data

    def serialize(self):
        return self.data

    def deserialize(self, string_value):
        self.data = string_value


@pytest.mark.parametrize("callback", [None, tf.train.experimental.ShardByTaskPolicy()])
def test_python_state_keeps_trailing_nul_bytes(tmp_path, callback):
    """Serialized state ending in NUL bytes (np.save output, protos) comes back whole, and
    so does the object graph."""
    data = b"\x01state\x00\x00"
    root = tf.train.Checkpoint(state=_BytesState(data))
    path = root.write(str(tmp_path / "ckpt"), options=_options(callback))
    root.state.data = b""
    root.read(path).assert_consumed()
    assert root.state.data == data


def test_saved_model_variables_sharded(tmp_path):
    """SaveOptions' sharding callback shards `variables/` (TF reads such a SavedModel)."""
    m = tf.Module()
    m.w = tf.Variable(VALUES["w"])
    m.ids = tf.Variable(VALUES["ids"])
    m.f = tf.function(lambda: tf.reduce_sum(m.w) + tf.cast(tf.reduce_sum(m.ids), tf.float32),
                      input_signature=[])
    tf.saved_model.save(m, str(tmp_path / "m"), options=tf.saved_model.SaveOptions(
        experimental_sharding_callback=tf.train.experimental.MaxShardSizePolicy(64)))
    files = os.listdir(tmp_path / "m" / "variables")
    assert len([f for f in files if ".data-" in f]) > 2
    expected = VALUES["w"].sum(dtype=np.float64) + VALUES["ids"].sum()
    assert float(tf.saved_model.load(str(tmp_path / "m")).f()) == pytest.approx(expected)
    with pytest.raises(ValueError, match="must be of type ShardingCallback"):
        tf.saved_model.SaveOptions(experimental_sharding_callback=object())


def test_tf1_graph_sharded_write_and_python_state(tmp_path):
    """In a TF1 graph: the sharded write takes the session's values, and a PythonState is
    serialized at each save (not once) and deserialized when the restore ops run."""
    with tf.Graph().as_default():
        v = tf.compat.v1.get_variable("v", initializer=VALUES["w"], use_resource=True)
        state = ListState([1])
        ckpt = tf.train.Checkpoint(v=v, state=state)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            options = _options(tf.train.experimental.MaxShardSizePolicy(max_shard_size=64))
            ckpt.write(str(tmp_path / "ckpt"), options=options, session=sess)
            state.items = [2]
            path = ckpt.write(str(tmp_path / "ckpt"), options=options, session=sess)
            sess.run(v.assign(tf.zeros([6, 8])))
            state.items = [3]
            status = ckpt.read(path)
            assert state.items == [3]
            status.run_restore_ops(sess)
            assert state.items == [2]
            np.testing.assert_array_equal(sess.run(v), VALUES["w"])
    assert len([n for n in os.listdir(tmp_path) if ".data-" in n]) > 3

"""Partitioned variables in TF1 Saver checkpoints, as TensorFlow's TensorBundle holds them:
each part a slice of one tensor under the full name (the full entry lists the slices, each
slice's data under its OrderedCode-encoded key), restorable into any partitioning. The
fixture was written by TensorFlow 2.21 (tests/fixtures/partitioned_checkpoint/generate.py)."""

import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.checkpoint import sstable, tensor_bundle, tensor_slices
from ndflow.core.protos.tensor_bundle_pb import BundleEntryProto

v1 = tf.compat.v1
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "partitioned_checkpoint",
                       "saver", "model")
EMB = np.arange(14, dtype=np.float32).reshape(7, 2)
WIDE = (np.arange(390) / 10).astype(np.float32).reshape(130, 3)


def _model(parts):
    """emb [7, 2], wide [130, 3] in `parts` parts (None: unpartitioned), bias [2]."""
    partitioner = v1.fixed_size_partitioner(parts) if parts else None
    emb = v1.get_variable("emb", [7, 2], partitioner=partitioner)
    wide = v1.get_variable("wide", [130, 3], partitioner=partitioner)
    v1.get_variable("bias", [2])
    return tf.convert_to_tensor(emb), tf.convert_to_tensor(wide)


def _index_entries(prefix):
    with open(prefix + ".index", "rb") as f:
        items = sstable.read_table(f.read(), prefix)
    out = {}
    for key, value in items[1:]:
        entry = BundleEntryProto()
        entry.ParseFromString(value)
        out[bytes(key)] = entry
    return out


@pytest.mark.parametrize("parts", [3, 2, 5, None])
def test_restores_tensorflows_sliced_checkpoint_into_any_partitioning(parts):
    with tf.Graph().as_default():
        emb, wide = _model(parts)
        with v1.Session() as sess:
            v1.train.Saver().restore(sess, FIXTURE)
            got_emb, got_wide = sess.run([emb, wide])
    np.testing.assert_array_equal(got_emb, EMB)
    np.testing.assert_array_equal(got_wide, WIDE)


def test_load_checkpoint_assembles_sliced_tensors():
    reader = tf.train.load_checkpoint(FIXTURE)
    assert reader.get_variable_to_shape_map() == {"bias": [2], "emb": [7, 2],
                                                  "wide": [130, 3]}
    np.testing.assert_array_equal(reader.get_tensor("emb"), EMB)
    np.testing.assert_array_equal(tf.train.load_variable(FIXTURE, "wide"), WIDE)
    region = tensor_bundle.BundleReader(FIXTURE).read_slice("wide", [(40, 10), (0, -1)])
    np.testing.assert_array_equal(region, WIDE[40:50])  # across two saved slices


def test_written_slices_are_tensorflows_entries_byte_for_byte(tmp_path):
    with tf.Graph().as_default():
        _model(3)
        saver = v1.train.Saver()
        with v1.Session() as sess:
            saver.restore(sess, FIXTURE)  # TensorFlow's values, saved again by ndflow
            path = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    ours, theirs = _index_entries(path), _index_entries(FIXTURE)
    assert ours == theirs  # the full entries with their slices, the encoded slice keys
    assert ours[b"emb"].slices[1] == tensor_slices.slice_proto(((3, 2), (0, 2)))
    assert tensor_slices.encode_tensor_name_slice("wide", ((87, 43), (0, 3))) in ours
    with open(path + ".data-00000-of-00001", "rb") as a, \
            open(FIXTURE + ".data-00000-of-00001", "rb") as b:
        assert a.read() == b.read()


def test_round_trip_between_partitionings_eagerly_and_into_whole_variables(tmp_path):
    parts = v1.get_variable("emb", [7, 2], partitioner=v1.fixed_size_partitioner(2))
    parts.assign(EMB)
    path = v1.train.Saver([parts]).save(None, str(tmp_path / "ckpt"))
    reader = tf.train.load_checkpoint(path)
    np.testing.assert_array_equal(reader.get_tensor("emb"), EMB)
    other = v1.get_variable("emb", [7, 2], partitioner=v1.fixed_size_partitioner(4))
    v1.train.Saver([other]).restore(None, path)
    np.testing.assert_array_equal(tf.convert_to_tensor(other).numpy(), EMB)
    whole = tf.Variable(np.zeros((7, 2), np.float32), name="emb")
    v1.train.Saver([whole]).restore(None, path)
    np.testing.assert_array_equal(whole.numpy(), EMB)
    # and a whole checkpoint into parts
    whole_path = v1.train.Saver([whole]).save(None, str(tmp_path / "whole"))
    again = v1.get_variable("emb", [7, 2], partitioner=v1.fixed_size_partitioner(3))
    v1.train.Saver({"emb": again}).restore(None, whole_path)
    np.testing.assert_array_equal(tf.convert_to_tensor(again).numpy(), EMB)


def test_mismatched_shapes_and_uncovered_slices_are_errors(tmp_path):
    bigger = v1.get_variable("emb", [8, 2], partitioner=v1.fixed_size_partitioner(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="doesn't match the shape"):
        v1.train.Saver([bigger]).restore(None, FIXTURE)
    writer = tensor_bundle.BundleWriter(str(tmp_path / "gap"))
    writer.add_slice("t", [4], [(0, 2)], np.ones(2, np.float32))  # rows 2..3 never saved
    writer.finish()
    with pytest.raises(tf.errors.NotFoundError, match="not fully covered"):
        tf.train.load_checkpoint(str(tmp_path / "gap")).get_tensor("t")
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not fit"):
        tensor_bundle.BundleWriter(str(tmp_path / "bad")).add_slice(
            "t", [4], [(3, 2)], np.ones(2, np.float32))


def test_ordered_code_of_slice_keys():
    assert tensor_slices.encode_tensor_name_slice("emb", ((3, 2), (0, 2))) == \
        b"\x00emb\x00\x01\x01\x02\x83\x82\x80\x82"  # TensorFlow's key for that slice
    assert tensor_slices.encode_tensor_name_slice("a\x00b", ((0, -1),)) == \
        b"\x00a\x00\xffb\x00\x01\x01\x01\x80\x7f"
    assert tensor_slices._signed_num_increasing(100) == b"\xc0\x64"
    assert tensor_slices._signed_num_increasing(-100) == b"\x3f\x9c"
    assert tensor_slices._num_increasing(300) == b"\x02\x01\x2c"


def test_meta_graph_keeps_the_parts_slice_info(tmp_path):
    with tf.Graph().as_default():
        emb, _ = _model(3)
        saver = v1.train.Saver()
        with v1.Session() as sess:
            saver.restore(sess, FIXTURE)
            path = saver.save(sess, str(tmp_path / "model"))  # with model.meta
    with tf.Graph().as_default():
        saver = v1.train.import_meta_graph(path + ".meta")
        parts = [v for v in v1.global_variables() if v.name.startswith("emb/")]
        assert [p._get_save_slice_info().spec for p in parts] == \
            ["7 2 0,3:0,2", "7 2 3,2:0,2", "7 2 5,2:0,2"]
        with v1.Session() as sess:
            saver.restore(sess, FIXTURE)
            np.testing.assert_array_equal(np.concatenate(sess.run(parts)), EMB)


def test_tensorflows_own_save_graph_runs_with_slice_specs(tmp_path):
    """TF's Saver ops in its .meta (RestoreV2/SaveV2 with "7 2 3,2:0,2" slice specs) run
    here and write what TensorFlow writes."""
    with tf.Graph().as_default():
        v1.train.import_meta_graph(FIXTURE + ".meta")
        parts = [v for v in v1.global_variables() if v.name.startswith("emb/")]
        with v1.Session() as sess:
            sess.run("save/restore_all", {"save/Const:0": FIXTURE})
            np.testing.assert_array_equal(np.concatenate(sess.run(parts)), EMB)
            sess.run("save/control_dependency:0", {"save/Const:0": str(tmp_path / "again")})
    assert _index_entries(str(tmp_path / "again")) == _index_entries(FIXTURE)


def test_optimizer_slots_of_parts_are_slices_of_one_tensor(tmp_path):
    """Adam's slots of `emb/part_1` save as slices of `emb/Adam`, as TensorFlow's slot
    creator names them (TF 2.21 writes the same keys and values for this program)."""
    def program(parts):
        emb = v1.get_variable("emb", initializer=tf.constant(EMB),
                              partitioner=v1.fixed_size_partitioner(parts))
        ids = tf.constant([0, 4, 6])
        loss = tf.reduce_sum(tf.square(v1.nn.embedding_lookup(emb, ids)))
        return emb, v1.train.AdamOptimizer(0.1).minimize(loss)

    with tf.Graph().as_default():
        _, step = program(3)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(step)
            path = v1.train.Saver().save(sess, str(tmp_path / "m"), write_meta_graph=False)
    reader = tf.train.load_checkpoint(path)
    assert sorted(reader.get_variable_to_shape_map().items()) == [
        ("beta1_power", []), ("beta2_power", []), ("emb", [7, 2]), ("emb/Adam", [7, 2]),
        ("emb/Adam_1", [7, 2])]
    np.testing.assert_allclose(reader.get_tensor("emb/Adam_1")[4], [0.2559967, 0.32399583],
                               rtol=1e-6)  # TensorFlow's value after the same step
    with tf.Graph().as_default():
        emb, _ = program(2)
        slots = [v for v in v1.global_variables() if v.name.endswith("/Adam_1:0")]
        with v1.Session() as sess:
            v1.train.Saver().restore(sess, path)
            np.testing.assert_allclose(np.concatenate(sess.run(slots)),
                                       reader.get_tensor("emb/Adam_1"))


def test_corrupted_slice_metadata_is_data_loss(tmp_path):
    """An index whose slices disagree with their data (a damaged or forged file) is
    DataLossError naming the file, never a NumPy error or wrong values."""
    from ndflow.core.protos.tensor_bundle_pb import BundleHeaderProto

    entries = _index_entries(FIXTURE)
    entries[b"emb"].slices[1].extent[0].length = 3  # rows 3..5, but 2 rows were saved
    header = BundleHeaderProto(num_shards=1)
    header.version.producer = 1
    items = [(b"", header.SerializeToString())] + [
        (k, entries[k].SerializeToString()) for k in sorted(entries)]
    (tmp_path / "bad.index").write_bytes(sstable.build_table(items))
    data = open(FIXTURE + ".data-00000-of-00001", "rb").read()
    (tmp_path / "bad.data-00000-of-00001").write_bytes(data)
    reader = tf.train.load_checkpoint(str(tmp_path / "bad"))
    np.testing.assert_array_equal(reader.get_tensor("wide"), WIDE)  # the others still read
    with pytest.raises(tf.errors.DataLossError, match="bad.index"):
        reader.get_tensor("emb")


def test_object_checkpoint_restores_parts_from_a_name_based_checkpoint():
    emb = v1.get_variable("emb", [7, 2], partitioner=v1.fixed_size_partitioner(2))
    status = tf.train.Checkpoint(parts=list(emb)).restore(FIXTURE)  # TF1 Saver's: by name
    status.assert_consumed()
    np.testing.assert_array_equal(tf.convert_to_tensor(emb).numpy(), EMB)

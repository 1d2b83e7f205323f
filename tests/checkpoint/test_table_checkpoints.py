"""Mutable lookup tables in checkpoints: `tf.train.Checkpoint` and the TF1 Saver save their
contents under TensorFlow's keys, restore them into fresh tables, and read checkpoints that
TensorFlow 2.21 wrote (tests/fixtures/mutable_table_checkpoint/generate.py)."""

import os

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures",
                        "mutable_table_checkpoint")


def _words():
    return tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)


def _ids(buckets=8):
    return tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, -1.0, empty_key=-1,
                                                 deleted_key=-2, initial_num_buckets=buckets)


def test_checkpoint_saves_tables_under_tensorflows_keys_and_restores_them(tmp_path):
    words, ids = _words(), _ids()
    words.insert(tf.constant(["a", "b", "c"]), tf.constant([1, 2, 3], tf.int64))
    ids.insert(tf.constant([5, 7], tf.int64), tf.constant([0.5, 0.7]))
    path = tf.train.Checkpoint(table=words, dense=ids).write(str(tmp_path / "ckpt"))

    reader = tf.train.load_checkpoint(path)
    shapes, kinds = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    assert {k: (shapes[k], kinds[k]) for k in shapes if k != "_CHECKPOINTABLE_OBJECT_GRAPH"} \
        == {"table/.ATTRIBUTES/table-keys": ([3], tf.string),
            "table/.ATTRIBUTES/table-values": ([3], tf.int64),
            "dense/.ATTRIBUTES/table-keys": ([8, 1], tf.int64),     # TF's bucket arrays:
            "dense/.ATTRIBUTES/table-values": ([8, 1], tf.float32)}  # key k in bucket k & 7
    assert reader.get_tensor("dense/.ATTRIBUTES/table-keys").ravel().tolist() == \
        [-1, -1, -1, -1, -1, 5, -1, 7]
    saved = dict(zip(reader.get_tensor("table/.ATTRIBUTES/table-keys").tolist(),
                     reader.get_tensor("table/.ATTRIBUTES/table-values").tolist()))
    assert saved == {b"a": 1, b"b": 2, b"c": 3}

    fresh_words, fresh_ids = _words(), _ids(buckets=32)
    fresh_words.insert(tf.constant(["stale"]), tf.constant([9], tf.int64))  # replaced
    tf.train.Checkpoint(table=fresh_words, dense=fresh_ids).read(path).assert_consumed()
    assert fresh_words.lookup(tf.constant(["a", "c", "stale"])).numpy().tolist() == [1, 3, -1]
    assert fresh_ids.lookup(tf.constant([5, 7, 1], tf.int64)).numpy().tolist() == \
        pytest.approx([0.5, 0.7, -1.0])
    assert int(fresh_ids.size()) == 2


def test_tables_filled_and_read_inside_tf_function_round_trip(tmp_path):
    table = _words()

    @tf.function
    def fill(keys, values):
        table.insert(keys, values)
        return table.size()

    fill(tf.constant(["x", "y"]), tf.constant([10, 20], tf.int64))
    path = tf.train.Checkpoint(table=table).write(str(tmp_path / "ckpt"))
    fresh = _words()

    @tf.function
    def look(keys):
        return fresh.lookup(keys)

    assert look(tf.constant(["x"])).numpy().tolist() == [-1]
    tf.train.Checkpoint(table=fresh).read(path)
    assert look(tf.constant(["x", "y", "z"])).numpy().tolist() == [10, 20, -1]


def test_checkpoint_in_a_tf1_session_saves_and_restores_tables(tmp_path):
    with tf.Graph().as_default():
        table = _words()
        fill = table.insert(tf.constant(["q"]), tf.constant([7], tf.int64))
        ckpt = tf.train.Checkpoint(table=table)
        with tf.compat.v1.Session() as sess:
            sess.run(fill)
            ckpt.write(str(tmp_path / "first"), session=sess)
            sess.graph.finalize()  # saving again adds no ops (MonitoredSession's graphs)
            path = ckpt.write(str(tmp_path / "ckpt"), session=sess)
    with tf.Graph().as_default():
        table = _words()
        look = table.lookup(tf.constant(["q", "r"]))
        with tf.compat.v1.Session() as sess:
            tf.train.Checkpoint(table=table).restore(path).run_restore_ops(sess)
            assert sess.run(look).tolist() == [7, -1]


def test_tf1_saver_saves_tables_by_name_in_graph_and_eagerly(tmp_path):
    with tf.Graph().as_default():
        table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="vocab")
        fill = table.insert(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
        tf.compat.v1.get_variable("w", [2])
        saver = tf.compat.v1.train.Saver()  # the table is in SAVEABLE_OBJECTS
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(fill)
            path = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    assert sorted(tf.train.load_checkpoint(path).get_variable_to_shape_map()) == \
        ["vocab-keys", "vocab-values", "w"]
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="vocab")
    w = tf.Variable([0.0, 0.0], name="w")
    tf.compat.v1.train.Saver([table, w]).restore(None, path)
    assert table.lookup(tf.constant(["a", "b", "c"])).numpy().tolist() == [1, 2, -1]
    other = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="other")
    with pytest.raises(tf.errors.NotFoundError, match="other-keys not found"):
        tf.compat.v1.train.Saver([other]).restore(None, path)


def test_restores_tensorflow_written_object_checkpoint():
    words, ids = _words(), _ids(buckets=4)
    names = tf.lookup.experimental.DenseHashTable(tf.string, tf.float32, 0.0, empty_key="",
                                                  deleted_key="$")
    tf.train.Checkpoint(words=words, ids=ids, names=names).read(
        os.path.join(FIXTURES, "object", "ckpt")).assert_consumed()
    assert words.lookup(tf.constant(["apple", "cherry", "kiwi"])).numpy().tolist() == \
        [1, 3, -1]
    assert ids.lookup(tf.constant([5, 7, 12], tf.int64)).numpy() == \
        pytest.approx(np.array([0.5, 0.7, -1.0]))  # 12 was erased: a deleted_key bucket
    assert int(ids.size()) == 2
    assert names.lookup(tf.constant(["a", "ccc", "d"])).numpy().tolist() == [1.0, 3.0, 0.0]
    # exported again, the string table's buckets are where TensorFlow put them (Hash64)
    reader = tf.train.load_checkpoint(os.path.join(FIXTURES, "object", "ckpt"))
    assert names.export()[0].numpy().tolist() == \
        reader.get_tensor("names/.ATTRIBUTES/table-keys").tolist()


def test_restores_tensorflow_written_saver_checkpoint():
    with tf.Graph().as_default():
        table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="vocab")
        w = tf.compat.v1.get_variable("w", [2])
        look = table.lookup(tf.constant(["x", "y", "z"]))
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as sess:
            saver.restore(sess, os.path.join(FIXTURES, "saver", "model"))
            assert sess.run(look).tolist() == [10, 20, -1]
            assert sess.run(w).tolist() == [1.5, -2.0]


def test_restoring_into_a_table_of_other_dtypes_is_an_error(tmp_path):
    words = _words()
    words.insert(tf.constant(["a"]), tf.constant([1], tf.int64))
    path = tf.train.Checkpoint(t=words).write(str(tmp_path / "ckpt"))
    wrong = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32, -1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="float"):
        tf.train.Checkpoint(t=wrong).read(path)


def test_saved_model_keeps_table_contents_as_tensorflow_writes_them(tmp_path):
    from ndflow.core.protos.saved_model_pb import SavedModel

    module = tf.Module()
    module.table = _words()
    module.table.insert(tf.constant(["x", "w"]), tf.constant([9, 4], tf.int64))
    module.lookup = tf.function(lambda k: module.table.lookup(k),
                                input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(tmp_path / "sm"))

    reader = tf.train.load_checkpoint(str(tmp_path / "sm" / "variables" / "variables"))
    saved = dict(zip(reader.get_tensor("table/.ATTRIBUTES/table-keys").tolist(),
                     reader.get_tensor("table/.ATTRIBUTES/table-values").tolist()))
    assert saved == {b"x": 9, b"w": 4}
    proto = SavedModel()
    proto.ParseFromString((tmp_path / "sm" / "saved_model.pb").read_bytes())
    nodes = proto.meta_graphs[0].object_graph_def.nodes
    table = nodes[[c.node_id for c in nodes[0].children if c.local_name == "table"][0]]
    functions = table.saveable_objects["table"]  # TF's save_fn/restore_fn nodes
    assert list(nodes[functions.save_function].bare_concrete_function.argument_keywords) \
        == ["checkpoint_key"]
    assert list(nodes[functions.restore_function].bare_concrete_function
                .argument_keywords) == ["restored_tensors_0", "restored_tensors_1"]

    module.table.insert(tf.constant(["x"]), tf.constant([0], tf.int64))  # not in the file
    loaded = tf.saved_model.load(str(tmp_path / "sm"))
    assert loaded.lookup(tf.constant(["x", "w", "y"])).numpy().tolist() == [9, 4, -1]
    with tf.Graph().as_default(), v1.Session() as sess:  # graph-level loaders: the saver
        meta = v1.saved_model.load(sess, ["serve"], str(tmp_path / "sm"))
        sig = meta.signature_def["serving_default"]
        assert sess.run(sig.outputs["output_0"].name,
                        {sig.inputs["k"].name: ["x", "w"]}).tolist() == [9, 4]
    saver_nodes = {n.op for n in proto.meta_graphs[0].graph_def.node
                   if n.name.startswith("save/")}
    assert {"LookupTableExportV2", "LookupTableImportV2"} <= saver_nodes


def test_saved_model_with_a_dense_table(tmp_path):
    module = tf.Module()
    module.table = _ids()
    module.table.insert(tf.constant([3, 12], tf.int64), tf.constant([0.3, 1.2]))
    module.lookup = tf.function(lambda k: module.table.lookup(k),
                                input_signature=[tf.TensorSpec([None], tf.int64)])
    tf.saved_model.save(module, str(tmp_path / "sm"))
    reader = tf.train.load_checkpoint(str(tmp_path / "sm" / "variables" / "variables"))
    assert reader.get_tensor("table/.ATTRIBUTES/table-keys").ravel().tolist() == \
        [-1, -1, -1, 3, 12, -1, -1, -1]  # TF's buckets: 3 & 7, 12 & 7
    loaded = tf.saved_model.load(str(tmp_path / "sm"))
    assert loaded.lookup(tf.constant([3, 12, 4], tf.int64)).numpy() == \
        pytest.approx([0.3, 1.2, -1.0])
    with tf.Graph().as_default(), v1.Session() as sess:  # the graph-level table and saver
        meta = v1.saved_model.load(sess, ["serve"], str(tmp_path / "sm"))
        sig = meta.signature_def["serving_default"]
        assert sess.run(sig.outputs["output_0"].name, {sig.inputs["k"].name: [12]}) == \
            pytest.approx([1.2])


def test_object_graph_is_tensorflows(tmp_path):
    from ndflow.checkpoint.restore import read_object_graph
    from ndflow.checkpoint.tensor_bundle import BundleReader

    fixture = os.path.join(FIXTURES, "object", "ckpt")
    names = tf.lookup.experimental.DenseHashTable(tf.string, tf.float32, 0.0, empty_key="",
                                                  deleted_key="$", initial_num_buckets=8)
    path = tf.train.Checkpoint(words=_words(), ids=_ids(), names=names).write(
        str(tmp_path / "ckpt"))  # the fixture's structure: attributes "table", keys
    assert read_object_graph(BundleReader(path)) == read_object_graph(BundleReader(fixture))

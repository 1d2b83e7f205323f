"""`tf.compat.v1.train.init_from_checkpoint` (TF1 fine-tuning) over TensorFlow 2.21's
partitioned checkpoint (tests/fixtures/partitioned_checkpoint): by name, by variable and by
scope, into other partitionings; outputs as TensorFlow's for the same program."""

import os

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "partitioned_checkpoint",
                       "saver", "model")
EMB = np.arange(14, dtype=np.float32).reshape(7, 2)
WIDE = (np.arange(390) / 10).astype(np.float32).reshape(130, 3)


def test_by_name_by_variable_and_into_other_partitionings():
    with tf.Graph().as_default():
        with v1.variable_scope("model"):
            emb = v1.get_variable("emb", [7, 2], partitioner=v1.fixed_size_partitioner(2))
            bias = v1.get_variable("bias", [2])
            other = v1.get_variable("other", [3], initializer=v1.ones_initializer())
        w = v1.get_variable("w", [130, 3], partitioner=v1.fixed_size_partitioner(5))
        v1.train.init_from_checkpoint(FIXTURE, {"emb": "model/emb", "bias": bias,
                                                "wide": w})
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(emb)), EMB)
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(w)), WIDE)
            assert sess.run(bias).tolist() == [0.5, -1.0]
            assert sess.run(other).tolist() == [1.0, 1.0, 1.0]  # not mapped: its own init


def test_root_scope_mapping_and_eager_assignment():
    with tf.Graph().as_default():
        emb = v1.get_variable("emb", [7, 2], partitioner=v1.fixed_size_partitioner(4))
        wide = v1.get_variable("wide", [130, 3])
        v1.get_variable("bias", [2])
        v1.train.init_from_checkpoint(FIXTURE, {"/": "/"})
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(emb)), EMB)
            np.testing.assert_array_equal(sess.run(wide), WIDE)
    bias = tf.Variable(np.zeros(2, np.float32))
    v1.train.init_from_checkpoint(FIXTURE, {"bias": bias})
    assert bias.numpy().tolist() == [0.5, -1.0]


def test_bad_mappings_name_the_tensor():
    with tf.Graph().as_default():
        v = v1.get_variable("v", [3])
        with pytest.raises(ValueError, match="Tensor nope is not found"):
            v1.train.init_from_checkpoint(FIXTURE, {"nope": v})
        with pytest.raises(ValueError, match="Shape of variable v:0 .* doesn't match"):
            v1.train.init_from_checkpoint(FIXTURE, {"bias": v})
        with pytest.raises(ValueError, match="Should be 'scope/': 'other_scope/'"):
            v1.train.init_from_checkpoint(FIXTURE, {"emb": "scope/"})


def test_warm_start_trainable_variables_renames_and_scopes():
    with tf.Graph().as_default():
        emb = v1.get_variable("emb", [7, 2], partitioner=v1.fixed_size_partitioner(2))
        bias = v1.get_variable("b", [2])
        wide = v1.get_variable("wide", [130, 3], trainable=False,
                               initializer=v1.zeros_initializer())
        v1.train.warm_start(FIXTURE, var_name_to_prev_var_name={"b": "bias"})
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(emb)), EMB)
            assert sess.run(bias).tolist() == [0.5, -1.0]
            assert not sess.run(wide).any()  # not trainable: left to its initializer
    with tf.Graph().as_default():
        wide = v1.get_variable("wide", [130, 3], trainable=False)
        v1.train.warm_start(FIXTURE, ["wide"])  # regexes over GLOBAL_VARIABLES
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(wide), WIDE)
        with pytest.raises(ValueError, match="var_name_to_prev_var_name that were not used"):
            v1.train.warm_start(FIXTURE, var_name_to_prev_var_name={"nope": "x"})
        with pytest.raises(ValueError, match="must be a `list` or `str`"):
            v1.train.warm_start(FIXTURE, vars_to_warm_start=3)


def test_warm_start_from_an_object_based_checkpoint(tmp_path):
    with tf.Graph().as_default():
        kernel = v1.get_variable("dense/kernel", initializer=tf.constant([[1.0, 2.0]]))
        with v1.Session() as sess:
            sess.run(kernel.initializer)
            path = tf.train.Checkpoint(k=kernel).write(str(tmp_path / "c"), session=sess)
    with tf.Graph().as_default():
        kernel = v1.get_variable("dense/kernel", [1, 2])
        v1.train.warm_start(path)  # "dense/kernel" found through the object graph
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            assert sess.run(kernel).tolist() == [[1.0, 2.0]]


def test_warm_start_remaps_rows_and_columns_between_vocabularies(tmp_path):
    """TensorFlow 2.21 gives the same values for this program."""
    (tmp_path / "old.txt").write_text("apple\nbanana\ncherry\n")
    (tmp_path / "new.txt").write_text("cherry\ndate\napple\n")
    with tf.Graph().as_default():
        v1.get_variable("emb", initializer=tf.constant(np.arange(6.0, dtype=np.float32)
                                                       .reshape(3, 2)))
        v1.get_variable("out", initializer=tf.constant(np.arange(6.0, dtype=np.float32)
                                                       .reshape(2, 3)))
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            path = v1.train.Saver().save(sess, str(tmp_path / "m"), write_meta_graph=False)
    new, old = str(tmp_path / "new.txt"), str(tmp_path / "old.txt")
    with tf.Graph().as_default():
        emb = v1.get_variable("emb", [4, 2], partitioner=v1.fixed_size_partitioner(2))
        out = v1.get_variable("out", [2, 4])
        v1.train.warm_start(path, var_name_to_vocab_info={
            "emb": v1.train.VocabInfo(new, 3, 1, old),  # rows; one OOV bucket row
            "out": v1.train.VocabInfo(new, 3, 1, old, axis=1)})  # columns
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            assert sess.run(tf.convert_to_tensor(emb)).tolist() == \
                [[4.0, 5.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
            assert sess.run(out).tolist() == [[2.0, 0.0, 0.0, 0.0], [5.0, 0.0, 3.0, 0.0]]
        with pytest.raises(ValueError, match="var_name_to_vocab_info that were not used"):
            v1.train.warm_start(path, [], var_name_to_vocab_info={
                "nope": v1.train.VocabInfo(new, 3, 0, old)})

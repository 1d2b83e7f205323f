"""tf.lookup tables: StaticHashTable, StaticVocabularyTable (out-of-vocabulary buckets equal to
TensorFlow 2.21's, tests/fixtures/tf_lookup), text-file and key-value initializers,
MutableHashTable; eagerly, in tf.function, in Dataset.map and in TF1 Sessions."""

import json
import os

import numpy as np
import pytest

import ndflow as tf

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_lookup")
with open(os.path.join(HERE, "expected.json"), encoding="utf-8") as _f:
    TF = json.load(_f)
VOCAB = os.path.join(HERE, "vocab.txt")


def _ids(table, keys, dtype):
    return table.lookup(tf.constant(keys, dtype)).numpy().tolist()


def _vocab():
    return tf.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"],
                                               tf.constant([0, 1, 2], tf.int64))


@pytest.mark.parametrize("n", [1, 5, 13])
def test_vocabulary_table_string_buckets_match_tensorflow(n):
    table = tf.lookup.StaticVocabularyTable(_vocab(), n)
    assert _ids(table, TF["strings"], tf.string) == TF[f"string_vocab_oov{n}"]
    assert int(table.size()) == 3 + n
    only = tf.lookup.StaticVocabularyTable(None, n)
    assert _ids(only, TF["strings"], tf.string) == TF[f"no_vocab_oov{n}"]
    assert only.resource_handle is None and int(only.size()) == n


def test_vocabulary_table_integer_keys_match_tensorflow():
    ints = tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20, 30], tf.int64),
                                               tf.constant([0, 1, 2], tf.int64))
    assert _ids(tf.lookup.StaticVocabularyTable(ints, 4), TF["ints"], tf.int64) == \
        TF["int_vocab_oov4"]
    table = tf.lookup.StaticVocabularyTable(ints, 4, lookup_key_dtype=tf.int32)
    assert _ids(table, TF["ints32"], tf.int32) == TF["int32_keys_oov4"]


def test_text_file_initializers_match_tensorflow():
    whole = tf.lookup.TextFileInitializer(VOCAB, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
                                          tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER)
    assert _ids(tf.lookup.StaticHashTable(whole, -1), ["lake\t20", "palmer\t30", "lake"],
                tf.string) == TF["text_whole_line"]
    cols = tf.lookup.TextFileInitializer(VOCAB, tf.string, 0, tf.int64, 1, delimiter="\t")
    assert _ids(tf.lookup.StaticHashTable(cols, -1), ["palmer", "lake", "tarkus"],
                tf.string) == TF["text_columns"]
    offset = tf.lookup.TextFileInitializer(VOCAB, tf.string, 0, tf.int64,
                                           tf.lookup.TextFileIndex.LINE_NUMBER,
                                           value_index_offset=5)
    table = tf.lookup.StaticVocabularyTable(offset, 3)
    assert _ids(table, TF["strings"], tf.string) == TF["text_oov3_offset5"]
    assert int(table.size()) == TF["text_vocab_size"]


def test_static_hash_table_against_a_dict():
    rng = np.random.default_rng(3)
    keys = rng.choice(1000, 50, replace=False).astype(np.int64)
    values = rng.normal(size=50).astype(np.float32)
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values), -1.5)
    probe = rng.integers(0, 1000, (4, 6)).astype(np.int64)
    expected = np.vectorize(dict(zip(keys.tolist(), values.tolist())).get)(probe, -1.5)
    got = table[tf.constant(probe)]
    assert got.dtype == tf.float32 and got.shape == (4, 6)
    np.testing.assert_array_equal(got.numpy(), expected.astype(np.float32))
    assert int(table.size()) == 50 and table.default_value.numpy() == np.float32(-1.5)
    k, v = table.export()
    assert dict(zip(k.numpy().tolist(), v.numpy().tolist())) == \
        dict(zip(keys.tolist(), values.tolist()))


def test_sparse_keys_give_sparse_values():
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]),
                                      0)
    sp = tf.SparseTensor([[0, 0], [1, 2]], tf.constant(["b", "z"]), [2, 3])
    out = table.lookup(sp)
    assert isinstance(out, tf.SparseTensor)
    assert out.values.numpy().tolist() == [2, 0]
    assert out.indices.numpy().tolist() == [[0, 0], [1, 2]]


def test_tables_in_tf_function_and_dataset_map():
    table = tf.lookup.StaticVocabularyTable(_vocab(), 5)

    @tf.function
    def ids(x):
        return table.lookup(x) * 10

    assert ids(tf.constant(["lake", "tarkus"])).numpy().tolist() == \
        [10, 10 * TF["string_vocab_oov5"][3]]
    ds = tf.data.Dataset.from_tensor_slices(TF["strings"]).map(
        table.lookup, num_parallel_calls=2).batch(4).prefetch(2)
    assert np.concatenate(list(ds.as_numpy_iterator())).tolist() == TF["string_vocab_oov5"]


def test_table_made_inside_tf_function():
    @tf.function
    def make_and_look(x):
        t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [5]), -1)
        return t.lookup(x)

    assert make_and_look(tf.constant(["a", "b"])).numpy().tolist() == [5, -1]


def test_tf1_session_needs_tables_initializer():
    g = tf.Graph()
    with g.as_default():
        init = tf.compat.v1.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2])
        table = tf.compat.v1.lookup.StaticHashTable(init, default_value=-1)
        vocab = tf.compat.v1.lookup.StaticVocabularyTable(_vocab(), 5)
        out = table.lookup(tf.constant(["a", "c"]))
        ids = vocab.lookup(tf.constant(["palmer", "tarkus"]))
        assert out.shape.as_list() == [2] and table.initializer is not None
        with tf.compat.v1.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="not initialized"):
                sess.run(out)
            sess.run(tf.compat.v1.tables_initializer())
            assert sess.run(out).tolist() == [1, -1]
            assert sess.run(ids).tolist() == [2, TF["string_vocab_oov5"][3]]


def test_mutable_hash_table():
    t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
    t.insert(tf.constant(["x", "y", "z"]), tf.constant([1, 2, 3], tf.int64))
    t.insert(tf.constant(["y"]), tf.constant([20], tf.int64))
    t.remove(tf.constant(["x", "missing"]))
    assert t.lookup(tf.constant(["x", "y", "z"])).numpy().tolist() == [-1, 20, 3]
    assert t.lookup(tf.constant(["x", "q"]), dynamic_default_values=tf.constant(
        [7, 8], tf.int64)).numpy().tolist() == [7, 8]
    assert int(t.size()) == 2

    @tf.function
    def bump(k):
        t.insert(k, t.lookup(k) + 100)
        return t.lookup(k)

    assert bump(tf.constant(["z"])).numpy().tolist() == [103]


def test_bad_input_errors():
    init = tf.lookup.KeyValueTensorInitializer(["a"], [1])
    table = tf.lookup.StaticHashTable(init, -1)
    with pytest.raises(TypeError, match="Dtype of argument `keys` must be"):
        table.lookup(tf.constant([1]))
    with pytest.raises(ValueError, match="must be > 0; use StaticHashTable"):
        tf.lookup.StaticVocabularyTable(_vocab(), 0)
    with pytest.raises(TypeError, match="Invalid `value_dtype`"):
        tf.lookup.StaticVocabularyTable(init, 3)
    with pytest.raises(tf.errors.FailedPreconditionError, match="different value for same key"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 2]), 0)
    with pytest.raises(tf.errors.NotFoundError):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            "/nonexistent/vocab.txt", tf.string, 0, tf.int64, 1), -1)
    with pytest.raises(ValueError, match="`key_dtype` must be int64 for `key_index` -1"):
        tf.lookup.TextFileInitializer(VOCAB, tf.string, -1, tf.int64, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="vocab_size"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            VOCAB, tf.string, 0, tf.int64, 1, vocab_size=9), -1)


def test_dense_hash_table_and_its_reserved_keys():
    t = tf.lookup.experimental.DenseHashTable(tf.string, tf.int64, -1, empty_key="",
                                              deleted_key="$", initial_num_buckets=8)
    t.insert(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
    t.erase(tf.constant(["a"]))
    assert t.lookup(tf.constant(["a", "b", "z"])).numpy().tolist() == [-1, 2, -1]
    assert int(t.size()) == 1
    for key, role in (("", "empty_key"), ("$", "deleted_key")):  # TensorFlow's errors
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=f"Using the {role} as a table key is not allowed"):
            t.insert(tf.constant([key]), tf.constant([3], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Empty and deleted keys cannot"):
        tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=0,
                                              deleted_key=0)
    d = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, 0.5, empty_key=-1,
                                              deleted_key=-2)
    d.insert_or_assign(tf.constant([3, 4], tf.int64), tf.constant([1.0, 2.0]))
    assert d[tf.constant([[3, 9]], tf.int64)].numpy().tolist() == [[1.0, 0.5]]


def test_tf1_table_initializer_is_none_eagerly():
    # TF 2.21, executing eagerly (the initializer op ran when the table was made; its op has
    # no outputs, so TF's wrapper returns None):
    #   init = tf.lookup.KeyValueTensorInitializer(["a"], [1], tf.string, tf.int64)
    #   tf.compat.v1.lookup.StaticVocabularyTable(init, 1).initializer -> None
    #   tf.compat.v1.lookup.StaticHashTable(init, -1).initializer -> None
    init = tf.lookup.KeyValueTensorInitializer(["a"], [1], tf.string, tf.int64)
    vocab = tf.compat.v1.lookup.StaticVocabularyTable(init, 1)
    assert vocab.initializer is None
    assert vocab.lookup(tf.constant(["a"])).numpy().tolist() == [1]
    table = tf.compat.v1.lookup.StaticHashTable(init, -1)
    assert table.initializer is None
    assert table.lookup(tf.constant(["a", "b"])).numpy().tolist() == [1, -1]

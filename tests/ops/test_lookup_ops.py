"""The lookup-table ops (ops/lookup_ops.py) run eagerly and in graphs with TensorFlow's
semantics and errors: read-only tables initialized once, mutable ones updated, string and
integer keys, text-file initialization."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.ops import lookup_ops as ops
from ndflow.ops.apply import apply_op


def table(key_dtype, value_dtype, mutable=False, name="t"):
    op = ops.MutableHashTableV2 if mutable else ops.HashTableV2
    return apply_op(op, [], {"key_dtype": key_dtype, "value_dtype": value_dtype,
                             "shared_name": name}).outputs[0]


def run(op, *inputs, **attrs):
    return apply_op(op, list(inputs), attrs).outputs


def test_static_string_table_import_find_size_export():
    h = table(tf.string, tf.int64, name="static_strings")
    run(ops.LookupTableImportV2, h, tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
    (out,) = run(ops.LookupTableFindV2, h, tf.constant([["b", "x"], ["a", "a"]]),
                 tf.constant(-1, tf.int64))
    assert out.numpy().tolist() == [[2, -1], [1, 1]]
    assert int(run(ops.LookupTableSizeV2, h)[0].numpy()) == 2
    keys, values = run(ops.LookupTableExportV2, h, Tkeys=tf.string, Tvalues=tf.int64)
    assert dict(zip(keys.numpy().tolist(), values.numpy().tolist())) == {b"a": 1, b"b": 2}
    # initialized again only with the same contents
    run(ops.LookupTableImportV2, h, tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
    with pytest.raises(tf.errors.FailedPreconditionError, match="already initialized"):
        run(ops.LookupTableImportV2, h, tf.constant(["a"]), tf.constant([5], tf.int64))


def test_errors_are_tensorflows():
    h = table(tf.int64, tf.string, name="errors")
    with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized"):
        run(ops.LookupTableFindV2, h, tf.constant([1], tf.int64), tf.constant(""))
    with pytest.raises(tf.errors.FailedPreconditionError, match="different value for same key"):
        run(ops.LookupTableImportV2, h, tf.constant([1, 1], tf.int64), tf.constant(["a", "b"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key must be type int64 but got "
                       "int32"):
        run(ops.LookupTableImportV2, h, tf.constant([1]), tf.constant(["a"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected shape"):
        run(ops.LookupTableImportV2, h, tf.constant([1, 2], tf.int64), tf.constant(["a"]))


def test_mutable_table_insert_remove_and_a_default_per_key():
    h = table(tf.int64, tf.float32, mutable=True, name="mutable")
    run(ops.LookupTableInsertV2, h, tf.constant([3, 4], tf.int64), tf.constant([0.5, 1.5]))
    run(ops.LookupTableInsertV2, h, tf.constant([4], tf.int64), tf.constant([2.5]))
    run(ops.LookupTableRemoveV2, h, tf.constant([3], tf.int64))
    (out,) = run(ops.LookupTableFindV2, h, tf.constant([3, 4], tf.int64),
                 tf.constant([-1.0, -2.0]))
    np.testing.assert_array_equal(out.numpy(), [-1.0, 2.5])
    static = table(tf.int64, tf.float32, name="read_only")
    with pytest.raises(tf.errors.FailedPreconditionError, match="read-only"):
        run(ops.LookupTableInsertV2, static, tf.constant([1], tf.int64), tf.constant([1.0]))


def test_text_file_initialization_in_a_graph(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("cat\t7\ndog\t9\n")

    @tf.function
    def lookup(words):
        h = table(tf.string, tf.int64, name="text_file")
        apply_op(ops.InitializeTableFromTextFileV2, [h, tf.constant(str(vocab))],
                 {"key_index": 0, "value_index": 1, "delimiter": "\t"})
        return run(ops.LookupTableFindV2, h, words, tf.constant(0, tf.int64))[0]

    assert lookup(tf.constant(["dog", "cow", "cat"])).numpy().tolist() == [9, 0, 7]
    by_line = table(tf.string, tf.int64, name="by_line")
    run(ops.InitializeTableFromTextFileV2, by_line, tf.constant(str(vocab)), key_index=-2,
        value_index=-1, delimiter="\t")
    (out,) = run(ops.LookupTableFindV2, by_line, tf.constant(["dog\t9"]),
                 tf.constant(-1, tf.int64))
    assert out.numpy().tolist() == [1]
    missing = table(tf.string, tf.int64, name="missing")
    with pytest.raises(tf.errors.NotFoundError, match="nope.txt"):
        run(ops.InitializeTableFromTextFileV2, missing, tf.constant(str(tmp_path / "nope.txt")),
            key_index=-2, value_index=-1)

"""Ragged elements in tf.data: from_tensor_slices of a RaggedTensor, map returning ragged,
batch/unbatch of ragged elements, ragged_batch and dense_to_ragged_batch, with the
element_specs TensorFlow 2.21 gives (RaggedTensorSpec; ragged_rank 0 for dense rows)."""

from __future__ import annotations

import numpy as np

import ndflow as tf

ROWS = [[1, 2], [], [3, 4, 5], [6]]


def _lists(ds):
    return [x.to_list() if isinstance(x, tf.RaggedTensor) else x.numpy().tolist() for x in ds]


def test_slices_of_a_ragged_tensor_are_dense_rows():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    assert ds.element_spec == tf.RaggedTensorSpec([None], tf.int32, 0)
    assert _lists(ds) == ROWS
    nested = tf.data.Dataset.from_tensor_slices(
        {"a": tf.ragged.constant([[[1], [2, 3]], [[4]]]), "b": [1, 2]})
    assert nested.element_spec["a"] == tf.RaggedTensorSpec([None, None], tf.int32, 1)
    got = [(e["a"].to_list(), int(e["b"])) for e in nested]
    assert got == [([[1], [2, 3]], 1), ([[4]], 2)]


def test_batch_and_ragged_batch():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    batched = ds.batch(3)
    assert batched.element_spec == tf.RaggedTensorSpec([None, None], tf.int32, 1)
    assert _lists(batched) == [ROWS[:3], ROWS[3:]]
    assert ds.ragged_batch(3, drop_remainder=True).element_spec == \
        tf.RaggedTensorSpec([3, None], tf.int32, 1)
    assert _lists(ds.ragged_batch(3, drop_remainder=True)) == [ROWS[:3]]
    assert _lists(batched.unbatch()) == ROWS
    dense = tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).ragged_batch(2)
    assert dense.element_spec == tf.TensorSpec([None, 2], tf.int32)  # fully defined: dense
    assert _lists(dense) == [[[1, 2], [3, 4]]]


def test_map_returning_ragged_and_batch_adds_a_ragged_dimension():
    ds = tf.data.Dataset.range(4).map(lambda x: tf.ragged.range(x))
    assert ds.element_spec == tf.RaggedTensorSpec([1, None], tf.int64, 1)
    assert _lists(ds) == [[[]], [[0]], [[0, 1]], [[0, 1, 2]]]
    batched = ds.batch(2)
    assert batched.element_spec == tf.RaggedTensorSpec([None, 1, None], tf.int64, 2)
    assert _lists(batched) == [[[[]], [[0]]], [[[0, 1]], [[0, 1, 2]]]]
    sums = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS)).batch(2).map(
        lambda x: tf.reduce_sum(x, axis=1))
    assert _lists(sums) == [[3, 0], [12, 6]]


def test_dense_to_ragged_batch_and_graph_iteration():
    ds = tf.data.Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6]]).map(lambda x: x[:x[0]])
    rb = ds.apply(tf.data.experimental.dense_to_ragged_batch(2))
    assert rb.element_spec == tf.RaggedTensorSpec([None, None], tf.int32, 1)
    assert _lists(rb) == [[[1], [4, 5, 6]]]
    deep = tf.data.Dataset.from_tensors(np.zeros([2, 3], np.float32)).map(
        lambda x: x[:, :tf.cast(tf.reduce_sum(x) + 2, tf.int32)]).ragged_batch(1)
    assert deep.element_spec == tf.RaggedTensorSpec([None, 2, None], tf.float32, 2)
    assert _lists(deep) == [[[[0.0, 0.0], [0.0, 0.0]]]]

    @tf.function
    def total(d):
        s = tf.constant(0)
        for x in d:
            s += tf.reduce_sum(x)
        return s

    assert int(total(tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
                     .ragged_batch(2))) == 21


def test_as_numpy_iterator_gives_object_arrays_of_rows():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS)).ragged_batch(2)
    first = next(ds.as_numpy_iterator())
    assert first.dtype == object and [r.tolist() for r in first] == [[1, 2], []]


def test_ragged_batch_of_generated_elements_with_two_unknown_dims():
    ds = tf.data.Dataset.from_generator(
        lambda: iter([np.zeros([1, 2], np.float32), np.zeros([1, 3], np.float32)]),
        output_signature=tf.TensorSpec([None, None], tf.float32))
    batched = ds.ragged_batch(2)                   # ragged_rank 1: both dims may vary
    assert batched.element_spec == tf.RaggedTensorSpec([None, None, None], tf.float32, 2)
    assert [x.to_list() for x in batched] == [[[[0.0, 0.0]], [[0.0, 0.0, 0.0]]]]


def test_generator_of_ragged_values_and_padded_batch_refused():
    def gen():
        yield tf.ragged.constant([[1], [2, 3]])
        yield tf.ragged.constant([[4, 5, 6]])

    ds = tf.data.Dataset.from_generator(
        gen, output_signature=tf.RaggedTensorSpec([None, None], tf.int32, 1))
    assert [x.to_list() for x in ds] == [[[1], [2, 3]], [[4, 5, 6]]]
    try:
        tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS)).padded_batch(2)
    except TypeError as e:
        assert "only supported for datasets that produce tensor elements" in str(e)
    else:
        raise AssertionError("padded_batch of ragged elements must be a TypeError, as TF")


def test_cache_save_load_and_window_keep_ragged_elements(tmp_path):
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS)).ragged_batch(2)
    want = [ROWS[:2], ROWS[2:]]
    cached = ds.cache(str(tmp_path / "cache"))
    assert _lists(cached) == want and _lists(cached) == want
    ds.save(str(tmp_path / "saved"))
    loaded = tf.data.Dataset.load(str(tmp_path / "saved"))
    assert loaded.element_spec == ds.element_spec and _lists(loaded) == want
    windows = tf.data.Dataset.from_tensor_slices(
        {"a": tf.ragged.constant(ROWS), "b": [1, 2, 3, 4]}).window(2)
    assert windows.element_spec["a"].element_spec == tf.RaggedTensorSpec([None], tf.int32, 0)
    assert _lists(windows.flat_map(lambda w: w["a"].ragged_batch(2))) == want

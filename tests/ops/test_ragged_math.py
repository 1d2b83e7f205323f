"""Ragged math (operators, map_flat_values, reductions, concat) and RaggedTensor as a
composite tensor (tf.nest, tf.function arguments/results, input_signature, graphs)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

ROWS = [[1, 2], [], [3, 4, 5]]


def test_operators_and_map_flat_values():
    rt = tf.ragged.constant(ROWS)
    assert (rt + 1).to_list() == [[2, 3], [], [4, 5, 6]]
    assert (2 * rt).to_list() == [[2, 4], [], [6, 8, 10]]
    assert (rt * rt).to_list() == [[1, 4], [], [9, 16, 25]]
    assert (-rt).to_list() == [[-1, -2], [], [-3, -4, -5]]
    assert abs(-rt).to_list() == ROWS and (rt // 2).to_list() == [[0, 1], [], [1, 2, 2]]
    assert (rt > 2).to_list() == [[False, False], [], [True, True, True]]
    assert tf.ragged.map_flat_values(tf.math.square, rt).to_list() == \
        [[1, 4], [], [9, 16, 25]]
    other = tf.ragged.constant([[1], [2, 3]])
    with pytest.raises(tf.errors.InvalidArgumentError):
        rt + other


def test_reductions_against_numpy():
    rt = tf.ragged.constant([[1.0, 2.0], [], [3.0, 4.0, 5.0]])
    rows = [np.array(r) for r in [[1.0, 2.0], [], [3.0, 4.0, 5.0]]]
    np.testing.assert_allclose(tf.reduce_sum(rt, axis=1).numpy(), [r.sum() for r in rows])
    np.testing.assert_allclose(tf.reduce_mean(rt, axis=1).numpy(), [1.5, np.nan, 4.0])
    lowest = np.finfo(np.float32).min     # an empty row: the lowest value, as TensorFlow
    np.testing.assert_allclose(tf.reduce_max(rt, axis=1).numpy(), [2.0, lowest, 5.0])
    np.testing.assert_allclose(tf.reduce_sum(rt, axis=0).numpy(), [4.0, 6.0, 5.0])
    assert float(tf.reduce_sum(rt)) == 15.0
    ints = tf.ragged.constant(ROWS)
    mean = tf.reduce_mean(ints, axis=1)
    assert mean.dtype is tf.float64          # TensorFlow's integer ragged mean
    assert tf.reduce_max(ints, axis=1).numpy().tolist() == [2, np.iinfo(np.int32).min, 5]
    nested = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert tf.reduce_sum(nested, axis=2).to_list() == [[3, 3], [4]]
    np.testing.assert_array_equal(tf.reduce_sum(ints, axis=1, keepdims=True).numpy(),
                                  [[3], [0], [12]])


def test_reductions_over_ragged_rows_of_rows():
    r3 = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]], []])     # TF 2.21's results:
    assert tf.reduce_sum(r3, axis=1).to_list() == [[4, 2], [4, 5, 6], []]
    assert tf.reduce_sum(r3, axis=0).to_list() == [[5, 7, 6], [3]]
    assert tf.reduce_max(r3, axis=1).to_list() == [[3, 2], [4, 5, 6], []]
    assert tf.reduce_mean(r3, axis=1).to_list() == [[2.0, 2.0], [4.0, 5.0, 6.0], []]


def test_concat_along_rows_axis1():
    a = tf.ragged.constant([[1, 2], [], [3]])
    b = tf.ragged.constant([[4], [5, 6], []])
    assert tf.concat([a, b], axis=1).to_list() == [[1, 2, 4], [5, 6], [3]]
    bos_eos = tf.concat([tf.fill([3, 1], 0), a, tf.fill([3, 1], 9)], axis=-1)
    assert bos_eos.to_list() == [[0, 1, 2, 9], [0, 9], [0, 3, 9]]
    nested = tf.ragged.constant([[[1], [2, 3]], [[4]]])
    assert tf.concat([nested, nested], 1).to_list() == [[[1], [2, 3], [1], [2, 3]], [[4], [4]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible shapes"):
        tf.concat([a, tf.ragged.constant([[1]])], axis=1)


def test_concat_axis0():
    a = tf.ragged.constant([[1], [2, 3]])
    b = tf.ragged.constant([[], [4, 5, 6]])
    assert tf.concat([a, b], axis=0).to_list() == [[1], [2, 3], [], [4, 5, 6]]
    nested = tf.ragged.constant([[[1]], [[2, 3], []]])
    assert tf.concat([nested, nested], 0).to_list() == [[[1]], [[2, 3], []]] * 2


def test_nest_expands_composites_only_when_asked():
    rt = tf.ragged.constant(ROWS)
    assert tf.nest.flatten(rt) == [rt]
    flat = tf.nest.flatten({"a": rt}, expand_composites=True)
    assert [t.numpy().tolist() for t in flat] == [[1, 2, 3, 4, 5], [0, 2, 2, 5]]
    rebuilt = tf.nest.pack_sequence_as({"a": rt}, [f * 10 for f in flat[:1]] + flat[1:],
                                       expand_composites=True)
    assert rebuilt["a"].to_list() == [[10, 20], [], [30, 40, 50]]
    same = tf.nest.map_structure(tf.identity, [rt], expand_composites=True)
    assert isinstance(same[0], tf.RaggedTensor) and same[0].to_list() == ROWS
    assert tf.nest.map_structure(lambda t: t, [rt]) [0] is rt
    spec = tf.RaggedTensorSpec([3, None], tf.int32, 1)
    assert rt._type_spec == spec
    assert [s.shape.as_list() for s in tf.nest.flatten(spec, expand_composites=True)] == \
        [[None], [4]]


def test_spec_properties():
    spec = tf.RaggedTensorSpec([None, None, 2], tf.float32)
    assert spec.ragged_rank == 2 and spec.row_splits_dtype is tf.int64
    assert repr(spec) == "RaggedTensorSpec(TensorShape([None, None, 2]), tf.float32, 2, tf.int64)"
    assert spec.is_compatible_with(tf.ragged.constant([[[1.0, 2.0]]], ragged_rank=2))
    assert not spec.is_compatible_with(tf.RaggedTensorSpec([None, None], tf.float32))


def test_tf_function_arguments_results_and_signature():
    traces = []

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.int32, 1)])
    def f(x):
        traces.append(x)
        return x + 1, tf.reduce_sum(x, axis=1), x.to_tensor()

    plus, sums, dense = f(tf.ragged.constant(ROWS))
    assert isinstance(plus, tf.RaggedTensor) and plus.to_list() == [[2, 3], [], [4, 5, 6]]
    assert sums.numpy().tolist() == [3, 0, 12]
    assert dense.numpy().tolist() == [[1, 2, 0], [0, 0, 0], [3, 4, 5]]
    assert f(tf.ragged.constant([[7], [8, 9]]))[0].to_list() == [[8], [9, 10]]
    assert len(traces) == 1 and isinstance(traces[0], tf.RaggedTensor)


def test_validation_in_a_graph_fails_at_run_time():
    @tf.function
    def make(values, splits):
        return tf.RaggedTensor.from_row_splits(values, splits)

    good = make(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 1, 3], tf.int64))
    assert good.to_list() == [[1.0], [2.0, 3.0]]
    with pytest.raises(tf.errors.InvalidArgumentError):
        make(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 1, 2], tf.int64))


def test_elementwise_apis_dispatch_on_ragged_arguments():
    rt = tf.ragged.constant([[1.0, 4.0], [], [9.0]])
    assert tf.math.sqrt(rt).to_list() == [[1.0, 2.0], [], [3.0]]
    assert tf.add(rt, 1.0).to_list() == [[2.0, 5.0], [], [10.0]]
    assert tf.maximum(rt, rt * 2).to_list() == [[2.0, 8.0], [], [18.0]]
    assert tf.cast(rt, tf.int32).dtype is tf.int32
    words = tf.strings.split(["The Cat", "sat"])
    assert tf.strings.lower(words).to_list() == [[b"the", b"cat"], [b"sat"]]
    assert tf.strings.length(words).to_list() == [[3, 3], [3]]
    assert tf.add is tf.math.add                      # one wrapper per object
    with pytest.raises(ValueError, match="from_tensor"):
        tf.add(rt, [1.0, 2.0])                        # no silent wrong broadcasting


def test_map_fn_over_ragged_rows():
    rt = tf.ragged.constant(ROWS)
    assert tf.map_fn(tf.reduce_sum, rt, fn_output_signature=tf.int32).numpy().tolist() == \
        [3, 0, 12]

    @tf.function
    def sizes(x):
        return tf.map_fn(tf.size, x, fn_output_signature=tf.int32)

    assert sizes(rt).numpy().tolist() == [2, 0, 3]
    # TF's default signature: rows in, rows out (a RaggedTensor); a scalar result needs one
    assert tf.map_fn(lambda r: r * 2, rt).to_list() == [[2, 4], [], [6, 8, 10]]
    with pytest.raises(ValueError, match="fn_output_signature"):
        tf.map_fn(tf.reduce_sum, rt)


def test_gradients_flow_through_ragged_ops():
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        rt = tf.RaggedTensor.from_row_lengths(v * 2.0, [2, 1])
        y = tf.reduce_sum(tf.reduce_max(rt, axis=1)) + tf.reduce_sum(rt.to_tensor())
    assert tape.gradient(y, v).numpy().tolist() == [2.0, 4.0, 4.0]   # TensorFlow's values

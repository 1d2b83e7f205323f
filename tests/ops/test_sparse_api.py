"""tf.sparse functions against TensorFlow 2.21's results (tests/fixtures/sparse_ops, the calls
in sparse_cases.py), eagerly and inside tf.function; string values; TF1 Sessions; TF's errors."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sparse_ops"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())
sys.path.insert(0, str(FIXTURE))
try:
    from sparse_cases import cases, to_python  # noqa: E402
finally:
    sys.path.remove(str(FIXTURE))

CASES = cases(tf)


def _close(actual, expected):
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected):
            _close(a, e)
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=1e-6, abs=1e-7)
    else:
        assert actual == expected


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_eager_matches_tensorflow(name):
    want = EXPECTED[name]
    if "error" in want:
        with pytest.raises(getattr(tf.errors, want["error"], None) or ValueError) as e:
            CASES[name]()
        assert type(e.value).__name__ == want["error"]
        assert want["message"].split("}} ")[-1].split(" [Op:")[0] in str(e.value)
        return
    _close(to_python(CASES[name]()), want["value"])


GRAPH_CASES = ["from_dense", "retain", "reset_none", "ind", "transpose3", "expand1", "eye",
               "map", "str_fill", "str_concat_expand", "str_split", "rsum_sparse_keep",
               "matmul_dense_first", "add_thresh", "softmax3", "mask"]


@pytest.mark.parametrize("name", GRAPH_CASES)
def test_tf_function_matches_tensorflow(name):
    _close(to_python(tf.function(CASES[name])()), EXPECTED[name]["value"])


def test_session_runs_sparse_ops_fed_by_placeholders():
    g = tf.Graph()
    with g.as_default():
        idx = tf.compat.v1.placeholder(tf.int64, [None, 2])
        vals = tf.compat.v1.placeholder(tf.float32, [None])
        sp = tf.SparseTensor(idx, vals, [3, 4])
        total = tf.sparse.reduce_sum(tf.sparse.reorder(sp), axis=1)
        dense = tf.sparse.to_dense(tf.sparse.reshape(sp, [4, 3]))
        grad = tf.gradients(tf.reduce_sum(tf.sparse.sparse_dense_matmul(sp, tf.ones([4, 2]))),
                            vals)[0]
    with tf.compat.v1.Session(graph=g) as sess:
        # sorted indices: tf.sparse.to_dense rejects others, as TF's SparseToDense
        out = sess.run([total, dense, grad], {idx: [[0, 3], [2, 1]], vals: [7.0, 5.0]})
    np.testing.assert_allclose(out[0], [7.0, 0.0, 5.0])
    np.testing.assert_allclose(out[1], np.array([0, 0, 0, 7, 0, 0, 0, 0, 0, 5, 0, 0.0])
                               .reshape(4, 3))
    np.testing.assert_allclose(out[2], [2.0, 2.0])


def test_parsed_var_len_feature_post_processing():
    # The usual pipeline: a VarLenFeature's SparseTensor, filled and densified per batch.
    examples = [tf.train.Example(features=tf.train.Features(feature={
        "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=v))})).SerializeToString()
        for v in ([3, 1], [], [2])]
    sp = tf.io.parse_example(examples, {"ids": tf.io.VarLenFeature(tf.int64)})["ids"]
    filled, empty = tf.sparse.fill_empty_rows(sp, tf.constant(-1, tf.int64))
    np.testing.assert_array_equal(tf.sparse.to_dense(filled).numpy(), [[3, 1], [-1, 0], [2, 0]])
    np.testing.assert_array_equal(empty.numpy(), [False, True, False])
    np.testing.assert_array_equal(tf.sparse.to_indicator(sp, 4).numpy(),
                                  [[0, 1, 0, 1], [0, 0, 0, 0], [0, 0, 1, 0]])


SP = tf.SparseTensor([[0, 5], [1, 0]], [1.0, 2.0], [2, 3])
ERRORS = [
    (lambda: tf.sparse.sparse_dense_matmul(SP, tf.ones([3, 2])),
     "k (5) from index[0,1] out of bounds (>=3)"),
    (lambda: tf.sparse.add(SP, tf.SparseTensor([[0, 1]], [1.0], [2, 4])),
     "Operands' shapes do not match: got 3 and 4 for dimension 1"),
    (lambda: tf.sparse.reshape(SP, [4, 2]),
     "Input to reshape is a tensor with 6 dense values, but the requested shape has 8. "
     "input_shape=[2,3] output_shape=[4,2]"),
    (lambda: tf.sparse.reshape(SP, [-1, -1]), "only one output dimension may be -1, not both 0 "
     "and 1"),
    (lambda: tf.sparse.concat(0, [SP, tf.SparseTensor([[0]], [1.0], [2])]),
     "Ranks of all input tensors must match: expected 2 but got 1 at position 1"),
    (lambda: tf.sparse.concat(1, [SP, tf.SparseTensor([[0, 1]], [1.0], [3, 3])]),
     "Input shapes must match: expected 2 for dimension 0 but got 3 at position 1"),
    (lambda: tf.sparse.reduce_sum(SP, 2), "Invalid reduction dimension 2, for input with 2 "
     "dimensions."),
    (lambda: tf.sparse.split(sp_input=SP, num_split=4, axis=1),
     "Input num_split should be between 1 and the splitting dimension size (3), got 4"),
    (lambda: tf.sparse.fill_empty_rows(tf.SparseTensor([[5, 1]], [1.0], [4, 3]), 9.0),
     "indices(0, 0) is invalid: 5 >= 4"),
    (lambda: tf.sparse.segment_sum(tf.ones([3, 2]), [0, 2, 5], [0, 0, 1]),
     "Bad: indices[2] == 5 out of range [0, 3)"),
    (lambda: tf.sparse.to_dense(SP), "indices[0] = [0,5] is out of bounds: need 0 <= index < "
     "[2,3]"),
    (lambda: tf.sparse.add(SP, tf.ones([2, 3])), "Sparse tensor has an invalid index on dimension "
     "1: a_indices(0,1) = 5, dense tensor shape: 2 3"),
    (lambda: tf.sparse.split(sp_input=SP, num_split=2, axis=5), "Input axis should be in range "
     "[-2, 2), got 5"),
    (lambda: tf.sparse.slice(SP, [0], [1, 1]), "Expected start to be a vector of length 2 but got "
     "length 1"),
    (lambda: tf.sparse.maximum(SP, tf.SparseTensor([[0, 1]], [1.0], [2, 4])),
     "Operands' shapes do not match: got 3 and 4 for dimension 1"),
    (lambda: tf.sparse.to_indicator(tf.SparseTensor([[0, 1]], tf.constant([-1], tf.int64),
                                                    [2, 3]), 4), "is out of bounds"),
]


def test_sparse_tensor_parts_of_different_sizes_are_a_value_error():
    with pytest.raises(ValueError, match="Dimensions 1 and 2 are not compatible"):
        tf.SparseTensor([[0, 1]], [1.0, 2.0], [2, 3])
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        tf.SparseTensor([[0, 1]], [1.0], [2, 3, 4])


@pytest.mark.parametrize("fn,message", ERRORS, ids=[m[:30] for _, m in ERRORS])
def test_bad_input_raises_tensorflows_error(fn, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        fn()
    assert message in str(e.value)


def test_gradients_of_fill_empty_rows_reach_the_default_value():
    sp_vals, default = tf.Variable([1.0, 2.0]), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        sp = tf.SparseTensor([[0, 0], [2, 1]], sp_vals, [4, 2])
        filled, _ = tf.sparse.fill_empty_rows(sp, default)
        loss = tf.reduce_sum(filled.values * tf.constant([1.0, 10.0, 100.0, 1000.0]))
    g_vals, g_default = tape.gradient(loss, [sp_vals, default])
    np.testing.assert_allclose(g_vals.numpy(), [1.0, 100.0])
    np.testing.assert_allclose(g_default.numpy(), 1010.0)


def test_tf1_spellings_take_the_old_argument_names():
    v1 = tf.compat.v1
    sp = tf.SparseTensor([[0, 1], [1, 2]], [1.0, -2.0], [2, 3])
    np.testing.assert_allclose(v1.sparse.reduce_sum(sp, reduction_axes=1, keep_dims=True)
                               .numpy(), [[1.0], [-2.0]])
    total = v1.sparse_reduce_sum_sparse(sp, reduction_axes=0)
    np.testing.assert_array_equal(total.indices.numpy(), [[1], [2]])
    halves = v1.sparse_split(sp_input=sp, num_split=3, split_dim=1)
    assert [h.values.numpy().tolist() for h in halves] == [[], [1.0], [-2.0]]
    both = v1.sparse_concat(concat_dim=0, sp_inputs=[sp, sp], axis=None)
    assert both.dense_shape.numpy().tolist() == [4, 3]
    kept = v1.sparse_add(sp, tf.SparseTensor([[0, 1]], [-0.9], [2, 3]), thresh=0.5)
    assert kept.indices.numpy().tolist() == [[1, 2]]
    with pytest.raises(ValueError, match="Keyword arguments are required"):
        v1.sparse.split(sp, 2)


def test_sparse_placeholder_fed_in_a_session():
    g = tf.Graph()
    with g.as_default():
        sp = tf.compat.v1.sparse.placeholder(tf.float32, shape=[2, 3])
        open_sp = tf.compat.v1.sparse_placeholder(tf.float32)
        total = tf.sparse.reduce_sum(sp, axis=1)
        dense = tf.sparse.to_dense(open_sp)
    with tf.compat.v1.Session(graph=g) as sess:
        value = tf.compat.v1.SparseTensorValue(np.array([[0, 1], [1, 2]]), np.array([1.5, 2.0]),
                                               np.array([2, 3]))
        got_total, got_sp = sess.run([total, sp], {sp: value})
        got_dense = sess.run(dense, {open_sp: ([[1, 0]], [4.0], [2, 2])})
    np.testing.assert_allclose(got_total, [1.5, 2.0])
    assert isinstance(got_sp, tf.compat.v1.SparseTensorValue)
    np.testing.assert_array_equal(got_sp.indices, [[0, 1], [1, 2]])
    np.testing.assert_allclose(got_dense, [[0.0, 0.0], [4.0, 0.0]])


def test_tf1_sparse_to_dense_and_sparse_merge():
    np.testing.assert_array_equal(
        tf.compat.v1.sparse_to_dense([[0, 1], [2, 0]], [3, 2], [5, 6], default_value=-1)
        .numpy(), [[-1, 5], [-1, -1], [6, -1]])
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([4, 1, 2], tf.int64), [2, 2])
    vals = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 0.25, 1.0], [2, 2])
    merged = tf.compat.v1.sparse_merge(ids, vals, 5)
    assert merged.indices.numpy().tolist() == [[0, 1], [0, 4], [1, 2]]
    assert merged.values.numpy().tolist() == [0.25, 0.5, 1.0]
    assert merged.dense_shape.numpy().tolist() == [2, 5]


def test_sparse_tensor_spec_as_a_tf_function_input_signature():
    spec = tf.SparseTensorSpec([None, 3], tf.float32)
    assert repr(spec) == "SparseTensorSpec(TensorShape([None, 3]), tf.float32)"
    assert spec.is_compatible_with(tf.SparseTensor([[0, 1]], [1.0], [5, 3]))
    assert not spec.is_compatible_with(tf.SparseTensor([[0, 1]], [1], [5, 3]))

    @tf.function(input_signature=[spec])
    def row_sums(sp):
        return tf.sparse.reduce_sum(sp, axis=1)

    np.testing.assert_allclose(row_sums(tf.SparseTensor([[0, 1], [1, 2]], [1.0, 2.0], [2, 3])),
                               [1.0, 2.0])
    np.testing.assert_allclose(row_sums(tf.SparseTensor([[2, 2]], [4.0], [3, 3])), [0, 0, 4.0])


def test_with_values_and_from_value():
    sp = tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
    doubled = sp.with_values(sp.values * 2)
    np.testing.assert_allclose(tf.sparse.to_dense(doubled), [[0, 2.0], [4.0, 0]])
    value = tf.compat.v1.SparseTensorValue(np.array([[1, 1]]), np.array([5.0]), np.array([2, 2]))
    np.testing.assert_allclose(tf.sparse.to_dense(tf.SparseTensor.from_value(value)),
                               [[0, 0], [0, 5.0]])
    assert tf.SparseTensor.from_value(sp) is sp


def test_integer_sparse_division_is_true_division():
    sp = tf.SparseTensor([[0, 1], [1, 0]], [7, -7], [2, 2])
    out = sp / tf.constant(2)
    assert out.dtype == tf.float64
    np.testing.assert_allclose(out.values.numpy(), [3.5, -3.5])
    small = tf.SparseTensor([[0, 1]], tf.constant([7], tf.int16), [2, 2]) / 2
    assert small.dtype == tf.float32


def test_sparse_to_dense_checks_bounds_without_validate_indices():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Indices are not valid \(out of "
                       r"bounds\).  Shape: \[3\]"):
        tf.compat.v1.sparse_to_dense([[-1]], [3], [5], validate_indices=False)


@pytest.mark.parametrize("indices, shape, message", [
    ([[1], [0]], [3], r"^indices\[1\] = \[0\] is out of order. Many sparse ops require sorted "
                      r"indices.\n    Use `tf.sparse.reorder` to create a correctly ordered "
                      r"copy.\n\n \[Op:SparseToDense\]$"),
    ([[0], [0]], [3], r"^indices\[1\] = \[0\] is repeated \[Op:SparseToDense\]$"),
    ([[0, 1], [0, 0]], [2, 2], r"^indices\[1\] = \[0,0\] is out of order"),
    ([[1, 0], [0, 5]], [2, 2], r"^indices\[1\] = \[0,5\] is out of bounds: need 0 <= index "
                               r"< \[2,2\] \[Op:SparseToDense\]$"),
    ([[1, 0], [1, 1], [0, 0]], [2, 2], r"^indices\[2\] = \[0,0\] is out of order")])
def test_sparse_to_dense_validate_indices_is_tensorflows(indices, shape, message):
    # TF 2.21: tf.compat.v1.sparse_to_dense(indices, shape, 1, validate_indices=True) raises
    # InvalidArgumentError with these texts (SparseTensor::IndicesValid: the first index out
    # of bounds, out of order or repeated); validate_indices=False writes them in turn.
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        tf.compat.v1.sparse_to_dense(indices, shape, 1, validate_indices=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="is out of order"):
        tf.function(lambda: tf.compat.v1.sparse_to_dense([[1], [0]], [3], [1, 2]))()
    got = tf.compat.v1.sparse_to_dense([[1], [0]], [3], [1, 2], validate_indices=False)
    assert got.numpy().tolist() == [2, 1, 0]

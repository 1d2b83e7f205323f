"""tf.nn.embedding_lookup_sparse / safe_embedding_lookup_sparse (v2 and compat.v1) against
TensorFlow 2.21 (tests/fixtures/tf_embedding_sparse, generate.py beside it): outputs and the
gradients w.r.t. each table shard (densified; IndexedSlices wherever TF gives them) for the
three combiners, with and without weights, max_norm, the fast lookup, "mod"/"div" shards,
float16/float64 tables, SparseTensor and RaggedTensor ids, the safe variant's pruning,
default ids and rank-3 ids, eagerly and in tf.function; TF's errors; finite differences in
float64; variables and the SparseSegment*GradV2 ops."""

import os

import numpy as np
import pytest

import ndflow as tf
from tests.fixtures.tf_embedding_sparse.emb_cases import (
    A_INDICES,
    A_SHAPE,
    CASES,
    call,
    errors,
    inputs,
    tables,
)

EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures",
                                "tf_embedding_sparse", "expected.npz"))


def _run(case, data, traced):
    def run(*params):
        with tf.GradientTape() as tape:
            tape.watch(list(params))
            y = call(tf, case, list(params) if len(params) > 1 else params[0], data)
            w = np.random.RandomState(1).uniform(0.5, 1.5, EXPECTED[f"{case}/y"].shape)
            loss = tf.reduce_sum(y * w.astype(y.dtype.as_numpy_dtype))
        return y, tape.gradient(loss, list(params))
    params = [tf.constant(t) for t in tables(case, data)]
    return (tf.function(run) if traced else run)(*params)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("traced", [False, True])
def test_outputs_and_gradients_equal_tensorflow(case, traced):
    data = inputs()
    y, grads = _run(case, data, traced)
    want = EXPECTED[f"{case}/y"]
    tol = dict(rtol=2e-3, atol=2e-3) if want.dtype == np.float16 else dict(rtol=1e-5, atol=1e-6)
    assert y.dtype.as_numpy_dtype == want.dtype
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(y.numpy(), want, **tol)
    for i, g in enumerate(grads):
        assert isinstance(g, tf.IndexedSlices) == bool(EXPECTED[f"{case}/sparse{i}"])
        np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(),
                                   EXPECTED[f"{case}/grad{i}"], **tol)


def _message(text: str) -> str:
    """TF's message up to a class's repr or a tensor's value (which name TF's modules)."""
    return text.split("<class")[0].split("<tf.Tensor")[0]


@pytest.mark.parametrize("name", sorted(k.split("/")[1] for k in EXPECTED.files
                                        if k.startswith("error/")))
def test_errors_equal_tensorflow(name):
    kind, message = (str(s) for s in EXPECTED[f"error/{name}"])
    call_ = errors(tf, inputs())[name]
    if not kind:
        call_()
        return
    types = {"TypeError": TypeError, "ValueError": ValueError,
             "InvalidArgumentError": tf.errors.InvalidArgumentError}
    with pytest.raises(types[kind]) as e:
        call_()
    got = e.value.message if isinstance(e.value, tf.errors.OpError) else str(e.value)
    assert _message(message).split(";")[0].strip() in got


def _sparse(values, indices=A_INDICES, dense_shape=A_SHAPE):
    return tf.SparseTensor(np.array(indices, np.int64), values, np.array(dense_shape, np.int64))


@pytest.mark.parametrize("fn, ids, weights, kwargs", [
    ("v2", "B_valid", "w", dict(combiner="mean")),
    ("v2", "B_valid", None, dict(combiner="sqrtn")),
    ("v2", "B_valid", "w", dict(combiner="sum", max_norm=1.2)),
    ("safe", "B", "w", dict(combiner="sqrtn")),
    ("safe", "B", None, dict(combiner="mean", default_id=5)),
    ("ragged", "B_valid", "w", dict(combiner="mean")),
])
def test_finite_differences_float64(fn, ids, weights, kwargs):
    data = inputs()
    table = data["P64"]
    ids_v = np.array([1, 3, 1, 0, 6, 2, 5] if ids == "B_valid" else data["B"], np.int64)
    w_v = np.array([2.0, 0.5, 1.5, 0.3, 3.0, 0.75, 0.25])
    w_out = np.random.RandomState(2).uniform(-1, 1, (5, 3))

    def f(p):
        if fn == "ragged":
            rt = tf.RaggedTensor.from_row_splits(ids_v, [0, 3, 4, 4, 7, 7])
            y = tf.nn.embedding_lookup_sparse(p, rt, tf.RaggedTensor.from_row_splits(
                w_v, [0, 3, 4, 4, 7, 7]), **kwargs)
        elif fn == "v2":
            y = tf.nn.embedding_lookup_sparse([p[:4], p[4:]], _sparse(ids_v),
                                              _sparse(w_v) if weights else None, **kwargs)
        else:
            y = tf.nn.safe_embedding_lookup_sparse(p, _sparse(ids_v),
                                                   _sparse(w_v) if weights else None, **kwargs)
        return tf.reduce_sum(y * w_out[:y.shape[0]])

    p = tf.constant(table)
    with tf.GradientTape() as tape:
        tape.watch(p)
        loss = f(p)
    got = tf.convert_to_tensor(tape.gradient(loss, p)).numpy()
    eps, numeric = 1e-6, np.zeros_like(table)
    for idx in np.ndindex(*table.shape):
        up, down = table.copy(), table.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (f(tf.constant(up)).numpy() - f(tf.constant(down)).numpy()) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)


def test_variables_and_training_step():
    data = inputs()
    emb = tf.Variable(data["P"])
    sp = _sparse(data["A"])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.embedding_lookup_sparse(emb, sp, None, combiner="sum"))
    g = tape.gradient(loss, emb)
    assert isinstance(g, tf.IndexedSlices)  # SparseSegmentSum's sparse_gradient
    counts = np.bincount(data["A"], minlength=7)[:, None] * np.ones((1, 3))
    np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(), counts)
    tf.keras.optimizers.SGD(1.0).apply_gradients([(g, emb)])
    np.testing.assert_allclose(emb.numpy(), data["P"] - counts, rtol=1e-6)
    # Partitioned variables (compat.v1) and the weighted path through ResourceGather.
    shards = [tf.Variable(s) for s in (data["P"][:4], data["P"][4:])]
    with tf.GradientTape() as tape:
        y = tf.nn.safe_embedding_lookup_sparse(shards, _sparse(data["B"]),
                                               _sparse(data["wB"]), combiner="sum")
    np.testing.assert_allclose(y.numpy(), EXPECTED["safe_v2_sum/y"], rtol=1e-6)
    assert all(isinstance(gs, tf.IndexedSlices) for gs in tape.gradient(y, shards))


@pytest.mark.parametrize("dense_shape, safe_shape", [
    (None, None), ([None, None], [None, 3]), ([None, None, 4], [None, None, 3])])
def test_static_shapes_in_graphs(dense_shape, safe_shape):
    """The static shapes TF 2.21 gives with sparse placeholders."""
    with tf.Graph().as_default():
        table = tf.constant(inputs()["P"])
        ids = tf.compat.v1.sparse_placeholder(tf.int64, shape=dense_shape)
        weights = tf.compat.v1.sparse_placeholder(tf.float32, shape=dense_shape)
        y = tf.compat.v1.nn.safe_embedding_lookup_sparse(table, ids, weights)
        assert y.shape.as_list() == safe_shape if safe_shape else y.shape.rank is None
        for w in (weights, None):
            assert tf.compat.v1.nn.embedding_lookup_sparse(table, ids, w).shape.as_list() == \
                [None, 3]


def test_graph_mode_with_placeholders():
    data = inputs()
    with tf.Graph().as_default():
        ids = tf.compat.v1.sparse_placeholder(tf.int64)
        weights = tf.compat.v1.sparse_placeholder(tf.float32)
        y = tf.compat.v1.nn.safe_embedding_lookup_sparse(tf.constant(data["P"]), ids, weights)
        feed = {ids: (np.array(A_INDICES), data["B"], A_SHAPE),
                weights: (np.array(A_INDICES), data["wB"], A_SHAPE)}
        with tf.compat.v1.Session() as sess:
            np.testing.assert_allclose(sess.run(y, feed), EXPECTED["safe_v2_mean/y"],
                                       rtol=1e-6)


def test_sparse_segment_grad_v2_ops():
    """TF's SparseSegment*GradV2 (values from TF 2.21): one summed row per distinct index."""
    g = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    out, idx = tf.raw_ops.SparseSegmentMeanGradV2(grad=g, indices=[3, 1, 3], segment_ids=[0, 0, 1],
                                                  dense_output_dim0=5)
    np.testing.assert_allclose(out.numpy(), [[0.5, 1.0], [3.5, 5.0]])
    assert idx.numpy().tolist() == [1, 3]
    out, _ = tf.raw_ops.SparseSegmentSqrtNGradV2(grad=g, indices=[3, 1, 3, 3],
                                                 segment_ids=[0, 0, 0, 1], dense_output_dim0=5)
    np.testing.assert_allclose(out.numpy(), [[0.57735026, 1.1547005], [4.1547003, 6.309401]],
                               rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Index 7 out of range \[0, 5\)"):
        tf.raw_ops.SparseSegmentSumGradV2(grad=g, indices=[3, 7], segment_ids=[0, 1],
                                          dense_output_dim0=5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="should have same size"):
        tf.raw_ops.SparseSegmentSumGradV2(grad=g, indices=[3, 1, 2], segment_ids=[0, 1],
                                          dense_output_dim0=5)


def test_partitioned_variable_table():
    """A compat.v1 PartitionedVariable is looked up as its shards, each getting IndexedSlices."""
    data = inputs()
    with tf.Graph().as_default():
        ids, weights = _sparse(data["B"]), _sparse(data["wB"])
        v = tf.compat.v1.get_variable("emb", shape=[7, 3],
                                      partitioner=tf.compat.v1.fixed_size_partitioner(3))
        y = tf.compat.v1.nn.safe_embedding_lookup_sparse(v, ids, weights, combiner="sum",
                                                         partition_strategy="mod")
        grads = tf.gradients(tf.reduce_sum(y), list(v))
        assert all(isinstance(g, tf.IndexedSlices) for g in grads)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            got, parts = sess.run([y, list(v)])
    table = np.empty((7, 3), np.float32)
    for i, part in enumerate(parts):   # "mod": row r lives in shard r % 3
        table[i::3] = part
    want = tf.nn.safe_embedding_lookup_sparse(tf.constant(table), _sparse(data["B"]),
                                              _sparse(data["wB"]), combiner="sum")
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)

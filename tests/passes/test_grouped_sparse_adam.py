"""Keras' Adam of several embedding tables as one `_GroupedSparseApplyKerasAdam`
(ndflow/passes/grouped_updates.py, kernels/training_sparse.py, kernels/adam_numba.py
`update_many`): bit for bit the separate `_ResourceSparseApplyKerasAdam`s, Keras' formula
(slices' squares summed per row, every row's moments decayed) against NumPy in float64, and
TF's errors with no table half-updated."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

# (rows, columns) of the tables; one of 3000 x 16 spans several of the launch's chunks
TABLES = [(50, 4), (7, 3), (3000, 16), (1, 5), (20, 33)]
LR, B1, B2, EPS = 0.05, 0.9, 0.999, 1e-7


def _ops(graph, op_type):
    return [op for op in graph.get_operations() if op.type == op_type]


def _batches(steps: int, dtype=np.int64):
    """Per step and table: ids (repeats included) and the upstream gradient of the rows."""
    rng = np.random.default_rng(7)
    out = []
    for _ in range(steps):
        step = []
        for rows, cols in TABLES:
            ids = rng.integers(0, rows, 2 * rows + 3).astype(dtype)
            step.append((ids, rng.normal(size=(len(ids), cols)).astype(np.float32)))
        out.append(step)
    return out


def _train(batches, dtypes=None):
    """Keras Adam steps in a tf.function on tables looked up by tf.gather (IndexedSlices
    gradients); the values after each step and the optimized graph."""
    rng = np.random.default_rng(1)
    dtypes = dtypes or [tf.float32] * len(TABLES)
    tables = [tf.Variable(rng.normal(size=shape).astype(np.float32), dtype=dt)
              for shape, dt in zip(TABLES, dtypes)]
    opt = tf.keras.optimizers.Adam(LR, beta_1=B1, beta_2=B2, epsilon=EPS)

    @tf.function
    def step(*args):
        with tf.GradientTape() as tape:
            loss = tf.add_n([
                tf.reduce_sum(tf.cast(tf.gather(t, args[2 * i]), tf.float32) * args[2 * i + 1])
                for i, t in enumerate(tables)])
        grads = tape.gradient(loss, tables)
        assert all(isinstance(g, tf.IndexedSlices) for g in grads)
        opt.apply_gradients(zip(grads, tables))

    out = []
    for batch in batches:
        step(*[tf.constant(a) for pair in batch for a in pair])
        out.append([t.numpy().astype(np.float64) for t in tables + list(opt.variables)])
    args = [tf.constant(a) for pair in batches[0] for a in pair]
    return out, step.get_concrete_function(*args).optimized_graph()


def test_one_op_bit_for_bit_the_separate_updates(ungrouped):
    batches = _batches(3)
    grouped, graph = _train(batches)
    (group,) = _ops(graph, "_GroupedSparseApplyKerasAdam")
    assert group.attrs["N"] == len(TABLES)
    assert not _ops(graph, "_ResourceSparseApplyKerasAdam")
    ungrouped()
    separate, graph_off = _train(batches)
    assert not _ops(graph_off, "_GroupedSparseApplyKerasAdam")
    assert len(_ops(graph_off, "_ResourceSparseApplyKerasAdam")) == len(TABLES)
    for got, want in zip(grouped, separate):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_keras_adam_of_the_rows_in_float64(index_dtype):
    """Keras' Adam of an IndexedSlices gradient: a row looked up twice adds two squares to
    v; every row's moments decay and its weight moves."""
    batches = _batches(3, index_dtype)
    got, graph = _train(batches)
    assert _ops(graph, "_GroupedSparseApplyKerasAdam")
    rng = np.random.default_rng(1)
    w = [rng.normal(size=shape).astype(np.float32).astype(np.float64) for shape in TABLES]
    m = [np.zeros(shape) for shape in TABLES]
    v = [np.zeros(shape) for shape in TABLES]
    for t, batch in enumerate(batches, start=1):
        alpha = LR * np.sqrt(1 - B2 ** t) / (1 - B1 ** t)
        for i, (ids, up) in enumerate(batch):
            g, g2 = np.zeros(TABLES[i]), np.zeros(TABLES[i])
            np.add.at(g, ids, up.astype(np.float64))
            np.add.at(g2, ids, up.astype(np.float64) ** 2)
            m[i] += (g - m[i]) * (1 - B1)
            v[i] += (g2 - v[i]) * (1 - B2)
            w[i] -= alpha * m[i] / (np.sqrt(v[i]) + EPS)
        for i in range(len(TABLES)):
            np.testing.assert_allclose(got[t - 1][i], w[i], rtol=2e-5, atol=2e-6)


def test_float64_tables_run_aten_s_form_in_the_group(ungrouped):
    dtypes = [tf.float64] * len(TABLES)
    batches = _batches(2)
    grouped, graph = _train(batches, dtypes)
    (group,) = _ops(graph, "_GroupedSparseApplyKerasAdam")
    assert group.attrs["T"] == tf.float64
    ungrouped()
    separate, _ = _train(batches, dtypes)
    for got, want in zip(grouped, separate):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad,count", [(3000, 3), (-1, 3), (3000, 1)],
                         ids=["past_the_end", "negative", "one_table"])
def test_an_id_out_of_range_is_tf_s_error_and_no_table_moves(bad, count):
    """Checked by the kernel's pass over the ids (kernels/adam_numba.py `_compact`), for a
    group and for a table alone, before any table is written."""
    rng = np.random.default_rng(0)
    tables = [tf.Variable(rng.normal(size=shape).astype(np.float32))
              for shape in TABLES[:count]]
    before = [t.numpy() for t in tables]
    opt = tf.keras.optimizers.Adam(LR)
    opt.build(tables)

    @tf.function
    def step(bad):
        grads = [tf.IndexedSlices(tf.ones([2, t.shape[1]]),
                                  tf.constant([0, bad if i == count - 1 else 1], tf.int64),
                                  tf.constant(t.shape, tf.int64))
                 for i, t in enumerate(tables)]
        opt.apply_gradients(zip(grads, tables))

    graph = step.get_concrete_function(tf.constant(0, tf.int64)).optimized_graph()
    assert bool(_ops(graph, "_GroupedSparseApplyKerasAdam")) == (count > 1)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"Index {bad} at offset 1 in indices is out of range"):
        step(tf.constant(bad, tf.int64))
    for t, b in zip(tables, before):
        np.testing.assert_array_equal(t.numpy(), b)


def test_rows_sliced_from_a_wider_gradient_laid_out_once(monkeypatch):
    """Tables looked up with one batch of ids and concatenated (an embedding per feature):
    each gradient is a column slice of the concatenation's, read in place; the steps after
    the first reuse the launch's layout (the tables update in place); Keras' formula against
    NumPy in float64."""
    from ndflow.kernels import adam_numba
    shapes, n = [(50, 4), (7, 3), (20, 5)], 12
    laid_out, strided = [], []
    real_layout, real_launch = adam_numba.sparse_layout, adam_numba.update_laid_out
    monkeypatch.setattr(adam_numba, "sparse_layout",
                        lambda states: laid_out.append(len(states)) or real_layout(states))
    monkeypatch.setattr(adam_numba, "update_laid_out", lambda layout, ids, rows, params: (
        strided.append([not r.is_contiguous() for r in rows])
        or real_launch(layout, ids, rows, params)))
    rng = np.random.default_rng(3)
    init = [rng.normal(size=s).astype(np.float32) for s in shapes]
    tables = [tf.Variable(w) for w in init]
    opt = tf.keras.optimizers.Adam(LR, beta_1=B1, beta_2=B2, epsilon=EPS)
    weight = rng.normal(size=(n, sum(c for _, c in shapes))).astype(np.float32)

    @tf.function
    def step(ids, weight):
        with tf.GradientTape() as tape:
            rows = tf.concat([tf.gather(t, ids[:, i]) for i, t in enumerate(tables)], axis=1)
            loss = tf.reduce_sum(rows * weight)
        opt.apply_gradients(zip(tape.gradient(loss, tables), tables))

    w = [a.astype(np.float64) for a in init]
    m, v = [np.zeros(s) for s in shapes], [np.zeros(s) for s in shapes]
    for t in range(1, 4):
        ids = np.stack([rng.integers(0, rows, n) for rows, _ in shapes], axis=1)
        step(tf.constant(ids, tf.int32), tf.constant(weight))
        alpha = LR * np.sqrt(1 - B2 ** t) / (1 - B1 ** t)
        at = 0
        for i, (rows, cols) in enumerate(shapes):
            up = weight[:, at:at + cols].astype(np.float64)
            at += cols
            g, g2 = np.zeros((rows, cols)), np.zeros((rows, cols))
            np.add.at(g, ids[:, i], up)
            np.add.at(g2, ids[:, i], up ** 2)
            m[i] += (g - m[i]) * (1 - B1)
            v[i] += (g2 - v[i]) * (1 - B2)
            w[i] -= alpha * m[i] / (np.sqrt(v[i]) + EPS)
            np.testing.assert_allclose(tables[i].numpy(), w[i], rtol=2e-5, atol=2e-6)
    assert laid_out == [len(shapes)] and len(strided) == 3
    assert all(all(step) for step in strided)   # the slices were not copied to be read

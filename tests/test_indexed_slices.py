"""IndexedSlices: the gradients of tf.gather / embedding_lookup / a variable's sparse_read are
sparse rows (TF's _GatherV2Grad/_GatherGrad), aggregated by concatenation, densified only when
converted; the optimizers apply them by scatter so untouched rows never change; variables'
scatter_* updates; all against NumPy float64 references."""

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1
INIT = np.arange(12, dtype=np.float64).reshape(6, 2)
W = np.array([[1.0, 2.0]])


def _dense_ref(ids, rows=6):
    out = np.zeros((rows, 2))
    for i in ids:
        out[i] += W[0]
    return out


def test_gather_gradients_are_indexed_slices():
    emb = tf.Variable(INIT)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, [1, 3, 1]) * W)
    g = tape.gradient(loss, emb)
    assert isinstance(g, tf.IndexedSlices)
    assert g.indices.numpy().tolist() == [1, 3, 1] and g.values.shape.as_list() == [3, 2]
    assert g.dense_shape.numpy().tolist() == [6, 2]
    np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(), _dense_ref([1, 3, 1]))

    x = tf.constant(INIT)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.gather(x, [0, 0, 5]) * W) + tf.reduce_sum(tf.gather(x, [2]) * W)
    gx = tape.gradient(y, x)  # two sparse gradients: concatenated, still sparse
    assert isinstance(gx, tf.IndexedSlices) and sorted(gx.indices.numpy()) == [0, 0, 2, 5]
    np.testing.assert_allclose(tf.convert_to_tensor(gx).numpy(), _dense_ref([0, 0, 5, 2]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.gather(x, [1]) * W) + tf.reduce_sum(x * 2.0)
    mixed = tape.gradient(y, x)  # with a dense one: densified and added, as TF
    np.testing.assert_allclose(mixed.numpy(), _dense_ref([1]) + 2.0)


def test_sparse_gradients_in_graphs_and_tf_gradients():
    with tf.Graph().as_default():
        e = v1.get_variable("e", initializer=INIT)
        ids = v1.placeholder(tf.int32, [None])
        loss = tf.reduce_sum(tf.nn.embedding_lookup(e, ids) * W)
        (g,) = tf.gradients(loss, [e])
        assert isinstance(g, tf.IndexedSlices)
        dense = tf.convert_to_tensor(g)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            np.testing.assert_allclose(sess.run(dense, {ids: [4, 4, 0]}), _dense_ref([4, 4, 0]))


@pytest.mark.parametrize("make", [
    lambda: tf.keras.optimizers.SGD(0.5),
    lambda: v1.train.GradientDescentOptimizer(0.5),
])
def test_sgd_updates_only_the_rows_used(make):
    emb = tf.Variable(INIT)
    opt = make()

    @tf.function
    def step(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids) * W)
        g = tape.gradient(loss, emb)
        opt.apply_gradients([(g, emb)])

    step(tf.constant([1, 3, 1]))
    step(tf.constant([5]))
    want = INIT - 0.5 * (_dense_ref([1, 3, 1]) + _dense_ref([5]))
    np.testing.assert_allclose(emb.numpy(), want)
    applied = [op.type for op in step.get_concrete_function(
        tf.TensorSpec([None], tf.int32)).graph.get_operations()]
    assert "ResourceScatterAdd" in applied or "ResourceScatterSub" in applied
    assert "ResourceApplyGradientDescent" not in applied


def test_dense_fallback_for_optimizers_without_a_sparse_update():
    emb = tf.Variable(INIT)
    opt = tf.keras.optimizers.Adam(0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, [2]) * W)
    opt.apply_gradients([(tape.gradient(loss, emb), emb)])
    changed = np.abs(emb.numpy() - INIT).sum(1) > 0
    assert changed.tolist() == [False, False, True, False, False, False]


def test_variable_scatter_updates():
    v = tf.Variable(INIT)
    rows = tf.IndexedSlices(tf.constant([[10.0, 20.0], [1.0, 1.0]], tf.float64),
                            tf.constant([0, 5]))
    want = INIT.copy()
    v.scatter_add(rows)
    want[0] += [10, 20]
    want[5] += [1, 1]
    v.scatter_sub(rows)
    want[0] -= [10, 20]
    want[5] -= [1, 1]
    v.scatter_mul(rows)
    want[0] *= [10, 20]
    want[5] *= [1, 1]
    v.scatter_max(tf.IndexedSlices(tf.constant([[100.0, 0.0]], tf.float64), tf.constant([1])))
    want[1] = np.maximum(want[1], [100, 0])
    v.scatter_update(tf.IndexedSlices(tf.constant([[7.0, 7.0]], tf.float64), tf.constant([2])))
    want[2] = 7
    np.testing.assert_allclose(v.numpy(), want)
    snapshot = v.value()  # a read taken before an update keeps its value
    v.scatter_add(rows)
    np.testing.assert_allclose(snapshot.numpy(), want)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 9 is not in "
                                                             r"\[0, 6\)"):
        v.scatter_add(tf.IndexedSlices(tf.ones([1, 2], tf.float64), tf.constant([9])))
    with pytest.raises(TypeError, match="sparse_delta is not IndexedSlices"):
        v.scatter_add(tf.ones([6, 2], tf.float64))
    np.testing.assert_allclose(v.sparse_read([5, 0]).numpy(), v.numpy()[[5, 0]])

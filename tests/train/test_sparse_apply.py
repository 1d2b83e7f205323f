"""Sparse optimizer updates (IndexedSlices gradients): TF1 Momentum and RMSProp apply
ResourceSparseApply* to the touched rows only — those rows equal the dense update, other
rows of the variable and its slots stay untouched (TF's lazy semantics) — and TF1 Adam
decays all of m and v as TF's `_apply_sparse_shared` does (equal to the dense update).
References in NumPy float64; error messages as TF 2.21."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.ops.training_sparse import resource_sparse_apply_momentum

START = np.random.RandomState(3).uniform(-1, 1, [6, 3])
IDS = [1, 4, 1]
COEF = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-2.0, 1.0, 0.75]])

OPTIMIZERS = {
    "gd": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "rmsprop": lambda: tf.compat.v1.train.RMSPropOptimizer(0.05, momentum=0.5),
    "centered": lambda: tf.compat.v1.train.RMSPropOptimizer(0.05, momentum=0.5, centered=True),
    "adam": lambda: tf.compat.v1.train.AdamOptimizer(0.1),
}
SPARSE_TYPES = {"momentum": "ResourceSparseApplyMomentum",
                "nesterov": "ResourceSparseApplyMomentum",
                "rmsprop": "ResourceSparseApplyRMSProp",
                "centered": "ResourceSparseApplyCenteredRMSProp",
                "gd": "ResourceScatterAdd"}


def _grad(table, ids):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.gather(table, ids) * COEF[:len(ids)])
    return tape.gradient(loss, table)


def _steps(name, ids_list, sparse):
    var = tf.Variable(START)
    opt = OPTIMIZERS[name]()
    for ids in ids_list:
        g = _grad(var, ids)
        assert isinstance(g, tf.IndexedSlices)
        opt.apply_gradients([(g if sparse else tf.convert_to_tensor(g), var)])
    slots = {s: opt.get_slot(var, s).numpy() for s in opt.get_slot_names()}
    return var.numpy(), slots


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_one_sparse_step_matches_the_dense_step_on_touched_rows(name):
    sparse, sparse_slots = _steps(name, [IDS], True)
    dense, dense_slots = _steps(name, [IDS], False)
    touched = sorted(set(IDS))
    np.testing.assert_allclose(sparse[touched], dense[touched], rtol=1e-12, atol=1e-12)
    for s in sparse_slots:
        np.testing.assert_allclose(sparse_slots[s][touched], dense_slots[s][touched],
                                   rtol=1e-12, atol=1e-12)
    if name == "adam":  # TF1 Adam decays every row of m, v and updates every row of var
        np.testing.assert_allclose(sparse, dense, rtol=1e-12, atol=1e-12)
        return
    rest = [i for i in range(len(START)) if i not in touched]
    np.testing.assert_array_equal(sparse[rest], START[rest])
    for s in sparse_slots:  # slots start at 0 (RMSProp's "rms" at 1) and stay there
        np.testing.assert_array_equal(sparse_slots[s][rest], 1.0 if s == "rms" else 0.0)


def test_momentum_is_lazy_over_steps_numpy_reference():
    var, slots = _steps("momentum", [[1, 4, 1], [2, 4]], True)
    v, acc = START.copy(), np.zeros_like(START)
    lr, mom = float(np.float32(0.1)), float(np.float32(0.9))  # TF1: float32 hyperparameters
    for ids in ([1, 4, 1], [2, 4]):
        g = np.zeros_like(START)
        for row, i in enumerate(ids):
            g[i] += COEF[row]
        for i in sorted(set(ids)):  # only the rows in the gradient move
            acc[i] = acc[i] * mom + g[i]
            v[i] -= lr * acc[i]
    np.testing.assert_allclose(var, v, rtol=1e-12)
    np.testing.assert_allclose(slots["momentum"], acc, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(SPARSE_TYPES))
def test_graph_minimize_uses_the_sparse_op(name):
    g = tf.Graph()
    with g.as_default():
        table = tf.compat.v1.Variable(START)
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, IDS) * COEF)
        train = OPTIMIZERS[name]().minimize(loss)
        types = {op.type for op in g.get_operations()}
        assert SPARSE_TYPES[name] in types
        with tf.compat.v1.Session() as s:
            s.run(tf.compat.v1.global_variables_initializer())
            s.run(train)
            after = s.run(table)
    eager, _ = _steps(name, [IDS], True)
    np.testing.assert_allclose(after, eager, rtol=1e-12)


def _momentum_raw(grad, indices, lr=0.1):
    v = tf.Variable(np.zeros([4, 2], np.float32))
    a = tf.Variable(np.zeros([4, 2], np.float32))
    resource_sparse_apply_momentum(v.handle, a.handle, lr, grad, indices, 0.9)


@pytest.mark.parametrize("grad,indices,lr,message", [
    (np.ones([2, 2], np.float32), [1, 9], 0.1, "Index 9 at offset 1 in indices is out of range"),
    (np.ones([3, 2], np.float32), [1, 2], 0.1,
     "grad must be the same size as indices in the first dimension."),
    (np.ones([2, 3], np.float32), [1, 2], 0.1, "var and grad must match in dimension 1"),
    (np.ones([2, 2], np.float32), [1, 2], [0.1], r"lr is not a scalar : \[1\]"),
])
def test_sparse_apply_errors(grad, indices, lr, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        _momentum_raw(grad, indices, lr)


def test_indices_must_be_a_vector():
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError),
                       match="rank 1|one-dimensional"):
        _momentum_raw(np.ones([2, 2], np.float32), [[1], [2]])

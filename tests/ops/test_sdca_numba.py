"""SdcaOptimizer's numba pass (kernels/sdca_numba.py, kernels/sdca_batch.py) against the Python
reference pass in kernels/sdca_optimizer.py (which test_sdca_ops.py checks against TF): with
the examples visited in the same order, the same state and deltas bit for bit, on batches
whose examples share sparse and dense features (so the order and every update matter), for
every loss, adaptive sampling and several loss partitions, and the same errors."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import sdca_numba, sdca_optimizer

pytest.importorskip("numba")

LABELS = {"logistic_loss": [0.0, 1.0], "hinge_loss": [0.0, 1.0],
          "smooth_hinge_loss": [0.0, 1.0], "squared_loss": [-1.5, 0.25, 3.0],
          "poisson_loss": [0.0, 1.0, 4.0]}


def _batch(rng, loss, n=40, adaptive=False, parts=1):
    ex, feat, vals, sp_idx, sp_w = [], [], [], [], []
    for g, (features, per) in enumerate([(12, 3), (30, 5), (7, 1)]):
        e, f = [], []
        for i in range(n):
            chosen = np.sort(rng.choice(features, size=rng.integers(0, per + 1), replace=False))
            e += [i] * len(chosen)
            f += (chosen + 100 * g).tolist()
        ex.append(tf.constant(e, tf.int64))
        feat.append(tf.constant(f, tf.int64))
        if g < 2:
            vals.append(tf.constant(rng.standard_normal(len(f)).astype(np.float32)))
        ids = np.arange(features) + 100 * g
        sp_idx.append(tf.constant(rng.permutation(ids), tf.int64))
        sp_w.append(tf.constant(rng.standard_normal(features).astype(np.float32) * 0.1))
    dense = [rng.standard_normal([n, 3]).astype(np.float32),
             rng.standard_normal([n, 20]).astype(np.float32)]
    return dict(
        sparse_example_indices=ex, sparse_feature_indices=feat, sparse_feature_values=vals,
        dense_features=[tf.constant(d) for d in dense],
        example_weights=tf.constant(rng.uniform(0.5, 2, n).astype(np.float32)),
        example_labels=tf.constant(rng.choice(LABELS[loss], n).astype(np.float32)),
        sparse_indices=sp_idx, sparse_weights=sp_w,
        dense_weights=[tf.constant(rng.standard_normal(3).astype(np.float32) * 0.1),
                       tf.constant(rng.standard_normal(22).astype(np.float32) * 0.1)],
        example_state_data=tf.constant(np.c_[rng.uniform(0, 0.2, [n, 1]),
                                             np.zeros([n, 3])].astype(np.float32)),
        loss_type=loss, l1=0.05, l2=0.7, num_loss_partitions=parts, num_inner_iterations=1,
        adaptative=adaptive)


def _run(args, quick, seed, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(sdca_optimizer, "_rng", lambda: np.random.default_rng(seed))
        if not quick:
            m.setattr(sdca_numba, "kernels", lambda: None)
        try:
            state, sparse, dense = tf.compat.v1.train.sdca_optimizer(**args)
        except tf.errors.OpError as e:
            return type(e), e.message
    return [state.numpy().tobytes()] + [t.numpy().tobytes() for t in sparse + dense]


@pytest.mark.parametrize("loss", sorted(LABELS))
@pytest.mark.parametrize("adaptive,parts", [(False, 1), (False, 3), (True, 1)])
def test_numba_pass_is_the_reference_bit_for_bit(loss, adaptive, parts, monkeypatch):
    rng = np.random.default_rng(hash((loss, adaptive, parts)) % 1000)
    args = _batch(rng, loss, adaptive=adaptive, parts=parts)
    fast = _run(args, True, 7, monkeypatch)
    assert fast == _run(args, False, 7, monkeypatch)
    assert fast != _run(args, True, 8, monkeypatch)   # the order matters on this batch


@pytest.mark.parametrize("case", ["label", "range", "duplicate", "mismatch", "dense"])
def test_errors_match_the_reference(case, monkeypatch):
    rng = np.random.default_rng(3)
    args = _batch(rng, "logistic_loss", n=6)
    if case == "label":
        args["example_labels"] = tf.constant([0.0, 1.0, 0.5, 1.0, 2.0, 0.0])
    elif case == "range":
        args["sparse_feature_indices"][1] = args["sparse_feature_indices"][1] + 1000
    elif case == "duplicate":
        args["sparse_example_indices"][0] = tf.constant([0, 0], tf.int64)
        args["sparse_feature_indices"][0] = tf.constant([3, 3], tf.int64)
        args["sparse_feature_values"][0] = tf.constant([1.0, 2.0])
    elif case == "mismatch":
        args["sparse_feature_indices"][2] = tf.constant([1, 2, 3], tf.int64)
    else:
        args["dense_features"][1] = tf.zeros([6, 30])
    fast = _run(args, True, 1, monkeypatch)
    assert isinstance(fast, tuple) and fast == _run(args, False, 1, monkeypatch)

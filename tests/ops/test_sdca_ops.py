"""tf.compat.v1.train.sdca_fprint / sdca_shrink_l1 / sdca_optimizer (SdcaFprint, SdcaShrinkL1,
SdcaOptimizer) against TF 2.21 (tests/fixtures/sdca: generate.py ran the calls of cases.py):
fingerprints bit for bit, the L1 shrink and the optimizer's state and weight deltas to float32
rounding, and TensorFlow's errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels.fingerprint128 import fingerprint128
from tests.fixture_modules import load

cases = load("sdca", "cases")
EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "sdca"
                       / "expected.json").read_text())


def _result(r):
    return [r[0].numpy().tolist(), [t.numpy().tolist() for t in r[1]],
            [t.numpy().tolist() for t in r[2]]]


def _close(got, want):
    g, w = np.asarray(got[0], np.float32), np.asarray(want[0], np.float32)
    np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-7)
    for part in (1, 2):
        assert len(got[part]) == len(want[part])
        for a, b in zip(got[part], want[part]):
            np.testing.assert_allclose(np.asarray(a, np.float32), np.asarray(b, np.float32),
                                       rtol=2e-6, atol=1e-7)


def test_fprint_is_farmhash_fingerprint128_bit_for_bit():
    got = tf.compat.v1.train.sdca_fprint(tf.constant(cases.FPRINT_STRINGS))
    assert got.dtype == tf.int64 and got.shape == (len(cases.FPRINT_STRINGS), 2)
    assert got.numpy().tolist() == EXPECTED["fprint"]
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.compat.v1.train.sdca_fprint(tf.constant([["a"]]))
    assert info.value.message.split(" [Op:")[0] == EXPECTED["fprint_error"]


def test_fprint_reference_matches_the_numba_kernel():
    # the pure-Python Fingerprint128 is what runs without numba
    for s, (lo, hi) in zip(cases.FPRINT_STRINGS, EXPECTED["fprint"]):
        want_lo, want_hi = fingerprint128(s)
        want_lo = want_lo if want_lo >= 2 else (want_lo - 2) % (1 << 64)
        assert (want_lo, want_hi) == (lo % (1 << 64), hi % (1 << 64))


def test_fprint_in_a_graph():
    with tf.Graph().as_default():
        p = tf.compat.v1.placeholder(tf.string, [None])
        fp = tf.compat.v1.train.sdca_fprint(p)
        assert fp.shape.as_list() == [None, 2]
        with tf.compat.v1.Session() as s:
            got = s.run(fp, {p: np.array(cases.FPRINT_STRINGS[:5], object)})
    assert got.tolist() == EXPECTED["fprint"][:5]


def test_shrink_l1_updates_the_variables_in_a_graph():
    with tf.Graph().as_default():
        ws = [tf.compat.v1.get_variable(f"w{i}", initializer=np.array(w, np.float32),
                                        use_resource=False)
              for i, w in enumerate(cases.SHRINK["weights"])]
        op = tf.compat.v1.train.sdca_shrink_l1(ws, l1=cases.SHRINK["l1"],
                                               l2=cases.SHRINK["l2"])
        assert op.type == "SdcaShrinkL1" and op.get_attr("num_features") == 2
        with tf.compat.v1.Session() as s:
            with pytest.raises(tf.errors.FailedPreconditionError):
                s.run(op)   # uninitialized
            s.run([w.initializer for w in ws])
            s.run(op)
            once = [v.tolist() for v in s.run(ws)]
            s.run(op)
            twice = [v.tolist() for v in s.run(ws)]
    assert [once, twice] == EXPECTED["shrink"]
    assert np.signbit(once[0][3])   # sign(-0.1) * 0 keeps the sign, as TF's Eigen


def test_shrink_l1_refuses_eager_and_function_variables():
    kind, message = EXPECTED["shrink_eager"]
    with pytest.raises(RuntimeError) as info:
        tf.compat.v1.train.sdca_shrink_l1([tf.Variable([1.0])], l1=0.5, l2=1.0)
    assert kind == "RuntimeError" and str(info.value) == message

    @tf.function
    def f(v):
        return tf.compat.v1.train.sdca_shrink_l1([v], l1=0.5, l2=1.0)

    with pytest.raises(TypeError, match="'SdcaShrinkL1' Op requires that input 'weights' be "
                                        r"a mutable tensor \(e.g.: a tf.Variable\)"):
        f(tf.Variable([1.0]))


@pytest.mark.parametrize("loss,labels", cases.LOSS_LABELS)
@pytest.mark.parametrize("parts", [1, 3])
def test_optimizer_on_disjoint_examples(loss, labels, parts):
    got = tf.compat.v1.train.sdca_optimizer(**cases.disjoint_batch(tf, loss, labels, parts))
    _close(_result(got), EXPECTED["disjoint"][f"{loss}/{parts}"])


@pytest.mark.parametrize("loss,label", [("logistic_loss", 1.0), ("squared_loss", 2.0),
                                        ("hinge_loss", 0.0), ("smooth_hinge_loss", 1.0),
                                        ("poisson_loss", 2.0)])
@pytest.mark.parametrize("adaptive", [False, True])
def test_optimizer_on_one_example_with_dense_features(loss, label, adaptive):
    got = tf.compat.v1.train.sdca_optimizer(**cases.single_example(tf, loss, label, adaptive))
    _close(_result(got), EXPECTED["single"][f"{loss}/{adaptive}"])


def test_optimizer_in_a_session_and_its_op():
    with tf.Graph().as_default():
        args = cases.single_example(tf, "squared_loss", 2.0, False)
        r = tf.compat.v1.train.sdca_optimizer(**args)
        op = r[0].op
        assert op.type == "SdcaOptimizer" and op.get_attr("adaptative") is False
        assert (op.get_attr("num_sparse_features"), op.get_attr("num_dense_features")) == (1, 1)
        assert r[0].shape.as_list() == [1, 4] and r[2][0].shape.as_list() == [4]
        with tf.compat.v1.Session() as s:
            got = s.run(r)
    _close([got[0].tolist(), [a.tolist() for a in got[1]], [a.tolist() for a in got[2]]],
           EXPECTED["single"]["squared_loss/False"])


def test_optimizer_shared_features_converge_to_the_ridge_solution():
    # examples sharing a dense group: the order matters (TF's is random too), but repeated
    # passes in any order reach the squared loss's optimum, (X'X + l2 I) w = X'y (NumPy
    # float64), with the duals at the residuals y - Xw
    x = np.array([[1.0, 0.5], [0.2, -1.0], [0.7, 0.7]], np.float32)
    y = np.array([1.0, -0.5, 0.8], np.float32)
    l2 = 0.5
    w = np.zeros(2, np.float32)
    state = np.zeros([3, 4], np.float32)
    for _ in range(60):
        r = tf.compat.v1.train.sdca_optimizer(
            [], [], [], [tf.constant(x)], tf.ones([3]), tf.constant(y), [], [],
            [tf.constant(w)], tf.constant(state), loss_type="squared_loss", l1=0.0, l2=l2,
            num_loss_partitions=1, num_inner_iterations=1)
        state = r[0].numpy()
        w = w + r[2][0].numpy()
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    want = np.linalg.solve(x64.T @ x64 + l2 * np.eye(2), x64.T @ y64)
    np.testing.assert_allclose(w, want, atol=1e-5)
    np.testing.assert_allclose(state[:, 0], y64 - x64 @ want, atol=1e-5)


@pytest.mark.parametrize("name", sorted(EXPECTED["errors"]))
def test_optimizer_errors(name):
    kind, message = EXPECTED["errors"][name]
    with pytest.raises(getattr(tf.errors, kind)) as info:
        r = tf.compat.v1.train.sdca_optimizer(**cases.error_cases(tf)[name])
        r[0].numpy()
    assert info.value.message.split(" [Op:")[0] == message

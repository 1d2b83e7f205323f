"""TF1 top-level names (`tf.compat.v1.*`): the programs of tests/fixtures/tf1_toplevel/cases.py
give TF 2.21's results (values, op types, names, handle strings, error types and messages);
plus what a fixture cannot hold: gradients by finite differences, blocking and cancelled
takes, and graph-construction errors."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

v1 = tf.compat.v1
HERE = Path(__file__).parents[1] / "fixtures" / "tf1_toplevel"
_cases = fixture_modules.load("tf1_toplevel", "cases")
WANT = json.loads((HERE / "results.json").read_text())


def _same(got, want, where="result"):
    if isinstance(want, dict) and set(want) == {"array", "dtype"}:
        assert isinstance(got, dict) and got.get("dtype") == want["dtype"], (where, got, want)
        g, w = np.asarray(got["array"], dtype=float), np.asarray(want["array"], dtype=float)
        assert g.shape == w.shape, (where, g, w)
        tol = 1e-2 if want["dtype"] == "float16" else 1e-6  # a float32 GEMM's ulp
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * 1e-3, equal_nan=True,
                                   err_msg=where)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), (where, got, want)
        for k in want:
            _same(got[k], want[k], f"{where}.{k}")
    else:
        assert got == want, (where, got, want)


@pytest.mark.parametrize("name", sorted(_cases.CASES))
def test_matches_tensorflow(name):
    _same(_cases.plain(_cases.CASES[name](tf)), WANT[name], name)


def test_sparse_matmul_gradient_by_finite_differences():
    rng = np.random.default_rng(0)
    a0 = rng.standard_normal((3, 4))
    b0 = rng.standard_normal((5, 4))
    weights = rng.standard_normal((3, 5))

    def loss(a, b):
        return float(np.sum((a @ b.T) * weights))

    a = tf.constant(a0, tf.float32)
    b = tf.constant(b0, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = v1.sparse_matmul(a, b, transpose_b=True, a_is_sparse=True)
        total = tf.reduce_sum(y * tf.constant(weights, tf.float32))
    ga, gb = tape.gradient(total, [a, b])
    eps = 1e-6
    for x0, g, which in ((a0, ga, 0), (b0, gb, 1)):
        num = np.zeros_like(x0)
        for idx in np.ndindex(x0.shape):
            hi, lo = x0.copy(), x0.copy()
            hi[idx] += eps
            lo[idx] -= eps
            args_hi = (hi, b0) if which == 0 else (a0, hi)
            args_lo = (lo, b0) if which == 0 else (a0, lo)
            num[idx] = (loss(*args_hi) - loss(*args_lo)) / (2 * eps)
        np.testing.assert_allclose(g.numpy(), num, rtol=1e-4, atol=1e-4)


def test_sparse_matmul_bfloat16_gradient_keeps_the_input_type():
    a = tf.constant([[1.0, 2.0]], tf.bfloat16)
    b = tf.constant([[3.0], [4.0]])
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = v1.sparse_matmul(a, b)
    ga, gb = tape.gradient(y, [a, b])
    assert y.dtype == tf.float32 and ga.dtype == tf.bfloat16 and gb.dtype == tf.float32
    np.testing.assert_allclose(ga.numpy().astype(np.float32), [[3.0, 4.0]])
    np.testing.assert_allclose(gb.numpy(), [[1.0], [2.0]])


def test_graph_construction_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            v1.setdiff1d([[1, 2]], [1])
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
            v1.sparse_matmul(tf.zeros([2, 3]), tf.zeros([2, 3]))
        with pytest.raises(ValueError, match="unknown shape"):
            v1.batch_gather(tf.zeros([2, 3]), v1.placeholder(tf.int32))


def test_take_grad_waits_for_the_gradients_and_session_close_cancels_it():
    with tf.Graph().as_default():
        acc = v1.ConditionalAccumulator(tf.float32, shape=[1])
        g = v1.placeholder(tf.float32, [1])
        apply = acc.apply_grad(g)
        take = acc.take_grad(2)
        sess = v1.Session()
        got = []
        worker = threading.Thread(target=lambda: got.append(sess.run(take)))
        worker.start()
        sess.run(apply, {g: [1.0]})
        time.sleep(0.05)
        assert not got and worker.is_alive()       # one of two gradients: still waiting
        sess.run(apply, {g: [5.0]})
        worker.join(5)
        assert got and got[0].tolist() == [3.0]

        errors = []

        def waiting():
            try:
                sess.run(take)
            except tf.errors.CancelledError as e:
                errors.append(e)
        worker = threading.Thread(target=waiting)
        worker.start()
        time.sleep(0.05)
        sess.close()
        worker.join(5)
        assert errors and "Session has been closed" in errors[0].message


def test_shared_accumulator_across_sessions_plans_and_containers():
    with tf.Graph().as_default():
        a = v1.ConditionalAccumulator(tf.float32, shape=[], shared_name="shared")
        b = v1.ConditionalAccumulator(tf.float32, shape=[], shared_name="shared")
        with v1.container("other"):
            c = v1.ConditionalAccumulator(tf.float32, shape=[], shared_name="shared")
        with v1.Session() as s:
            s.run(a.apply_grad(2.0))
            s.run(b.apply_grad(4.0))
            assert s.run([a.num_accumulated(), c.num_accumulated()]) == [2, 0]
            assert s.run(b.take_grad(2)) == 3.0


def test_tensor_equality_toggle_inside_functions():
    @tf.function
    def eq(x):
        return x == x

    x = tf.constant([1.0, np.nan])
    assert eq(x).numpy().tolist() == [True, False]       # elementwise (TF2)
    v1.disable_tensor_equality()
    try:
        @tf.function
        def eq_id(x):
            return tf.constant(x == x)
        assert bool(eq_id(x).numpy()) is True              # identity while traced
        assert hash(x) == hash(x)
    finally:
        v1.enable_tensor_equality()


def test_disabling_a_mode_ndflow_lacks_warns_and_changes_nothing(caplog):
    with caplog.at_level("WARNING"):
        v1.disable_resource_variables()
        v1.disable_control_flow_v2()
    assert "no effect" in caplog.text
    assert v1.resource_variables_enabled() and v1.control_flow_v2_enabled()
    v1.enable_resource_variables()
    v1.enable_control_flow_v2()


def test_load_library_folder_without_libraries(tmp_path):
    (tmp_path / "notes.txt").write_text("not a library")
    assert tf.load_library(str(tmp_path)) is None
    (tmp_path / "broken.so").write_text("not a shared object")
    with pytest.raises(tf.errors.NotFoundError):
        tf.load_library(str(tmp_path))


def test_check_pinned_without_a_gpu_or_unpinned():
    import torch
    if torch.cuda.is_available():
        with pytest.raises(tf.errors.InvalidArgumentError, match="pinned"):
            tf.check_pinned(tf.constant([1.0]))
    else:
        with pytest.raises(tf.errors.FailedPreconditionError, match="--config=cuda"):
            tf.check_pinned(tf.constant([1.0]))


def test_session_handle_moves_between_runs_without_copying_to_numpy():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [3])
        h = v1.get_session_handle(tf.square(x))
        with v1.Session() as s:
            first = s.run(h, {x: [1.0, 2.0, 3.0]})
            p, t = v1.get_session_tensor(first.handle, tf.float32)
            second = s.run(v1.get_session_handle(t + 1.0), {p: first.handle})
            assert second.eval().tolist() == [2.0, 5.0, 10.0]
            assert first.handle != second.handle
            del first   # garbage collected: freed from the session
            with pytest.raises(tf.errors.InvalidArgumentError, match="not in the session"):
                s.run(t, {p: h.op.name + ";0;/job:localhost/replica:0/task:0/device:CPU:0"})

"""TF_NUM_INTEROP_THREADS: a plan's independent branches run concurrently
(ndflow/runtime/parallel_plan.py) with the sequential plan's results and errors."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.runtime import parallel_plan
from ndflow.runtime.parallel_plan import ParallelRun
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import RuntimeContext


@pytest.fixture(autouse=True)
def no_explicit_threads(monkeypatch):
    monkeypatch.delenv("TF_NUM_INTEROP_THREADS", raising=False)
    yield
    parallel_plan.set_explicit_threads(None)


def _plan(g, feeds, fetches, threads, targets=(), ctx=None):
    parallel_plan.set_explicit_threads(threads)
    return Plan(g, feeds, fetches, list(targets), ctx or RuntimeContext())


def _towers():
    """Two matmul towers (with in-place elementwise ops) joined at the end."""
    rng = np.random.default_rng(1)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [16, 64], name="x")
        a = b = x
        for i in range(3):
            w1 = tf.constant(rng.standard_normal((64, 64)).astype(np.float32) / 8)
            w2 = tf.constant(rng.standard_normal((64, 64)).astype(np.float32) / 8)
            a = tf.nn.relu(tf.matmul(a, w1) + 0.5, name=f"a{i}")
            b = tf.tanh(tf.matmul(b, w2) * 2.0, name=f"b{i}")
        joined = tf.add(a, b, name="joined")
    return g, x, [joined, a, b]


def test_parallel_results_equal_sequential():
    g, x, fetches = _towers()
    feed = torch.from_numpy(np.random.default_rng(2).standard_normal((16, 64), np.float32))
    seq = _plan(g, [x], fetches, 1)
    par = _plan(g, [x], fetches, 2)
    assert not isinstance(seq._run, ParallelRun)
    assert isinstance(par._run, ParallelRun) and par._run.graph.width() == 2
    expected = seq.run([feed])
    for _ in range(2):  # the first run measures the memory plan sequentially; then parallel
        got = par.run([feed])
        for e, r in zip(expected, got):
            assert torch.equal(e, r)


def test_branches_overlap():
    """Both towers' last kernels wait on one barrier: only a concurrent run gets through."""
    g, x, fetches = _towers()
    feed = torch.ones(16, 64)
    for threads, overlaps in ((2, True), (-1, False)):
        plan = _plan(g, [x], fetches[:1], threads)
        plan.run([feed])  # the first run (memory measurement) is sequential
        barrier = threading.Barrier(2, timeout=5.0 if overlaps else 0.2)
        for i, op in enumerate(plan.nodes()):
            if op.name in ("a2", "b2"):
                kname = plan._knames[i]

                def waiting(*args, fn=plan._scope[kname], barrier=barrier):
                    barrier.wait()
                    return fn(*args)
                plan._scope[kname] = waiting
        if overlaps:
            plan.run([feed])
        else:
            with pytest.raises(InvalidArgumentError, match=r"\{\{node [ab]2\}\}"):
                plan.run([feed])


def test_error_names_the_failing_node_in_a_branch():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, None], name="x")
        good = tf.matmul(tf.ones([4, 4]), tf.ones([4, 4]), name="good")
        bad = tf.matmul(x, tf.ones([3, 3]), name="bad_matmul")
        y = tf.reduce_sum(good) + tf.reduce_sum(bad)
    feed = torch.ones(2, 5)
    messages = []
    for threads in (1, 2):
        plan = _plan(g, [x], [y], threads)
        plan.run([torch.ones(2, 3)])
        with pytest.raises(InvalidArgumentError) as info:
            plan.run([feed])
        messages.append(str(info.value))
    assert "{{node bad_matmul}}" in messages[1]
    assert messages[0] == messages[1]


def test_stateful_ops_keep_their_order():
    """An update is a barrier: reads before it see the old value, reads after the new."""
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="v")
        before = tf.identity(v.read_value() * 10.0, name="before")
        with tf.control_dependencies([before]):
            update = v.assign_add(5.0, read_value=False)
        with tf.control_dependencies([update]):
            after = tf.identity(v.read_value() * 10.0, name="after")
        side = tf.matmul(tf.ones([8, 8]), tf.ones([8, 8]), name="side")
    ctx = RuntimeContext()
    _plan(g, [], [], -1, targets=[v.initializer], ctx=ctx).run([])
    plan = _plan(g, [], [before, after, side], 2, ctx=ctx)
    got = [t.numpy() for t in plan.run([])]
    assert (got[0], got[1]) == (10.0, 60.0)
    graph = plan._run.graph
    names = [op.name for op in plan.nodes()]
    upd = next(i for i, op in enumerate(plan.nodes()) if op.type == "AssignAddVariableOp")
    assert graph.caller_only[graph.task_of[upd]]
    assert set(range(upd)) <= _ancestors(graph.step_deps, upd), names
    assert all(upd in _ancestors(graph.step_deps, j) for j in range(upd + 1, len(names)))


def _ancestors(deps, i) -> set:
    seen, stack = set(), list(deps[i])
    while stack:
        j = stack.pop()
        if j not in seen:
            seen.add(j)
            stack.extend(deps[j])
    return seen


def test_thread_settings(monkeypatch):
    g, x, fetches = _towers()
    for n in (0, 1, -1):  # automatic (measured: sequential), one thread, the caller's thread
        assert not isinstance(_plan(g, [x], fetches, n)._run, ParallelRun)
    parallel_plan.set_explicit_threads(None)
    monkeypatch.setenv("TF_NUM_INTEROP_THREADS", "3")
    plan = Plan(g, [x], fetches, [], RuntimeContext())
    assert isinstance(plan._run, ParallelRun) and plan._run.threads == 3
    assert tf.config.threading.get_inter_op_parallelism_threads() == 0  # TF: 0 unless set
    tf.config.threading.set_inter_op_parallelism_threads(1)
    assert tf.config.threading.get_inter_op_parallelism_threads() == 1
    assert not isinstance(Plan(g, [x], fetches, [], RuntimeContext())._run, ParallelRun)
    parallel_plan.set_explicit_threads(None)
    monkeypatch.setenv("TF_NUM_INTEROP_THREADS", "two")
    with pytest.raises(ValueError, match="TF_NUM_INTEROP_THREADS"):
        Plan(g, [x], fetches, [], RuntimeContext())


def test_a_chain_stays_sequential():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [4])
        y = tf.exp(tf.nn.relu(x * 2.0) + 1.0)
    assert not isinstance(_plan(g, [x], [y], 4)._run, ParallelRun)


def test_session_config_threads_win_over_the_variable(monkeypatch):
    monkeypatch.setenv("TF_NUM_INTEROP_THREADS", "-1")
    g, x, fetches = _towers()
    parallel_plan.set_explicit_threads(None)
    feed = np.ones((16, 64), np.float32)
    runs = {}
    for threads in (0, 2):
        config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=threads)
        with tf.compat.v1.Session(graph=g, config=config) as sess:
            runs[threads] = sess.run(fetches[0], {x: feed})
            plan = next(iter(sess._plans.values())).plan
            assert isinstance(plan._run, ParallelRun) == (threads == 2)
    np.testing.assert_array_equal(runs[0], runs[2])

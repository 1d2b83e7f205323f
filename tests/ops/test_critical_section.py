"""tf.CriticalSection: TF 2.21's results, graphs and errors (tests/fixtures/critical_section),
and mutual exclusion under threads — eagerly, in tf.function (one shared plan run from
several threads, also on several inter-op threads) and with the lock released after a
failed run."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.runtime import parallel_plan
from tests import fixture_modules

CONFIGS = fixture_modules.load("critical_section")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "critical_section" / "values.json")
                       .read_text())
CASES = CONFIGS.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_the_fixture_covers_every_case():
    assert sorted(CASES) == sorted(TF_VALUES)


class _Overlap:
    """A py_function body that records how many threads are inside it at once; it sleeps
    between reading and writing, so an unserialized read-modify-write loses updates."""

    def __init__(self):
        self.inside = self.most = 0
        self._lock = threading.Lock()

    def __call__(self, x):
        with self._lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        time.sleep(0.002)
        with self._lock:
            self.inside -= 1
        return x


def _increment_body(v, overlap):
    def body():
        seen = tf.py_function(overlap, [v.read_value()], tf.int32)
        return v.assign(seen + 1)
    return body


def _hammer(call, threads=4, calls=5):
    errors = []

    def work():
        try:
            for _ in range(calls):
                call()
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=30)
    assert not errors, errors


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_threads_lose_no_updates(mode):
    cs, v, overlap = tf.CriticalSection(), tf.Variable(0), _Overlap()
    body = _increment_body(v, overlap)
    call = (lambda: cs.execute(body)) if mode == "eager" else \
        tf.function(lambda: cs.execute(body))
    _hammer(call)
    assert int(v.numpy()) == 20
    assert overlap.most == 1


def test_without_the_section_the_same_threads_do_lose_updates():
    # the check above can fail: the same body unserialized overlaps and loses updates
    v, overlap = tf.Variable(0), _Overlap()
    _hammer(tf.function(_increment_body(v, overlap)))
    assert overlap.most > 1
    assert int(v.numpy()) < 20


def test_executions_in_one_graph_are_ordered_on_interop_threads():
    cs, v = tf.CriticalSection(), tf.Variable(0)

    def count():
        value = v.read_value()
        with tf.control_dependencies([value]):
            with tf.control_dependencies([v.assign_add(1)]):
                return tf.identity(value)

    @tf.function
    def four():
        return tf.stack([cs.execute(count) for _ in range(4)])

    previous = parallel_plan.explicit_threads()
    tf.config.threading.set_inter_op_parallelism_threads(4)   # for the plan compiled below
    try:
        assert four().numpy().tolist() == [0, 1, 2, 3]
        seen: list = []
        _hammer(lambda: seen.extend(four().numpy().tolist()), threads=3, calls=3)
    finally:
        parallel_plan.set_explicit_threads(previous)
    assert sorted(seen) == list(range(4, 40))   # no count twice, none lost
    # in every run its four executions took their counts in program order
    assert all(seen[i:i + 4] == sorted(seen[i:i + 4]) for i in range(0, len(seen), 4))


def test_graph_orders_lock_fn_and_release():
    cs, v = tf.CriticalSection(), tf.Variable(1.0)
    graph = tf.function(lambda x: cs.execute(lambda: v.assign_add(x))) \
        .get_concrete_function(tf.TensorSpec([])).graph
    ops = graph.get_operations()
    lock = next(op for op in ops if op.type == "MutexLock")
    consume = next(op for op in ops if op.type == "ConsumeMutexLock")
    update = next(op for op in ops if op.type == "AssignAddVariableOp")
    assert ops.index(lock) < ops.index(update) < ops.index(consume)
    assert lock in update.control_inputs
    # what fn reads from outside (the argument x) is computed before the lock is taken
    assert any(c.type == "Placeholder" for c in lock.control_inputs)
    assert consume.inputs[0] is lock.outputs[0]


def test_a_failed_graph_run_releases_the_lock():
    cs, v = tf.CriticalSection(), tf.Variable(0)

    @tf.function
    def step(fail):
        def body():
            tf.debugging.assert_equal(fail, False)
            return v.assign_add(1)
        return cs.execute(body)

    with pytest.raises(InvalidArgumentError):
        step(tf.constant(True))
    done = []
    t = threading.Thread(target=lambda: done.append(int(step(tf.constant(False)))))
    t.start()
    t.join(timeout=10)
    assert done == [1]          # another thread got the lock
    assert int(step(tf.constant(False))) == 2   # and this one again


def test_an_eager_error_releases_the_lock_for_other_threads():
    cs = tf.CriticalSection()

    def bad():
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError):
        cs.execute(bad)
    done = []
    t = threading.Thread(target=lambda: done.append(int(cs.execute(lambda: tf.constant(7)))))
    t.start()
    t.join(timeout=10)
    assert done == [7]


def test_sections_with_one_shared_name_share_the_mutex():
    a, b = tf.CriticalSection(shared_name="shared_cs"), tf.CriticalSection(shared_name="shared_cs")
    assert a._handle.value is b._handle.value
    assert tf.CriticalSection()._handle.value is not tf.CriticalSection()._handle.value


def test_raw_ops_lock_and_release_a_mutex():
    handle = tf.raw_ops.MutexV2(shared_name="raw_cs")
    lock = tf.raw_ops.MutexLock(mutex=handle)
    assert tf.raw_ops.ConsumeMutexLock(mutex_lock=lock) is None
    done = []

    def again():   # released: another lock is granted at once
        tf.raw_ops.ConsumeMutexLock(mutex_lock=tf.raw_ops.MutexLock(mutex=handle))
        done.append(True)
    t = threading.Thread(target=again, daemon=True)
    t.start()
    t.join(timeout=10)
    assert done == [True]


def test_a_held_mutex_makes_other_threads_wait():
    handle = tf.raw_ops.MutexV2(shared_name="raw_cs_held")
    lock = tf.raw_ops.MutexLock(mutex=handle)
    got = threading.Event()

    def other():
        tf.raw_ops.ConsumeMutexLock(mutex_lock=tf.raw_ops.MutexLock(mutex=handle))
        got.set()
    t = threading.Thread(target=other, daemon=True)
    t.start()
    assert not got.wait(0.05)          # waiting while the lock is held
    tf.raw_ops.ConsumeMutexLock(mutex_lock=lock)
    assert got.wait(10)


def test_grouped_optimizer_updates_stay_inside_the_section():
    # the grouped-updates pass moves a run of momentum updates to its last one, or later: never
    # past the section's release
    cs = tf.CriticalSection()
    w1, w2 = tf.Variable(tf.ones([3])), tf.Variable(tf.ones([3]))
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    opt.build([w1, w2])

    @tf.function(autograph=False)
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w1 * w2)
        grads = tape.gradient(loss, [w1, w2])
        return cs.execute(lambda: opt.apply_gradients(zip(grads, [w1, w2])))

    step()
    types = [op.type for op in step.get_concrete_function().optimized_graph().get_operations()]
    updates = [i for i, t in enumerate(types) if "Momentum" in t]
    assert updates
    assert types.index("MutexLock") < min(updates) <= max(updates) < \
        types.index("ConsumeMutexLock")
    np.testing.assert_allclose(w1.numpy(), [0.9] * 3)

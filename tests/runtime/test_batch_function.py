"""tf.nondifferentiable_batch_function: TF 2.21's results for single calls under each
batching option and its errors (tests/fixtures/batch_function), and batching itself —
concurrent callers' inputs concatenated into one run, each caller getting its own rows —
eagerly and inside tf.function, with padding, splitting, num_batch_threads and the queue
limit."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import UnavailableError
from tests import fixture_modules

CONFIGS = fixture_modules.load("batch_function")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "batch_function" / "values.json")
                       .read_text())
CASES = CONFIGS.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_the_fixture_covers_every_case():
    assert sorted(CASES) == sorted(TF_VALUES)


def _concurrently(fn, args: list) -> list:
    """fn(*a) for each a in `args`, each on its own thread, started together."""
    results: list = [None] * len(args)
    errors: list = []
    start = threading.Barrier(len(args))

    def work(i):
        start.wait()
        try:
            results[i] = fn(*args[i])
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(args))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
    return results


def _recorded(batches: list, fn):
    def wrapped(a, *rest):
        tf.py_function(lambda x: batches.append(x.numpy().tolist()) or 0, [a], tf.int32)
        return fn(a, *rest)
    return wrapped


def test_concurrent_calls_run_as_one_batch_and_get_their_rows():
    batches: list = []
    model = tf.nondifferentiable_batch_function(1, 4, 500_000)(
        _recorded(batches, lambda a, b: (a * 2.0 + b, tf.reduce_sum(a, axis=1))))
    args = [(tf.constant([[float(i), 1.0]]), tf.constant([[0.5, 0.5]])) for i in range(4)]
    results = _concurrently(model, args)
    for i, (y, s) in enumerate(results):
        assert y.numpy().tolist() == [[2.0 * i + 0.5, 2.5]]
        assert s.numpy().tolist() == [i + 1.0]
    assert batches and max(len(b) for b in batches) > 1    # the function saw batches
    assert sorted(row[0] for b in batches for row in b) == [0.0, 1.0, 2.0, 3.0]


def test_concurrent_calls_are_padded_and_split_over_batches():
    batches: list = []
    model = tf.nondifferentiable_batch_function(1, 6, 100_000, allowed_batch_sizes=[2, 4])(
        _recorded(batches, lambda a: a * 10.0))
    sizes = [1, 3, 2, 5]
    args = [(tf.constant(np.full([n], i + 1, np.float32)),) for i, n in enumerate(sizes)]
    results = _concurrently(model, args)
    for i, (n, y) in enumerate(zip(sizes, results)):
        assert y.numpy().tolist() == [10.0 * (i + 1)] * n
    assert all(len(b) in (2, 4) for b in batches)    # padded to an allowed size
    assert sum(len(b) for b in batches) >= sum(sizes)
    assert any(len(set(b)) > 1 for b in batches)     # rows of several callers in one batch


def test_calls_inside_a_function_from_threads_are_batched():
    batches: list = []
    model = tf.nondifferentiable_batch_function(1, 3, 500_000)(
        _recorded(batches, lambda a: a + 100.0))
    step = tf.function(lambda x: model(x) * 2.0)
    step(tf.constant([7.0, 8.0, 9.0]))   # traced and compiled (a full batch: no wait)
    batches.clear()
    results = _concurrently(step, [(tf.constant([float(i)]),) for i in range(3)])
    assert [r.numpy().tolist() for r in results] == [[200.0], [202.0], [204.0]]
    assert max(len(b) for b in batches) > 1


def test_one_batch_thread_runs_one_batch_at_a_time():
    state = {"inside": 0, "most": 0}
    lock = threading.Lock()

    def slow(x):
        with lock:
            state["inside"] += 1
            state["most"] = max(state["most"], state["inside"])
        time.sleep(0.01)
        with lock:
            state["inside"] -= 1
        return x

    model = tf.nondifferentiable_batch_function(1, 1, 0)(
        lambda a: tf.py_function(slow, [a], tf.float32))
    results = _concurrently(model, [(tf.constant([float(i)]),) for i in range(4)])
    assert [r.numpy().tolist() for r in results] == [[0.0], [1.0], [2.0], [3.0]]
    assert state["most"] == 1


def test_a_full_batch_queue_is_unavailable():
    release, running = threading.Event(), threading.Event()
    release.set()

    def block(x):
        running.set()
        release.wait(10)
        return x

    model = tf.nondifferentiable_batch_function(1, 1, 0, max_enqueued_batches=1)(
        lambda a: tf.py_function(block, [a], tf.float32))
    model(tf.constant([0.0]))         # traced and compiled before the race below
    running.clear()
    release.clear()
    outcomes: list = []

    def call(v):
        try:
            outcomes.append(model(tf.constant([v])).numpy().tolist())
        except UnavailableError as e:
            outcomes.append(str(e))

    first = threading.Thread(target=call, args=(1.0,))
    first.start()
    assert running.wait(10)            # the first batch runs (and blocks)
    second = threading.Thread(target=call, args=(2.0,))
    second.start()                     # its batch waits for the one batch thread
    res = next(r for r in _resources() if r.max_enqueued == 1)
    deadline = time.monotonic() + 10
    while res._waiting < 1 and time.monotonic() < deadline:
        time.sleep(0.001)
    call(3.0)                          # a second waiting batch: over the limit
    release.set()
    first.join(10)
    second.join(10)
    assert sorted(map(str, outcomes)) == sorted(
        ["[1.0]", "[2.0]", "The batch scheduling queue to which this task was submitted is "
         "full [Op:BatchFunction]"])


def _resources():
    from ndflow.runtime import batch_function
    return [r for table in batch_function._RESOURCES.values() for r in table.values()]


def test_a_single_call_runs_alone_after_the_timeout():
    batches: list = []
    model = tf.nondifferentiable_batch_function(2, 8, 1000)(_recorded(batches, lambda a: -a))
    assert model(tf.constant([1.0, 2.0])).numpy().tolist() == [-1.0, -2.0]
    assert batches == [[1.0, 2.0]]


def test_an_error_reaches_every_caller_of_the_batch():
    def checked(a):
        with tf.control_dependencies([tf.debugging.assert_positive(a)]):
            return tf.identity(a)
    model = tf.nondifferentiable_batch_function(1, 2, 500_000)(checked)
    model(tf.constant([1.0, 2.0]))     # traced and compiled (a full batch: no wait)

    def call(v):
        try:
            return model(tf.constant([v])).numpy().tolist()
        except tf.errors.InvalidArgumentError:
            return "error"
    assert _concurrently(call, [(1.0,), (-1.0,)]) == ["error", "error"]

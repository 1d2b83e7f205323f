"""AUTOTUNE's parallelism for a parallel map is measured (data/parallelism_tuner.py): each
candidate count runs a window of tasks, the fastest wins, a smaller count within TOLERANCE
of it wins over a larger one, a window is no faster than its tasks' durations allow, later
iterators start from the choice, and a `Gate` keeps the calls in flight to it."""

import threading
import time

import numpy as np

import ndflow as tf
from ndflow.data.parallelism_tuner import Gate, ParallelismTuner


class _Clock:
    """A fake clock advanced by the test: each task takes `cost[limit]` seconds."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _run(tuner, clock, cost, tasks):
    seen = []
    for _ in range(tasks):
        clock.now += cost[tuner.limit]
        tuner.task_done()
        seen.append(tuner.limit)
    return seen


def _settles_on(cost, max_parallelism=4):
    clock = _Clock()
    tuner = ParallelismTuner(max_parallelism, clock=clock)
    _run(tuner, clock, cost, 60)
    return tuner


def test_the_fastest_count_wins():
    assert _settles_on({4: 1.0, 2: 0.5, 1: 0.9}).limit == 2
    assert _settles_on({4: 0.3, 2: 0.5, 1: 0.9}).limit == 4


def test_a_smaller_count_within_tolerance_wins_ties():
    # the consumer is the slow side: every count measures alike
    assert _settles_on({4: 1.0, 2: 1.0, 1: 1.0}).limit == 1
    t = 1 + ParallelismTuner.TOLERANCE
    assert _settles_on({4: 1.0, 2: t - 0.01, 1: t + 0.05}).limit == 2


def test_calls_that_take_longer_with_more_in_flight_do_not_win():
    """A window at two calls looks faster (its outputs fill an emptied buffer downstream)
    but each call takes 2.4x as long as alone (they contend for the GIL): the tasks'
    durations bound the window, and one call in flight wins."""
    clock = _Clock()
    tuner = ParallelismTuner(2, clock=clock)
    for _ in range(40):
        limit = tuner.limit
        clock.now += {2: 0.6, 1: 1.0}[limit]          # the windows' hand-outs
        tuner.task_time({2: 2.4, 1: 0.8}[limit])      # the calls' durations
        tuner.task_done()
    assert tuner.settled == 1
    clock = _Clock()
    tuner = ParallelismTuner(2, clock=clock)          # calls that overlap (they wait)
    for _ in range(40):
        limit = tuner.limit
        clock.now += {2: 0.5, 1: 1.0}[limit]
        tuner.task_time(1.0)
        tuner.task_done()
    assert tuner.settled == 2


def test_candidates_halve_down_to_one_and_the_start_is_the_maximum():
    clock = _Clock()
    tuner = ParallelismTuner(6, clock=clock)
    assert tuner.candidates == [6, 3, 1] and tuner.limit == 6
    assert ParallelismTuner(1).candidates == [1]


def test_the_choice_is_measured_again_after_a_period():
    clock = _Clock()
    tuner = ParallelismTuner(2, clock=clock)
    _run(tuner, clock, {2: 1.0, 1: 0.5}, 40)
    assert tuner.settled == 1
    # the pipeline's cost changes: two calls in flight become faster
    per_period = ParallelismTuner.PERIOD * (ParallelismTuner.WINDOW + 1)
    _run(tuner, clock, {2: 0.2, 1: 0.5}, per_period + 3 * (ParallelismTuner.WINDOW + 1))
    assert tuner.settled == 2


def test_a_later_iterator_starts_from_the_choice():
    clock = _Clock()
    tuner = ParallelismTuner(4, start=1, clock=clock)
    seen = _run(tuner, clock, {4: 0.1, 2: 0.1, 1: 1.0}, 40)
    assert set(seen) == {1} and tuner.settled == 1   # no measuring before a period


def test_the_gate_holds_calls_in_flight_to_the_limit():
    clock = _Clock()
    tuner = ParallelismTuner(4, clock=clock)
    tuner.limit = 2
    gate, lock = Gate(tuner), threading.Lock()
    active, most = [0], [0]

    def call():
        with gate:
            with lock:
                active[0] += 1
                most[0] = max(most[0], active[0])
            time.sleep(0.01)
            with lock:
                active[0] -= 1

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 2


def test_an_autotuned_map_of_waiting_calls_keeps_every_worker():
    """Calls that wait (the GIL released) gain with each call in flight: the measurement
    keeps the most, and the elements still come in order."""
    def slow(x):
        time.sleep(0.02)
        return x

    ds = tf.data.Dataset.range(40).map(
        lambda x: tf.py_function(slow, [x], tf.int64), num_parallel_calls=tf.data.AUTOTUNE)
    assert [int(v) for v in ds] == list(range(40))
    assert ds._tuned_parallelism == ds._workers >= 2


def test_an_autotuned_map_gives_the_same_elements_whatever_it_settles_on():
    x = np.arange(600, dtype=np.float32).reshape(200, 3)
    ds = tf.data.Dataset.from_tensor_slices(x).batch(4).map(
        lambda b: tf.reduce_sum(b * 2.0, axis=1), num_parallel_calls=tf.data.AUTOTUNE)
    want = (x * 2.0).sum(axis=1)
    for _ in range(3):   # later iterators start from the measured choice
        got = np.concatenate([v.numpy() for v in ds])
        np.testing.assert_array_equal(got, want)

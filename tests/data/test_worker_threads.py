"""A consumer iterating a pipeline with its own threads keeps every core while the pipeline
keeps up, leaves it a core once it waits for batches (unless OpenMP's idle threads sleep:
OMP_WAIT_POLICY=PASSIVE), and always gets its thread count back; the pipeline's threads can
run at a lower priority (nice) than a training loop."""

import gc
import os
import sys
import threading
import time

import pytest
import torch

import ndflow as tf
from ndflow.core import core_monitor
from ndflow.data import prefetching, worker_threads
from ndflow.data.worker_threads import CoreSharing, share_cores_with_the_pipeline


@pytest.fixture
def two_threads(monkeypatch):
    """Two intra-op threads, which the core monitor leaves alone however busy the machine is
    (a parallel test run's other worker would otherwise cap them at one)."""
    monkeypatch.setattr(core_monitor, "decide", lambda current, others, cores: None)
    monkeypatch.setattr(core_monitor.STATE, "cap", None)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def _feed(sharing, wait_share: float, batches: int = 12, now: float = 0.0) -> float:
    """Batches that each take 10 ms of the consumer's time, `wait_share` of it waiting;
    returns the clock after the last."""
    for _ in range(batches):
        now += 0.01
        sharing.waited(0.01 * wait_share, now)
    return now


@pytest.mark.parametrize("policy, wait_share, fewer", [
    ("", 0.02, 0),          # the pipeline keeps up: the step keeps every core
    ("", 0.5, 1),           # the step waits half its time: it leaves the pipeline a core
    ("passive", 0.5, 0),    # idle OpenMP threads sleep: nothing to leave
])
def test_a_core_is_left_only_when_the_consumer_waits(monkeypatch, two_threads, policy,
                                                    wait_share, fewer):
    monkeypatch.setenv("OMP_WAIT_POLICY", policy)
    ds = tf.data.Dataset.range(4).prefetch(1)
    with share_cores_with_the_pipeline(ds) as sharing:
        now = _feed(sharing, wait_share, CoreSharing.WARMUP + CoreSharing.WINDOW - 1)
        assert torch.get_num_threads() == 2      # undecided before a full window
        _feed(sharing, wait_share, 4, now)
        assert torch.get_num_threads() == 2 - fewer
        assert sharing.left_a_core == bool(fewer)
    assert torch.get_num_threads() == 2


def test_a_pipeline_without_threads_shares_nothing(two_threads):
    with share_cores_with_the_pipeline(tf.data.Dataset.range(4)) as sharing:
        _feed(sharing, 0.9)
        assert torch.get_num_threads() == 2 and not sharing.left_a_core


def test_fit_restores_the_thread_count_after_a_waiting_pass(two_threads):
    """Keras fit on a pipeline whose batches come slowly (a sleep in the map: the GIL is
    released) leaves a core during the pass and gets it back afterwards; the GIL switch
    interval is shorter during the pass only."""
    seen = []

    def slow(x):
        time.sleep(0.004)
        return x

    n = CoreSharing.WARMUP + CoreSharing.WINDOW + 4
    ds = (tf.data.Dataset.from_tensor_slices((tf.ones([n, 2]), tf.zeros([n, 1]))).batch(1)
          .map(lambda x, y: (tf.py_function(slow, [x], tf.float32), y)).prefetch(1))
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer="sgd")

    intervals = []

    class Threads(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(torch.get_num_threads())
            intervals.append(sys.getswitchinterval())

    before = sys.getswitchinterval()
    model.fit(ds, epochs=1, verbose=0, callbacks=[Threads()])
    assert seen[0] == 2 and seen[-1] == 1     # the step waited for every batch
    assert torch.get_num_threads() == 2
    # the GIL changes hands sooner while the pipeline's threads run Python beside the step
    assert set(intervals) == {worker_threads.CONSUMER_SWITCH_INTERVAL}
    assert worker_threads.CONSUMER_SWITCH_INTERVAL < before
    assert sys.getswitchinterval() == before


def test_the_gil_changes_hands_sooner_while_pipeline_threads_run():
    """A custom loop over a prefetched, parallel-mapped dataset runs with the short switch
    interval (nested pipelines count once); the interval comes back when the last ends,
    whether exhausted or abandoned."""
    before = sys.getswitchinterval()
    ds = tf.data.Dataset.range(6).map(lambda x: x + 1, num_parallel_calls=2).prefetch(2)
    seen = [sys.getswitchinterval() for _ in ds]
    assert set(seen) == {worker_threads.CONSUMER_SWITCH_INTERVAL}
    assert sys.getswitchinterval() == before
    it = iter(ds)
    next(it)
    assert sys.getswitchinterval() == worker_threads.CONSUMER_SWITCH_INTERVAL
    del it          # abandoned mid-way: its generators close when collected
    gc.collect()
    assert sys.getswitchinterval() == before


def _nice_of_this_thread():
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no per-thread nice values here")
@pytest.mark.parametrize("setting, raised", [(None, 0), ("10", 10), ("3", 3)])
def test_pipeline_threads_run_below_a_training_loop(monkeypatch, setting, raised):
    if setting is None:
        monkeypatch.delenv("NDFLOW_DATA_THREAD_NICENESS", raising=False)
    else:
        monkeypatch.setenv("NDFLOW_DATA_THREAD_NICENESS", setting)
    main = _nice_of_this_thread()
    seen = []

    def record(x):
        seen.append(_nice_of_this_thread())
        return x

    ds = tf.data.Dataset.range(6).map(lambda x: tf.py_function(record, [x], tf.int64),
                                      num_parallel_calls=2).prefetch(2)
    with share_cores_with_the_pipeline(ds):  # as Keras fit consumes a dataset
        assert [int(v) for v in ds] == list(range(6))
    assert set(seen) == {min(19, main + raised)}
    assert _nice_of_this_thread() == main  # the consumer's own priority is untouched
    seen.clear()
    assert [int(v) for v in ds] == list(range(6))  # outside a training loop: not lowered
    assert set(seen) == {main}



def test_exit_hook_stops_and_joins_running_producers():
    """At interpreter exit every prefetch producer is stopped and joined before finalization:
    a daemon thread still freeing tensors then is killed inside C++ and aborts the process
    ("terminate called without an active exception")."""
    def slow(x):
        time.sleep(0.02)
        return x
    it = iter(tf.data.Dataset.range(100).map(
        lambda x: tf.py_function(slow, [x], tf.int64)).prefetch(4))
    assert int(next(it)) == 0
    producers = [t for t in threading.enumerate() if t.name == "tf_data_prefetch"]
    assert producers and all(t.is_alive() for t in producers)
    prefetching._stop_producers_at_exit()
    assert not any(t.is_alive() for t in producers)

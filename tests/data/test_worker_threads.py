"""A consumer iterating a pipeline with its own threads leaves them a core, unless OpenMP's
idle threads sleep (OMP_WAIT_POLICY=PASSIVE), and always gets its thread count back; the
pipeline's threads can run at a lower priority (nice) than a training loop."""

import os
import threading
import time

import pytest
import torch

import ndflow as tf
from ndflow.data import prefetching
from ndflow.data.worker_threads import leave_a_core_to_the_pipeline


@pytest.mark.parametrize("policy, fewer", [("", 1), ("passive", 0)])
def test_a_core_is_left_unless_openmp_sleeps(monkeypatch, policy, fewer):
    monkeypatch.setenv("OMP_WAIT_POLICY", policy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        ds = tf.data.Dataset.range(4).prefetch(1)
        with leave_a_core_to_the_pipeline(ds):
            assert torch.get_num_threads() == 2 - fewer
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


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
    with leave_a_core_to_the_pipeline(ds):  # as Keras fit consumes a dataset
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

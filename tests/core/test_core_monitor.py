"""Intra-op threads follow the cores other processes leave free (core/core_monitor.py,
runtime/threads.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
import torch

from ndflow.core import core_monitor
from ndflow.runtime import threads

LINUX = sys.platform.startswith("linux")


def _spin_cpu(seconds: float) -> None:
    """Busy until the calling thread has used `seconds` of CPU (however loaded the machine)."""
    t = time.thread_time()
    while time.thread_time() - t < seconds:
        pass


@pytest.mark.parametrize("current,others,cores,expected", [
    (None, 0.0, 2, None),     # quiet machine: no cap
    (None, 0.5, 2, None),     # a light neighbour: keep both threads
    (None, 0.7, 2, 1),        # a busy one takes a core
    (None, 1.9, 2, 1),        # never below one thread
    (1, 0.5, 2, 1),           # hysteresis: not raised while others still use half a core
    (1, 0.2, 2, None),        # the core is free again
    (None, 3.0, 16, 13),
    (13, 2.5, 16, 13),        # hysteresis on a large machine
    (13, 1.8, 16, 14),        # raised one step at a time
    (13, 5.0, 16, 11),        # others took more: lowered at once
    (15, 0.1, 16, None),      # the last step back lifts the cap
])
def test_cap_decisions(current, others, cores, expected):
    assert core_monitor.decide(current, others, cores) == expected


def test_decisions_settle_for_two_jobs_sharing_a_machine():
    """Two jobs that start together on 2 cores each see the other using about a core: both
    step down to one thread, then each sees the other's one busy thread and stays there."""
    cap = core_monitor.decide(None, 1.0, 2)
    assert cap == 1
    for others in (1.0, 0.95, 0.8, 0.6):
        cap = core_monitor.decide(cap, others, 2)
        assert cap == 1
    assert core_monitor.decide(cap, 0.0, 2) is None   # the other job ended


@pytest.mark.skipif(not LINUX, reason="/proc/stat is Linux's")
def test_machine_busy_seconds_counts_this_process_spinning():
    before = core_monitor.machine_busy_seconds()
    _spin_cpu(0.3)
    after = core_monitor.machine_busy_seconds()
    assert after - before >= 0.25   # /proc/stat counts in clock ticks (10 ms)


@pytest.mark.skipif(not LINUX or threads.available_cores() < 2, reason="needs 2 cores")
def test_machine_busy_seconds_counts_only_the_cpus_asked_for():
    cpu = min(os.sched_getaffinity(0))

    def pinned():   # this thread only, on one CPU (Linux affinity is per thread)
        os.sched_setaffinity(0, {cpu})
        before = core_monitor.machine_busy_seconds(frozenset({cpu}))
        _spin_cpu(0.3)
        return core_monitor.machine_busy_seconds(frozenset({cpu})) - before
    assert _in_a_thread(pinned) >= 0.25
    assert core_monitor.machine_busy_seconds(frozenset({10**6})) is None   # no such CPU


@pytest.mark.skipif(not LINUX, reason="/proc/self/task is Linux's")
def test_helper_threads_cpu_is_counted():
    spun, done = threading.Event(), threading.Event()

    def helper():
        core_monitor.register_helper_thread()
        _spin_cpu(0.3)
        spun.set()
        done.wait()

    before = core_monitor._helper_seconds()
    th = threading.Thread(target=helper)
    th.start()
    spun.wait()
    assert core_monitor._helper_seconds() - before >= 0.28
    counted = core_monitor._helper_seconds()
    done.set()
    th.join()
    deadline = time.monotonic() + 5   # the kernel reaps the thread just after the join
    while os.path.exists(f"/proc/self/task/{th.native_id}") and time.monotonic() < deadline:
        time.sleep(0.01)
    # an ended thread is forgotten, and what it used stays counted
    assert core_monitor._helper_seconds() >= counted
    assert th.native_id not in core_monitor._helper_threads


def _in_a_thread(fn):
    """Runs `fn` on a new thread (ATen's count is per thread under OpenMP) and returns what
    it returned."""
    out = []
    th = threading.Thread(target=lambda: out.append(fn()))
    th.start()
    th.join()
    return out[0]


@pytest.fixture
def fake_monitor(monkeypatch):
    """The monitor's published state, set by the test instead of a sampler."""
    monkeypatch.setattr(core_monitor.STATE, "sampling", True)
    monkeypatch.setattr(core_monitor.STATE, "cap", None)
    monkeypatch.setattr(threads, "_FOLLOW", True)
    return core_monitor.STATE


def _counts_under(monitor, start: int, caps: list) -> list:
    """On a new thread set to `start` intra-op threads: the thread's count after each cap of
    `caps` is published and followed."""
    def run():
        torch.set_num_threads(start)
        seen = []
        for cap in caps:
            monitor.cap = cap
            threads.follow_free_cores()
            seen.append(torch.get_num_threads())
        return seen
    return _in_a_thread(run)


def test_cap_lowers_and_restores_a_threads_count(fake_monitor):
    assert _counts_under(fake_monitor, 3, [None, 1, 2, None]) == [3, 1, 2, 3]


def test_cap_never_raises_a_single_threaded_pipeline_thread(fake_monitor):
    assert _counts_under(fake_monitor, 1, [2, None]) == [1, 1]


def test_a_count_set_while_capped_is_the_new_configured_count(fake_monitor):
    def run():
        torch.set_num_threads(2)
        fake_monitor.cap = 1
        threads.follow_free_cores()
        torch.set_num_threads(4)            # e.g. a Session's ConfigProto
        fake_monitor.cap = 2
        threads.follow_free_cores()
        capped = torch.get_num_threads()
        fake_monitor.cap = None
        threads.follow_free_cores()
        return capped, torch.get_num_threads()
    assert _in_a_thread(run) == (2, 4)


def test_switched_off_the_count_is_left_alone(fake_monitor, monkeypatch):
    monkeypatch.setattr(threads, "_FOLLOW", False)
    monkeypatch.setattr(fake_monitor, "sampling", False)
    assert _counts_under(fake_monitor, 2, [1]) == [2]


def test_more_threads_than_cores_is_honoured_with_one_warning(monkeypatch, capfd):
    monkeypatch.setattr(threads, "_warned_above_cores", [])
    n = threads.available_cores() + 1
    got = _in_a_thread(lambda: (threads.set_configured_threads(n, "TF_NUM_INTRAOP_THREADS"),
                                threads.set_configured_threads(n, "TF_NUM_INTRAOP_THREADS"),
                                torch.get_num_threads())[-1])
    assert got == n
    err = capfd.readouterr().err
    assert err.count("more than the") == 1
    assert f"{n} intra-op threads (TF_NUM_INTRAOP_THREADS)" in err


_PROBE = """
import sys, time
import ndflow as tf, torch
x = tf.random.normal((256, 256))
f = tf.function(lambda x: tf.matmul(x, x))
def threads_after(seconds):
    t = time.time()
    while time.time() - t < seconds:
        f(x).numpy()
    return torch.get_num_threads()
print("alone", threads_after(1.0), flush=True)
sys.stdin.readline()                      # the parent started a busy process
print("beside", threads_after(2.5), flush=True)
sys.stdin.readline()                      # the parent stopped it
print("after", threads_after(4.0), flush=True)
"""


@pytest.mark.slow  # real processes competing for the cores: CI's serial slow pass runs it
@pytest.mark.skipif(not LINUX or threads.available_cores() < 2, reason="needs 2 cores")
def test_a_busy_process_takes_a_thread_and_gives_it_back():
    cores = threads.available_cores()
    job = subprocess.Popen([sys.executable, "-c", _PROBE], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True,
                           env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    spinners = []
    try:
        alone = int(job.stdout.readline().split()[1])
        if alone < cores:   # the premise, a quiet machine, does not hold
            pytest.skip(f"other programs keep this machine busy ({alone} of {cores} threads)")
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(max(1, cores // 2))]
        job.stdin.write("\n")
        job.stdin.flush()
        assert int(job.stdout.readline().split()[1]) < cores
        for p in spinners:
            p.kill()
            p.wait()
        job.stdin.write("\n")
        job.stdin.flush()
        assert job.stdout.readline().split() == ["after", str(cores)]
    finally:
        for p in spinners + [job]:
            if p.poll() is None:
                p.kill()
                p.wait()


@pytest.mark.skipif(not LINUX or threads.available_cores() < 2, reason="needs 2 cores")
def test_kernels_are_timed_once_the_load_is_known_and_the_cap_applied(monkeypatch):
    """What is timed to choose kernels waits for `ready_to_time`: False from the sampler's
    start until its first window (WINDOW samples, PERIOD apart) has been averaged, and while
    the thread still runs more threads than the cap in force."""
    monkeypatch.setattr(core_monitor.STATE, "sampling", False)
    monkeypatch.setattr(core_monitor.STATE, "settled", True)
    core_monitor.start()
    assert not core_monitor.ready_to_time(1)
    deadline = time.monotonic() + 5.0
    while not core_monitor.STATE.settled and time.monotonic() < deadline:
        time.sleep(0.02)
    monkeypatch.setattr(core_monitor.STATE, "cap", 1)
    assert core_monitor.ready_to_time(1) and not core_monitor.ready_to_time(2)
    monkeypatch.setattr(core_monitor.STATE, "cap", None)
    assert core_monitor.ready_to_time(2)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_without_the_parents_cap(monkeypatch):
    monkeypatch.setattr(core_monitor.STATE, "sampling", True)
    monkeypatch.setattr(core_monitor.STATE, "cap", 1)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: report its state and leave without pytest's teardown
        os.write(w, repr((core_monitor.STATE.cap, core_monitor.STATE.sampling)).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        seen = f.read()
    os.waitpid(pid, 0)
    assert seen == "(None, False)"

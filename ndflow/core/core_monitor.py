"""How many cores the other processes on this machine leave to this one.

ATen's kernels split their work statically over the OpenMP team (oneDNN, MKL and
`at::parallel_for` give each thread a fixed share), and the team's threads spin-wait for
each other at every kernel's end. When another process takes a core, the thread that shares
it finishes its share late and its partners spin meanwhile: measured on 2 cores, two ndflow
training jobs at once each ran 15-23x slower, while one thread per job (each on a core of
its own) runs 1.6-1.9x slower, what the halved cores cost. TensorFlow's pool steals work
instead, so it degrades gracefully with a fixed count; ATen's cannot, so ndflow changes the
count: runtime/threads.py lowers a thread's intra-op threads to the cores left free.

A daemon thread samples the busy CPU time of the cores this process may run on (/proc/stat's
per-CPU lines, its affinity mask), this process's own CPU time
(`time.process_time`, all its threads) and its pipeline threads' (tf.data's prefetch and map
threads register themselves: `register_helper_thread`) every `PERIOD` seconds; the load that
competes with the kernels is the machine's less this process's, plus the pipeline threads',
over the last `WINDOW` samples, in cores (a map that costs a core needs one as much as
another program does: measured on 2 cores, a Keras fit whose map costs about a step took
2.8x fit on arrays with the kernels on both cores, 1.9x with the cores' idle threads
sleeping, against a 1.7x floor). The cap it publishes:
- no cap (None) while others use less than `LOWER_AT` of a core beyond the free cores;
- else the cores left (at least 1), rounded down, raised again only once the others' load
  has fallen by `RAISE_MARGIN` of a core below what a higher count needs (hysteresis, so two
  jobs sharing a machine settle instead of trading threads every sample).
Another ndflow job counts as load like any program; spinning OpenMP threads count too, which
is what lets two jobs that start together both step down.

The sampler runs while this process computes: runtime/threads.py starts it from the first
plan run or eager op, and it stops once the process has been idle for `IDLE_STOP` seconds
(the next run starts it again). It runs only on Linux machines of 2 or more cores, where
/proc/stat exists; elsewhere the cap stays None.

Under the cap, a thread still waits for a core when others leave it less than one (beside two
busy processes on two cores, three threads share them). The sampler then also watches the
capped thread (`watch_thread`): the share of its runnable time it spent waiting for a CPU
(/proc's schedstat of the thread) tells whether the cores are crowded beyond the cap, and
`STATE.share` asks runtime/threads.py to spread that thread's large products over its
configured count again, on kernels/work_pool.py's pool (no barriers: a helper that loses its
core costs at most the block it holds). Measured on 2 cores, the watched thread waited 0-5% of
its runnable time as one of two copies or beside one busy process (a core of its own, which a
helper could only split) and 23-38% beside two busy processes, and 34-52% there once its work
was shared (23-33% beside one busy process): so sharing starts above `SHARE_AT` and stops
below `UNSHARE_AT`.

What is timed to choose between kernels (kernels/autotune.py) waits for `ready_to_time`:
until the sampler's first window is averaged, the cap does not yet say whether another
process shares the cores, and timings taken then can be of OpenMP stalls (measured: a
process started beside one busy process timed MNIST's 5x5 convolutions at 9-15 ms for every
algorithm, where FFT takes 2.5 ms alone, and kept oneDNN's default for its whole life).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque

from ndflow.core import logging

PERIOD = 0.1          # seconds between samples
WINDOW = 4            # samples the load is averaged over (0.4 s)
LOWER_AT = 0.6        # cores others must take from the free ones before a thread is given up
RAISE_MARGIN = 0.35   # how far below a count's need the load must fall to raise it again
IDLE_STOP = 2.0       # seconds this process stays idle before the sampler stops
IDLE_LOAD = 0.05      # cores this process uses below which it counts as idle
SHARE_AT = 0.18       # the capped thread's waiting share above which its work is shared
UNSHARE_AT = 0.36     # ... and below which, while shared, sharing stops
MIN_RUNNABLE = 0.2    # of the window: less runnable time than this judges nothing
_STAT = "/proc/stat"
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class _State:
    """What the sampler publishes, read without a lock by every plan run and eager op."""
    cap: int | None = None     # the cap in force (None: no cap)
    share = False              # the capped thread's work runs on kernels/work_pool.py's pool
    sampling = False           # a sampler runs (or cannot run here: it is not started again)
    settled = True             # the cap reflects the load (False until a window is averaged)


STATE = _State()
_lock = threading.Lock()
_helper_threads: dict = {}    # native id of a pipeline thread -> its CPU seconds last read
_helper_total = [0.0]         # their CPU seconds summed over samples (never decreases)
_watched = [0]                # native id of the capped thread whose waits decide `share`


def _after_fork_in_child() -> None:
    """A forked child has no sampler thread and none of the parent's pipeline threads: it
    starts from no cap and samples anew on its first run."""
    global _lock
    _lock = threading.Lock()
    STATE.cap, STATE.sampling, STATE.settled, STATE.share = None, False, True, False
    _helper_threads.clear()
    _watched[0] = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def register_helper_thread() -> None:
    """Counts the calling thread's CPU time as load that competes with the kernels (a
    tf.data pipeline thread: its map work needs a core the kernels' threads would spin on)."""
    if hasattr(threading, "get_native_id"):   # its CPU so far: what later reads count from
        with _lock:
            _helper_threads[threading.get_native_id()] = time.thread_time()


def _helper_seconds() -> float:
    """CPU seconds the helper threads have used since they registered (their /proc
    schedstat, summed as deltas so that a thread ending takes nothing back)."""
    with _lock:
        for tid, last in list(_helper_threads.items()):
            try:
                with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
                    now = int(f.read().split()[0]) / 1e9
            except (OSError, ValueError, IndexError):
                del _helper_threads[tid]   # ended (a new thread with its id registers anew)
                continue
            _helper_total[0] += max(0.0, now - last)
            _helper_threads[tid] = now
        return _helper_total[0]


def watch_thread() -> None:
    """Makes the calling thread (one the cap lowered) the one whose waits for a core decide
    whether its work is shared (`STATE.share`)."""
    if hasattr(threading, "get_native_id"):
        _watched[0] = threading.get_native_id()


def thread_times(tid: int) -> tuple[float, float] | None:
    """(seconds run on a CPU, seconds waited runnable for one) of this process's thread `tid`
    since it started (/proc's schedstat), or None where that cannot be read."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
            run_ns, wait_ns = f.read().split()[:2]
        return int(run_ns) / 1e9, int(wait_ns) / 1e9
    except (OSError, ValueError):
        return None


def decide_share(sharing: bool, waited: float) -> bool:
    """Whether the capped thread's work is shared, given whether it is now and the share of
    its runnable time it `waited` for a CPU over the window (module doc)."""
    return waited >= UNSHARE_AT if sharing else waited > SHARE_AT


def allowed_cpus() -> frozenset:
    """The CPUs this process may run on (its affinity mask), else all the machine's."""
    if hasattr(os, "sched_getaffinity"):
        return frozenset(os.sched_getaffinity(0))
    return frozenset(range(os.cpu_count() or 1))


def machine_busy_seconds(cpus: frozenset | None = None) -> float | None:
    """CPU seconds used since boot (user, nice, system, irq, softirq) on the CPUs numbered
    `cpus` (None: all of them), from /proc/stat's per-CPU lines; None if it cannot be read.
    Only the CPUs this process may run on count: a process pinned to 4 of 16 cores shares
    nothing with programs on the other 12. Idle, iowait and a virtual machine's steal (time
    the host gave another guest) are left out: none is a program here that kernels could
    yield a core to."""
    try:
        with open(_STAT, "rb") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    total, seen = 0, False
    for line in lines[1:]:
        if not line.startswith(b"cpu"):
            break
        fields = line.split()
        if len(fields) < 8 or (cpus is not None and int(fields[0][3:]) not in cpus):
            continue
        user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[1:8])
        total += user + nice + system + irq + softirq
        seen = True
    return total / _TICK if seen else None


def decide(current: int | None, others: float, cores: int) -> int | None:
    """The cap for `others` cores of load from other processes, given the cap in force
    (`current`, None = no cap) on a machine of `cores` cores."""
    free = cores - others
    if current is None:
        if others < LOWER_AT:
            return None
        return max(1, min(cores - 1, int(free + 1 - LOWER_AT)))
    # capped: raise one step at a time, once the next count's core is clearly free
    if free >= current + 1 - LOWER_AT + RAISE_MARGIN:
        return None if current + 1 >= cores else current + 1
    if free < current - LOWER_AT:   # others took more
        return max(1, int(free + 1 - LOWER_AT))
    return current


class _Sampler(threading.Thread):
    def __init__(self, cpus: frozenset):
        super().__init__(name="ndflow-core-monitor", daemon=True)
        self.cpus, self.cores = cpus, len(cpus)

    def run(self) -> None:
        samples: deque = deque(maxlen=WINDOW + 1)
        idle_since = None
        while True:
            busy = machine_busy_seconds(self.cpus)
            if busy is None:
                break
            samples.append((time.monotonic(), busy, time.process_time(), _helper_seconds(),
                            _watched[0], thread_times(_watched[0]) if _watched[0] else None))
            if len(samples) > WINDOW:
                (t0, b0, p0, h0, w0, s0), (t1, b1, p1, h1, w1, s1) = samples[0], samples[-1]
                own = (p1 - p0) / (t1 - t0)
                helpers = (h1 - h0) / (t1 - t0)
                others = max(0.0, (b1 - b0) / (t1 - t0) - own) + helpers
                new = decide(STATE.cap, others, self.cores)
                if new != STATE.cap:
                    logging.vlog("core_monitor", 1,
                                 f"other processes and pipeline threads use {others:.2f} of "
                                 f"{self.cores} cores: intra-op threads capped at {new}")
                    STATE.cap = new
                if new is None:
                    STATE.share = False
                elif s0 and s1 and w0 == w1:
                    ran, waited = s1[0] - s0[0], s1[1] - s0[1]
                    if ran + waited > MIN_RUNNABLE * (t1 - t0):
                        share = decide_share(STATE.share, waited / (ran + waited))
                        if share != STATE.share:
                            logging.vlog("core_monitor", 1,
                                         f"the capped thread waited {waited / (ran + waited):.0%}"
                                         f" of its runnable time for a core: work "
                                         f"{'shared' if share else 'no longer shared'}")
                            STATE.share = share
                STATE.settled = True
                # this process idle (no kernels running): stop until the next run asks
                if own < IDLE_LOAD:
                    idle_since = idle_since or t1
                    if t1 - idle_since > IDLE_STOP:
                        break
                else:
                    idle_since = None
            time.sleep(PERIOD)
        with _lock:
            STATE.cap = None
            STATE.share = False
            STATE.sampling = False
            STATE.settled = True


def start() -> None:
    """Starts the sampler (a daemon thread) unless it runs, or this machine has one core
    or no /proc/stat. Called by runtime/threads.py when `STATE.sampling` is False."""
    with _lock:
        if STATE.sampling:
            return
        cpus = allowed_cpus()
        STATE.sampling = True   # also when there is nothing to sample: never try again
        if len(cpus) >= 2 and machine_busy_seconds(cpus) is not None:
            STATE.settled = False
            _Sampler(cpus).start()


def ready_to_time(threads: int) -> bool:
    """Whether a kernel run now with `threads` intra-op threads is timed as it will run: the
    sampler has averaged its first window since it started (or none runs: one core, no
    /proc/stat, following the free cores turned off, a single-threaded thread that never
    started it), and the cap, if any, is in force (a plan run applies it when it starts,
    so the run during which the first window ends still has the old count)."""
    cap = STATE.cap
    return STATE.settled and (cap is None or threads <= cap)

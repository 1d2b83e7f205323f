"""How many calls of a parallel `map(..., num_parallel_calls=AUTOTUNE)` run at once, chosen by
measuring, as tf.data's autotuner chooses it from measured processing times.

More calls in flight are not always faster here: the calls share the GIL, so a function of
many short ATen ops (a vectorized map over batches) spends on a second worker's hand-offs
what it gains in overlap (measured on 2 cores, the input pipeline benchmark's batch map: 1.68
ms a batch with one call in flight, 1.96 with two), while a function that waits (a read, a
`py_function` that sleeps) gains with each call. So the map measures its output: after a
warm-up, each candidate count runs for a window of tasks, the fastest wins, and a smaller
count within `TOLERANCE` of it wins over a larger one (fewer threads leave more CPU to the
consumer, a training step, and cost it fewer GIL hand-offs, which the map's windows do not
see). The choice is measured again every `PERIOD` windows, since a
pipeline's cost can change (caches fill, the consumer starts training).

When the map's consumer is the slower side, every count measures alike and the smallest is
kept. `Gate` bounds the calls running at once to the current choice.

A window's output rate alone can flatter a larger count: right after a switch the calls in
flight hand out into an emptied buffer downstream (a prefetch) faster than the pipeline's
consumer will take them once it has filled, while the calls, sharing the GIL, each take
longer. So the map also reports each task's duration (`task_time`), and a window costs at
least what its tasks' mean duration allows at that count in flight (`WINDOW * mean /
count`): calls that wait (the GIL released) overlap and keep their duration; calls that
contend for the GIL take about `count` times longer and gain little. Measured on the loaded
2-core box, the input pipeline benchmark's batch map takes 0.78 ms a call alone, 1.9-2.4 ms
with two in flight, and runs at 0.75x the images/s with two; its windows still measured
two up to 17% faster at times (with a 5% tolerance, two calls won in 2 of 8 runs), hence a
20% tolerance.
"""

from __future__ import annotations

import threading
import time


class ParallelismTuner:
    WARMUP = 3        # tasks before the first measurement (tracing, buffers filling)
    WINDOW = 6        # tasks per measured window
    PERIOD = 30       # windows at the chosen count between two rounds of measurement
    TOLERANCE = 0.2   # a smaller count within 20% of the fastest is chosen

    def __init__(self, max_parallelism: int, start: int | None = None,
                 clock=time.perf_counter):
        """`start`: a count an earlier iterator of the same map settled on; this one runs it
        until its first round of measurement (`PERIOD` windows), else it measures first."""
        self.candidates = _candidates(max_parallelism)
        self.limit = max_parallelism if start is None else start
        self._clock = clock
        self._seen = 0
        # index into candidates being measured, or None when settled
        self._probe = 0 if start is None else None
        self._window_start = None
        self._window_count = 0
        self._times: dict = {}
        self._settled_windows = 0
        self.settled = start
        self._busy = [0.0, 0]   # the tasks' seconds and count in the current window
        self._busy_lock = threading.Lock()

    def task_time(self, seconds: float) -> None:
        """Called by whichever thread ran a task, with the task's duration."""
        with self._busy_lock:
            self._busy[0] += seconds
            self._busy[1] += 1

    def task_done(self) -> int | None:
        """Called as the map hands out each task's outputs (an element, or a chunk of
        elements of a short function): windows count tasks. Returns the count chosen by the
        last completed measurement (None before one)."""
        self._seen += 1
        if self._seen <= self.WARMUP or len(self.candidates) == 1:
            return self.settled
        now = self._clock()
        if self._window_start is None:   # a window starts at its first task's hand-out
            self._window_start, self._window_count = now, 0
            with self._busy_lock:
                self._busy = [0.0, 0]
            return self.settled
        self._window_count += 1
        if self._window_count < self.WINDOW:
            return self.settled
        elapsed, self._window_start = now - self._window_start, None
        with self._busy_lock:
            busy, tasks = self._busy
        if tasks:  # no faster than the tasks' durations allow at this count in flight
            elapsed = max(elapsed, busy / tasks * self.WINDOW / self.limit)
        if self._probe is None:
            self._settled_windows += 1
            if self._settled_windows >= self.PERIOD:
                self._start_probing()
            return self.settled
        self._times[self.candidates[self._probe]] = elapsed
        self._probe += 1
        if self._probe < len(self.candidates):
            self.limit = self.candidates[self._probe]
            return self.settled
        fastest = min(self._times.values())
        self.limit = self.settled = min(c for c, t in self._times.items()
                                        if t <= fastest * (1 + self.TOLERANCE))
        self._probe, self._settled_windows = None, 0
        return self.settled

    def _start_probing(self) -> None:
        self._probe, self._times = 0, {}
        self.limit = self.candidates[0]


def _candidates(n: int) -> list:
    """The counts tried, largest first: n, then halving down to 1 (n, n/2, ..., 1)."""
    out = [n]
    while out[-1] > 1:
        out.append(out[-1] // 2)
    return out


class Gate:
    """At most `tuner.limit` holders at once (the limit may change while held)."""

    def __init__(self, tuner: ParallelismTuner):
        self._tuner = tuner
        self._active = 0
        self._cond = threading.Condition()

    def __enter__(self):
        with self._cond:
            while self._active >= self._tuner.limit:
                self._cond.wait()
            self._active += 1
        return self

    def __exit__(self, *exc):
        with self._cond:
            self._active -= 1
            self._cond.notify()
        return False

"""Per-kernel wall time of a compiled program (runtime/plan.py's plans, jit/executable.py's
executables): each kernel its generated code calls through a scope is wrapped with a timer
for a few runs, then restored, so normal runs never pay for timing."""

from __future__ import annotations

import time


def _timed(fn, totals: list, i: int):
    def timed(*args):
        t = time.perf_counter()
        out = fn(*args)
        totals[i] += time.perf_counter() - t
        return out
    return timed


def mean_kernel_seconds(scope: dict, knames: list, run, steps: int) -> list:
    """The mean seconds per call of `run()` spent in each `scope[kname]`, over `steps` calls."""
    totals = [0.0] * len(knames)
    originals = {}
    for i, kname in enumerate(knames):
        originals[kname] = fn = scope[kname]
        scope[kname] = _timed(fn, totals, i)
    try:
        for _ in range(steps):
            run()
    finally:
        scope.update(originals)
    return [t / steps for t in totals]

"""Timing several steps against each other in one process: in turn, in blocks.

A ratio of two medians taken minutes apart on a shared machine can be off by 10-20% (another
process, the CPU's clock). Timed in turn, the machine's drift weighs on every configuration
alike. In blocks of a few steps, each after one untimed step of its own, every configuration
runs with its caches as warm as a training loop has them: single steps alternating each start
on the other models' data (5-15% slower on the 2-core hosts)."""

from __future__ import annotations

import time

import numpy as np


def medians_in_turn(calls: dict, steps: int, warmup: int, block: int = 5,
                    sync=lambda: None) -> dict:
    """{name: median ms of `steps` timed calls}: each callable's `warmup` calls first, then
    rounds of one untimed call and `block` timed ones of each in turn. `sync` runs after each
    call, inside the timing (a GPU's synchronize)."""
    for call in calls.values():
        for _ in range(warmup):
            call()
    times: dict = {name: [] for name in calls}
    while any(len(ts) < steps for ts in times.values()):
        for name, call in calls.items():
            call()
            sync()
            for _ in range(min(block, steps - len(times[name]))):
                t = time.perf_counter()
                call()
                sync()
                times[name].append(time.perf_counter() - t)
    return {name: 1000 * float(np.median(ts)) for name, ts in times.items()}

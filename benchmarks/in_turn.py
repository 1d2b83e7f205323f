"""Timing several steps against each other: in turn, in blocks.

A ratio of two medians taken minutes apart on a shared machine can be off by 10-20% (another
process, the CPU's clock). Timed in turn, the machine's drift weighs on every configuration
alike. In blocks of a few steps, each after one untimed step of its own, every configuration
runs with its caches as warm as a training loop has them: single steps alternating each start
on the other models' data (5-15% slower on the 2-core hosts). What runs before a block still
weighs on it (its data in the caches, TensorFlow's threads winding down), so the rounds follow
a Williams design (`balanced_orders`): over its rounds every configuration directly follows
every other equally often. A fixed order let a configuration that always followed a similar one
(the tf.function step after the Session step, the same kernels) run warmer than one that always
followed PyTorch (the loss-scale step measured 1.07x the plain one); rotating that order by one
each round (until 2026-11-26) kept who follows whom (the loss-scale step always after
TensorFlow's: 1.025-1.046x the plain step in five runs, 1.00-1.02x where it followed others).

A configuration may live in another process (TensorFlow, which ndflow's process never
imports): `StepServer` starts a script that serves blocks of steps on request, so that it
takes its turns among the others instead of being timed before or after them. While one
process runs its block the other waits on the pipe, its threads idle."""

from __future__ import annotations

import json
import os
import subprocess
import time

import numpy as np

# The loop a served script ends with: its `step()` defined (and optionally a dict
# `ready_info`, sent back once), it answers each line "N" on stdin with one untimed step and
# the seconds of N timed ones, as a JSON list.
SERVE_LOOP = r"""
import json as _json, sys as _sys, time as _time
print("ready", _json.dumps(globals().get("ready_info", {})), flush=True)
for _line in _sys.stdin:
    if _line.strip() == "quit":
        break
    step()
    _ts = []
    for _ in range(int(_line)):
        _t = _time.perf_counter(); step(); _ts.append(_time.perf_counter() - _t)
    print(_json.dumps(_ts), flush=True)
"""


class StepServer:
    """A step in another interpreter (`python -c script args...`, the script ending with
    SERVE_LOOP), timed by blocks: `block(n)` -> n step times in seconds; `info`: the
    script's `ready_info`. `env`: environment variables to set (None: to remove)."""

    def __init__(self, python: str, script: str, args: list, env: dict | None = None,
                 cwd: str | None = None):
        environ = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        for k, v in (env or {}).items():
            if v is None:
                environ.pop(k, None)
            else:
                environ[k] = v
        self.proc = subprocess.Popen([python, "-c", script + SERVE_LOOP, *map(str, args)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=environ, cwd=cwd)
        word, _, info = self.proc.stdout.readline().partition(" ")
        if word.strip() != "ready":
            self.close()
            raise RuntimeError(self.proc.stderr.read()[-2000:] or "the step server exited")
        self.info = json.loads(info)

    def block(self, n: int) -> list:
        try:
            self.proc.stdin.write(f"{n}\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError:
            line = ""
        if not line:
            raise RuntimeError("the step server exited: " + self.proc.stderr.read()[-2000:])
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            except OSError:
                pass
            self.proc.wait(timeout=60)


def medians_in_turn(calls: dict, steps: int, warmup: int, block: int = 5,
                    sync=lambda: None) -> dict:
    """{name: median ms of `steps` timed calls}: each callable's `warmup` calls first, then
    rounds of one untimed call and `block` timed ones of each in turn, the rounds' orders a
    Williams design (`balanced_orders`; blocks shortened so that the rounds cover it). `sync`
    runs after each call, inside the timing (a GPU's synchronize). A
    StepServer takes its turn by blocks (it warmed up before it said it was ready)."""
    for call in calls.values():
        if not isinstance(call, StepServer):
            for _ in range(warmup):
                call()
    times: dict = {name: [] for name in calls}
    items = list(calls.items())
    orders = balanced_orders(len(items))
    # blocks small enough that the rounds go through the whole design once (at most `block`)
    block = max(1, min(block, -(-steps // len(orders))))
    rounds = 0
    while any(len(ts) < steps for ts in times.values()):
        order = [items[k] for k in orders[rounds % len(orders)]]
        rounds += 1
        for name, call in order:
            n = min(block, steps - len(times[name]))
            if isinstance(call, StepServer):
                if n > 0:
                    times[name] += call.block(n)
                continue
            call()
            sync()
            for _ in range(n):
                t = time.perf_counter()
                call()
                sync()
                times[name].append(time.perf_counter() - t)
    return {name: 1000 * float(np.median(ts)) for name, ts in times.items()}


def balanced_orders(n: int) -> list:
    """Orders of range(n) in which each configuration directly follows every other equally
    often: a Williams design, n orders for an even n (each ordered pair adjacent once), 2n for
    an odd n (the mirrored orders added; each pair twice)."""
    if n <= 1:
        return [list(range(n))]
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:   # 0, 1, n-1, 2, n-2, ...
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    orders = [[(k + i) % n for k in first] for i in range(n)]
    if n % 2:
        orders += [order[::-1] for order in orders]
    return orders

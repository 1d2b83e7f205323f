"""Which memory layout a CPU convolution of an NHWC graph computes in, chosen by timing both.

NHWC data reaches ATen as channels-last NCHW views, which oneDNN convolves with no copy. But
oneDNN's channels-last kernels are not always its fastest: on an AVX2 EPYC, MNIST's 5x5
32->64 convolution at batch 64 takes 8.9 / 8.7 / 6.7 ms (forward / input gradient / filter
gradient) on channels-last memory and 6.1 / 6.0 / 6.8 ms on plain NCHW memory, copies in and
out included, while the first 5x5x1x32 one is twice as fast on channels-last. No rule of
thumb holds across CPUs, so, like TF's cuDNN autotuner (TF_CUDNN_USE_AUTOTUNE, on by
default), each large convolution shape is run both ways the first time it is seen and the
faster way is kept for the process. Small convolutions (below `MIN_FLOPS`) stay channels-
last: timing them costs more than either choice could save, and their results stay exactly
those of the untuned kernel.
"""

from __future__ import annotations

import threading
import time

from ndflow.core import config, determinism

MIN_FLOPS = 5e7      # multiply-adds x 2 below which a convolution is not tuned
_MARGIN = 0.92       # plain NCHW must be this much faster: its copies vary from run to run
_REPEATS = 2

_choices: dict = {}  # key -> True when plain NCHW is the faster layout
_lock = threading.Lock()


def _timed(run, plain: bool):
    """(seconds, result) of one run; tests replace it to force a choice."""
    t = time.perf_counter()
    result = run(plain)
    return time.perf_counter() - t, result


def tuning_enabled() -> bool:
    try:
        return config.cudnn_use_autotune()
    except ValueError:
        return True


def choices() -> dict:
    """What has been tuned so far: {(kind, shapes...): plain NCHW chosen}."""
    return dict(_choices)


def clear() -> None:
    _choices.clear()


def run_tuned(key, flops: float, run):
    """`run(plain)` computes the op on plain NCHW memory (True) or channels-last (False); the
    first call for `key` times both and keeps the faster for later calls."""
    if determinism.enabled():  # a choice made by timing could differ between processes
        return run(False)
    plain = _choices.get(key)
    if plain is not None:
        return run(plain)
    if flops < MIN_FLOPS or not tuning_enabled():
        return run(False)
    with _lock:
        plain = _choices.get(key)
        if plain is not None:
            return run(plain)
        run(False)  # first runs create oneDNN's primitives: not timed
        run(True)
        best = {False: float("inf"), True: float("inf")}
        for _ in range(_REPEATS):
            for layout in (False, True):
                seconds, result = _timed(run, layout)
                best[layout] = min(best[layout], seconds)
        plain = best[True] < _MARGIN * best[False]
        _choices[key] = plain
    return result if layout == plain else run(plain)

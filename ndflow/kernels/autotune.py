"""Which algorithm a kernel runs for a shape, chosen by timing the candidates, as TF's cuDNN
autotuner (TF_CUDNN_USE_AUTOTUNE, on by default) times cuDNN's algorithms: the CPU
convolutions of NHWC graphs (below) and the float32 matrix products' GEMM library
(kernels/gemm.py: MKL or oneDNN) share this timer, its switches and its table.

The convolutions' candidates:
- `CHANNELS_LAST` (the default): NHWC data reaches ATen as channels-last NCHW views, which
  oneDNN convolves with no copy;
- `NCHW`: copied to plain NCHW memory and back. oneDNN's channels-last kernels are not always
  its fastest: on an AVX2 EPYC, MNIST's 5x5 32->64 convolution at batch 64 takes 8.9 / 8.7 /
  6.7 ms (forward / input gradient / filter gradient) on channels-last memory and 6.1 / 6.0 /
  6.8 ms on plain NCHW memory, copies in and out included, while the first 5x5x1x32 one is
  twice as fast on channels-last;
- `FFT` (conv_fft.py), for stride-1 convolutions with filters of at least 3x3 on small
  images: a pointwise product of spectra, about a quarter of the direct convolution's
  arithmetic for MNIST's 5x5 layer; on an AMX Xeon 2.4 / 2.5 / 2.2 ms standalone against
  oneDNN's 3.1 / 2.7 / 2.9 ms, and in a training step the filter gradient takes the
  spectra the other two passes leave (`credit`, below);
- `FLIPPED`, for the input gradient where TF's padding is asymmetric (SAME with an odd total:
  the extra row and column at the bottom/right, as every stride-2 SAME convolution of an
  even-sized image has): a transposed convolution of the spatially flipped gradient and
  filter, which makes exactly the input's rows and columns, where the default computes a
  padded (h+1) x (w+1) gradient and crops it. oneDNN's deconvolution on the exact size took
  6.2 ms against 7.8-8.7 for a DCGAN's 5x5 stride-2 128->64 layer at batch 64 (Zen 4),
  while for 3x3 layers the two flips cost about what they save;
- `COL2IM`, for the input gradient of few input channels (a window's kh*kw*in values no
  more than the gradient's out channels): one GEMM and ATen's col2im (`fold`), as TF's
  Conv2DCustomBackpropInput computes it (nn_conv.py);
- `VECTOR`, for the filter gradient of a float32 NHWC depthwise convolution with a channel
  multiplier of 1: kernels/depthwise_numba.py's channel-vector loops against ATen's grouped
  convolution (which takes 2.4 ms where the kernel takes 0.23 on a 3x3 image of 1152
  channels, and wins on large images).

No rule of thumb holds across CPUs, so each large convolution shape runs every candidate the
first time it is seen (once untimed, creating oneDNN's primitives, then a few timed
rounds) and the fastest is kept for the process. Small convolutions (below `MIN_FLOPS`)
run the default: timing them costs more than any choice could save, and their results stay
exactly those of the untuned kernel — unless the default is slow for its size: its first
runs are timed (two clock reads), and one whose second run takes as long as a `MIN_FLOPS`
convolution at `SLOW_RATE` is tuned like a large one from its next run (oneDNN's direct
kernels for one channel run at a tenth of the GEMM's rate: a DCGAN's 40 MFLOP 64->1
transposed convolution took 1.7-2 ms, its col2im candidate 0.56 ms, Zen 5). Under op
determinism nothing is timed (a choice made by timing could differ between processes).

Kernels of a few microseconds (kernels/gemm.py's small products) are not timed back to back:
a library's threads, which sleep between the ops of a step, are awake in such a loop. Their
first calls run the candidates in turn, each call the op's own, timed where it runs
(`run_in_turn`); the choice may carry what the kernel made ready for the shape (`prepare`).

A choice holds for the intra-op thread count it was timed with: on a machine shared with
other processes the core monitor (core/core_monitor.py) lowers the count, and the best
algorithm for one thread is not the best for two (one thread's FFT has no partner to stall).
Nothing is timed before the monitor knows whether the cores are shared (its first 0.4 s):
a process started beside a busy one timed every candidate of MNIST's 5x5 convolutions as
OpenMP stalls (9-15 ms, the FFT's 2.5 ms alone) and kept the default for good. Until then
the default runs and nothing is recorded.
"""

from __future__ import annotations

import statistics
import threading
import time

import torch

from ndflow.core import config, core_monitor, determinism

CHANNELS_LAST, NCHW, FFT, FLIPPED, COL2IM = "channels_last", "nchw", "fft", "flipped", "col2im"
VECTOR = "vector"   # a hand-written vector kernel (the depthwise filter gradient's)
LAYOUTS = (CHANNELS_LAST, NCHW)

MIN_FLOPS = 5e7      # multiply-adds x 2 below which a convolution is not tuned
SLOW_RATE = 1e11     # FLOP/s: a small convolution slower than MIN_FLOPS at it is tuned
_SMALL_PROBES = 2    # runs of a small shape's default that are timed (the first builds)
_MARGIN = 0.92       # another candidate must be this much faster than the default: copies
_REPEATS = 5         # and allocations vary from run to run (an FFT's first timed runs in a
_REPEATS_LONG = 2    # step took 1.2-1.9x its later ones); convolutions whose first round
_LONG = 0.1          # of runs took over _LONG seconds are timed _REPEATS_LONG times

_choices: dict = {}  # (intra-op threads, key) -> the algorithm chosen
_small_runs: dict = {}   # (threads, key) of a small shape -> its default's runs timed
_IN_TURN_ROUNDS = 7  # run_in_turn: timed calls of each candidate
_turns: dict = {}    # run_in_turn: (threads, key) -> [calls so far, {algorithm: [seconds]}]
_prepared: dict = {}  # (threads, key) -> its chosen algorithm made ready (`prepare`)
# bumped whenever a prepared kernel may stop being the choice (`forget`, `clear`): what an
# op kept of `prepared(key)` (kernels/gemm.py's Linear) holds while it is unchanged
generation = 0
_comparing = threading.local()   # .depth: candidates being timed on this thread (nested)
# reentrant: a candidate may run a tuned kernel itself (the FFT's transforms are GEMMs
# whose library is chosen by timing the first time their shape comes)
_lock = threading.RLock()


def _timed(run, algorithm: str, credit=None):
    """(seconds, result) of one run, less the seconds `credit(algorithm)` says the run spent
    on work another op will not have to do; tests replace it to force a choice."""
    if credit is not None:
        credit(algorithm)   # forgets what earlier runs left
    t = time.perf_counter()
    result = run(algorithm)
    seconds = time.perf_counter() - t
    return seconds - (credit(algorithm) if credit is not None else 0.0), result


def tuning_enabled() -> bool:
    try:
        return config.get(config.TF_CUDNN_USE_AUTOTUNE)
    except ValueError:
        return True


def choices(threads: int | None = None) -> dict:
    """What has been tuned so far for `threads` intra-op threads (None: the calling
    thread's count): {(kind, shapes...): algorithm}."""
    threads = torch.get_num_threads() if threads is None else threads
    return {key: chosen for (n, key), chosen in _choices.items() if n == threads}


def clear() -> None:
    global generation
    generation += 1
    _choices.clear()
    _small_runs.clear()
    _turns.clear()
    _prepared.clear()


def decided(key) -> str | None:
    """The algorithm chosen for `key` under this thread's intra-op thread count, None while
    it has not been tuned."""
    return _choices.get((torch.get_num_threads(), key))


def prepared(key):
    """What `prepare` attached to `key`'s choice under this thread's intra-op thread count:
    None before it (and under op determinism, where the default runs)."""
    if determinism.enabled():
        return None
    return _prepared.get((torch.get_num_threads(), key))


def prepare(key, ready) -> None:
    """Attaches `ready` to the choice made for `key` (under this thread count): the chosen
    algorithm made ready for that shape (kernels/gemm.py's small products, whose calls cost
    more than their work) that `prepared(key)` returns until the choice is forgotten."""
    threads = torch.get_num_threads()
    with _lock:
        if (threads, key) in _choices and not determinism.enabled():
            _prepared[(threads, key)] = ready


def forget(key) -> None:
    """Drops the choice for `key` (this thread count): its next run times the candidates
    again, for a choice that rested on another op's that has since been made differently."""
    global generation
    with _lock:
        generation += 1
        _choices.pop((torch.get_num_threads(), key), None)
        _prepared.pop((torch.get_num_threads(), key), None)


def comparing() -> bool:
    """Whether this thread is running candidates to time them: a run then leaves shared
    state as it found it, so that each candidate's runs see what a steady-state run sees
    (conv_fft.py: a spectrum another pass left is taken, and kept for the next run)."""
    return getattr(_comparing, "depth", 0) > 0


def run_tuned(key, flops: float, run, algorithms=LAYOUTS, credit=None,
              min_flops: float | None = None):
    """`run(algorithm)` computes the op with one of `algorithms` (the first is the default);
    the first call for `key` times them all and keeps the fastest for later calls. The
    optional `credit(algorithm)` gives the seconds of the last run that another op saves
    (an FFT's spectra that the filter gradient takes); below `min_flops` (default MIN_FLOPS)
    the default runs untimed."""
    chosen, result = _choose(key, flops, run, algorithms, credit, min_flops)
    if result is _PROBE:
        t = time.perf_counter()
        result = run(chosen)
        _probed(key, time.perf_counter() - t, min_flops)
        return result
    return run(chosen) if result is _NOT_RUN else result


def may_time(threads: int) -> bool:
    """Whether kernels run with `threads` intra-op threads may be timed now (not under op
    determinism, tuning on, the core monitor settled)."""
    return not determinism.enabled() and core_monitor.ready_to_time(threads) and \
        tuning_enabled()


def run_in_turn(key, run, algorithms):
    """`run(algorithm)` for a kernel too short to time away from its step: a small matrix
    product, whose library's team of threads sleeps between ops in a step (MKL's [64 x 64]
    products took 8.6 us there against 5-6 back to back). The first calls for `key` run the
    candidates in turn, each call the op's own, timed where it runs; after _IN_TURN_ROUNDS
    timed calls of each (the first of each builds, untimed) the fastest is kept, as
    `run_tuned` keeps it (by the median call). Where nothing may be timed the default
    runs."""
    default = algorithms[0]
    threads = torch.get_num_threads()
    if not may_time(threads):
        return run(default)
    key = (threads, key)
    chosen = _choices.get(key)
    if chosen is not None:
        return run(chosen)
    with _lock:
        turn = _turns.setdefault(key, [0, {algorithm: [] for algorithm in algorithms}])
        calls, times = turn[0], turn[1]
        turn[0] = calls + 1
    algorithm = algorithms[calls % len(algorithms)]
    if calls < len(algorithms):
        return run(algorithm)
    seconds, result = _timed(run, algorithm)
    with _lock:
        times[algorithm].append(seconds)
        if calls + 1 >= (1 + _IN_TURN_ROUNDS) * len(algorithms) and key in _turns:
            # the median: a single call in a step may find the caches or the threads in any
            # state, and the fastest of a few calls chose by luck (MKL over the kernel in one
            # run of three)
            typical = {a: statistics.median(t) for a, t in times.items()}
            fastest = min(algorithms, key=typical.__getitem__)
            _choices[key] = fastest if typical[fastest] < _MARGIN * typical[default] \
                else default
            del _turns[key]
    return result


def _probed(key, seconds: float, min_flops: float | None) -> None:
    """Records a timed run of a small shape's default; the last probe decides whether the
    shape is slow enough to be tuned."""
    key = (torch.get_num_threads(), key)
    runs = _small_runs.get(key, 0) + 1
    if runs == _SMALL_PROBES:
        slow = seconds > (MIN_FLOPS if min_flops is None else min_flops) / SLOW_RATE
        _small_runs[key] = _SLOW if slow else runs
    elif runs < _SMALL_PROBES:
        _small_runs[key] = runs


def choose(key, flops: float, trial, algorithms, min_flops: float | None = None) -> str:
    """The algorithm run_tuned would run for `key`, timing `trial(algorithm)` (a run whose
    result is dropped) the first time: for a fused op that runs one algorithm's part itself
    (a GEMM with an optimizer update after it)."""
    return _choose(key, flops, trial, algorithms, None, min_flops)[0]


_NOT_RUN = object()
_PROBE = object()   # run_tuned times the default's run of a small shape (_probed)
_SLOW = -1          # _small_runs: a small shape whose default is slow, tuned as a large one


def _choose(key, flops, run, algorithms, credit, min_flops) -> tuple:
    """(the algorithm for `key`, the last timed run's result if it ran that algorithm, else
    _NOT_RUN); the candidates are timed the first time `key` comes while tuning is on."""
    default = algorithms[0]
    if determinism.enabled():
        return default, _NOT_RUN
    threads = torch.get_num_threads()
    key = (threads, key)
    chosen = _choices.get(key)
    if chosen is not None:
        return chosen, _NOT_RUN
    small = flops < (MIN_FLOPS if min_flops is None else min_flops) and \
        _small_runs.get(key) != _SLOW
    if small or not tuning_enabled() or not core_monitor.ready_to_time(threads):
        probe = small and 0 <= _small_runs.get(key, 0) < _SMALL_PROBES and \
            tuning_enabled() and core_monitor.ready_to_time(threads)
        return default, _PROBE if probe else _NOT_RUN
    with _lock:
        chosen = _choices.get(key)
        if chosen is not None:
            return chosen, _NOT_RUN
        _comparing.depth = getattr(_comparing, "depth", 0) + 1
        try:
            start = time.perf_counter()
            for algorithm in algorithms:  # first runs build primitives and tables: not timed
                run(algorithm)
            long = time.perf_counter() - start > _LONG
            best = dict.fromkeys(algorithms, float("inf"))
            for _ in range(_REPEATS_LONG if long else _REPEATS):
                for algorithm in algorithms:
                    seconds, result = _timed(run, algorithm, credit)
                    best[algorithm] = min(best[algorithm], seconds)
        finally:
            _comparing.depth -= 1
        fastest = min(algorithms, key=best.__getitem__)
        chosen = fastest if best[fastest] < _MARGIN * best[default] else default
        _choices[key] = chosen
    return chosen, (result if algorithm == chosen else _NOT_RUN)

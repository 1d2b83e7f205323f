"""What the model benchmarks share (issue 54): each model file writes its model as a user
would (Keras layers, `fit`, `tf.function` loops) in a `run(tf, args)` that works in both
libraries, and this runs it in ndflow's interpreter and in TensorFlow 2.21's, alternating for
`--rounds` rounds (each side keeps its best figures), in graph mode and with
`jit_compile=True` (`--jit`), then prints per configuration the median step, the first step
(tracing and compiles), the peak resident memory, the ratio to TensorFlow's and how far the
step is from this CPU's floor: the step's FLOPs at the best float32 GEMM rate measured here
plus its bytes at the measured copy bandwidth.

Worker mode (`--worker ndflow|tensorflow`) imports the library as `tf`, so the TensorFlow
side never loads ndflow or torch.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import side_by_side  # noqa: E402


def median_ms(stamps: list) -> float:
    gaps = sorted(b - a for a, b in zip(stamps, stamps[1:]))
    return gaps[len(gaps) // 2] * 1e3


def stamp_callback(tf):
    class Stamps(tf.keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.stamps = []

        def on_train_batch_end(self, batch, logs=None):
            self.stamps.append(time.perf_counter())
    return Stamps()


class FitWorkload:
    """A Keras model trained by `fit` on arrays `x`, `y` in batches of `batch`."""

    def __init__(self, model, x, y, batch: int):
        self.model, self.x, self.y, self.batch = model, x, y, batch


class LoopWorkload:
    """A custom loop: `step(*batch)` for each of `batches`, its result fetched each step."""

    def __init__(self, step, batches: list):
        self.step, self.batches = step, batches


def measure(tf, workload, epochs: int) -> dict:
    """`first_s`: the first step's time (tracing and compiling included); `step_ms`: the
    median gap between consecutive steps over `epochs` epochs after it."""
    if isinstance(workload, FitWorkload):
        return fit_step(tf, workload.model, workload.x, workload.y, workload.batch, epochs)
    return loop_step(workload.step, workload.batches, epochs)


def concrete_step(tf, workload):
    """The workload's training step as the concrete function it runs (traced, not run): what
    benchmarks/fusion_census.py inspects."""
    if isinstance(workload, FitWorkload):
        b = workload.batch
        batch = (tf.constant(workload.x[:b]), tf.constant(workload.y[:b]))
        return workload.model.make_train_function().get_concrete_function(batch)
    return workload.step.get_concrete_function(*workload.batches[0])


def fit_step(tf, model, x, y, batch_size: int, epochs: int) -> dict:
    """`model.fit`'s step (slicing the batch, metrics and callbacks included)."""
    t0 = time.perf_counter()
    model.fit(x[:batch_size], y[:batch_size], batch_size=batch_size, epochs=1, verbose=0)
    first = time.perf_counter() - t0
    stamps = stamp_callback(tf)
    model.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0, callbacks=[stamps])
    return {"first_s": first, "step_ms": median_ms(stamps.stamps)}


def loop_step(step, batches, epochs: int) -> dict:
    """A custom loop's step: `step(*batch)` returns a tensor that is fetched (`.numpy()`)
    each step, as a loop printing its loss does."""
    t0 = time.perf_counter()
    step(*batches[0]).numpy()
    first = time.perf_counter() - t0
    stamps = [time.perf_counter()]
    for _ in range(epochs):
        for batch in batches:
            step(*batch).numpy()
            stamps.append(time.perf_counter())
    return {"first_s": first, "step_ms": median_ms(stamps)}


def peak_rss_mb() -> float:
    """This process's peak resident memory: /proc's VmHWM (getrusage's ru_maxrss survives
    exec, so a worker would report its parent's peak when that is higher)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _machine_limits() -> tuple:
    """(best float32 GEMM GFLOP/s, copy GB/s) measured here with ATen."""
    import torch
    from machine import gemm_peak_gflops
    src = torch.randn(1 << 25)
    dst = torch.empty_like(src)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - t)
    return max(gemm_peak_gflops() for _ in range(2)), 2 * src.numel() * 4 / best / 1e9


def main(script: str, doc: str, run, flops: float, bytes_: float, extra_args=None) -> None:
    """The benchmark's command line. `run(tf, args) -> dict` with `step_ms` and `first_s`;
    `flops`, `bytes_`: one training step's FLOPs and the bytes it must move at least."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--worker")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--jit", action="store_true", help="jit_compile=True (TF: XLA)")
    parser.add_argument("--no-jit-row", action="store_true",
                        help="skip the jit_compile=True configuration")
    for add in extra_args or ():
        add(parser)
    args = parser.parse_args()
    if args.worker:
        tf = importlib.import_module(args.worker)
        result = run(tf, args)
        result["peak_mb"] = peak_rss_mb()
        print(json.dumps(result))
        return
    from machine import cpu_line
    print(cpu_line())
    gflops, gbs = _machine_limits()
    floor_ms = flops / gflops / 1e6 + bytes_ / gbs / 1e6
    print(f"step: {flops / 1e9:.2f} GFLOP, >= {bytes_ / 2**20:.0f} MiB moved; floor "
          f"{floor_ms:.1f} ms at {gflops:.0f} GFLOP/s and {gbs:.0f} GB/s measured here")
    passthrough = [a for a in sys.argv[1:] if a not in ("--no-jit-row",)]
    configs = [("graph", [])] + ([] if args.no_jit_row or args.jit else [("jit", ["--jit"])])
    for label, flags in configs:
        ours, theirs = side_by_side.alternate(script, args.rounds, *passthrough, *flags)
        print(f"{label}:")
        theirs = theirs or {}
        units = {"_ms": "ms", "_s": "s", "_mb": "MiB"}
        for key, mine in ours.items():
            unit = next((u for suffix, u in units.items() if key.endswith(suffix)), None)
            if unit is None or not isinstance(mine, (int, float)):
                continue
            tf_value = theirs.get(key)
            line = f"  {key:8s} ndflow {mine:9.2f} {unit:3s}"
            if tf_value:
                line += f"  TensorFlow {tf_value:9.2f} {unit:3s}  ratio {mine / tf_value:5.2f}x"
            print(line)
        step = ours["step_ms"]
        tf_step = theirs.get("step_ms")
        print(f"  floor {floor_ms:.1f} ms: ndflow at {step / floor_ms:.2f}x it"
              + (f", TensorFlow at {tf_step / floor_ms:.2f}x" if tf_step else ""))

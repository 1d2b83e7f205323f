"""Speed on a shared CPU: how much slower a training step gets when other processes want the
cores, ndflow vs TensorFlow 2.21 in the same run (issue 53).

    python benchmarks/contention.py [--seconds 6] [--rounds 1] [--workloads cnn,mlp]
                                    [--situations alone,two,busy1,busy2] [--env KEY=VALUE]
                                    [--statistic mean|median]

Workloads, written as users write them, default threads:
- cnn: Keras `fit` of the MNIST CNN (conv 5x5x32, pool, conv 5x5x64, pool, dense 512,
  dropout, dense 10; SGD with momentum, sparse cross-entropy, accuracy), batch 64, on
  in-memory arrays; ms per step between consecutive `on_train_batch_end` calls;
- mlp: a raw-variable MLP loop (784-512-512-10 `tf.Variable`s, `tf.matmul`, a
  `tf.function` step with a GradientTape and Keras SGD's `apply_gradients`), batch 256.

Situations: alone; two copies of the same job at once; beside one and beside two busy
single-threaded processes (Python spinning loops the benchmark starts and stops). Every job
compiles and warms up first, says it is ready, and all jobs of a situation then time their
steps over the same `seconds` of wall time. The figure is the mean step (the window's time
over its steps: what an epoch takes, as Keras' progress bar reports it; `--statistic median`
gives the median step, which hides the steps a stall lengthens); for two copies, the mean of
both. The slowdown is contended / alone; bar: in every situation ndflow's
slowdown <= 1.1x TensorFlow's, on both workloads.

`--env KEY=VALUE` (repeatable) sets a variable for the ndflow jobs only (to compare
OMP_WAIT_POLICY, GOMP_SPINCOUNT or NDFLOW_FOLLOW_FREE_CORES settings).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))
import raw_mlp_loop  # noqa: E402 - the raw-variable MLP step, shared with the model suite
from side_by_side import TF_PYTHON  # noqa: E402

SITUATIONS = {"alone": (1, 0), "two": (2, 0), "busy1": (1, 1), "busy2": (1, 2)}
LABELS = {"alone": "alone", "two": "two copies at once", "busy1": "beside 1 busy process",
          "busy2": "beside 2 busy processes"}


# -- the worker: runs under ndflow or TensorFlow ----------------------------------------------

def _cnn_job(tf, seconds: float) -> list:
    rng = np.random.default_rng(0)
    x = rng.random((64 * 40, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, len(x)).astype(np.int64)
    layers = tf.keras.layers
    model = tf.keras.Sequential([
        tf.keras.Input((28, 28, 1)),
        layers.Conv2D(32, 5, padding="same", activation="relu"), layers.MaxPooling2D(2),
        layers.Conv2D(64, 5, padding="same", activation="relu"), layers.MaxPooling2D(2),
        layers.Flatten(), layers.Dense(512, activation="relu"), layers.Dropout(0.5),
        layers.Dense(10)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01, momentum=0.9),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x, y, batch_size=64, epochs=1, steps_per_epoch=5, verbose=0)   # compile, warm

    times = []

    class Clock(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            times.append(time.perf_counter())
            if times[-1] - times[0] > seconds:
                self.model.stop_training = True

    _ready()
    times.append(time.perf_counter())
    model.fit(x, y, batch_size=64, epochs=10_000, verbose=0, callbacks=[Clock()])
    return times


def _mlp_job(tf, seconds: float) -> list:
    step = raw_mlp_loop.mlp_step(tf, tf.keras.optimizers.SGD(0.01))
    rng = np.random.default_rng(0)
    x = tf.constant(rng.random((256, 784), dtype=np.float32))
    y = tf.constant(rng.integers(0, 10, 256).astype(np.int64))

    for _ in range(5):
        step(x, y).numpy()
    _ready()
    times = [time.perf_counter()]
    while times[-1] - times[0] < seconds:
        step(x, y).numpy()
        times.append(time.perf_counter())
    return times


def _ready() -> None:
    """Tells the parent this job is warm, then waits for its go (a line on stdin)."""
    print("READY", flush=True)
    sys.stdin.readline()


def worker(module: str, workload: str, seconds: float) -> None:
    import importlib
    tf = importlib.import_module(module)
    times = {"cnn": _cnn_job, "mlp": _mlp_job}[workload](tf, seconds)
    steps = np.diff(times) * 1e3
    print(json.dumps({"median_ms": float(np.median(steps)), "mean_ms": float(np.mean(steps)),
                      "steps": len(steps)}), flush=True)


# -- the parent ------------------------------------------------------------------------------

def _spinner() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def run_situation(python: str, module: str, workload: str, situation: str, seconds: float,
                  env: dict, statistic: str = "mean") -> float | None:
    """The mean (or median) ms/step (mean over the copies) of `workload` under `situation`."""
    copies, busy = SITUATIONS[situation]
    full_env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **env}
    spinners = [_spinner() for _ in range(busy)]
    jobs = []
    try:
        for _ in range(copies):
            jobs.append(subprocess.Popen(
                [python, os.path.abspath(__file__), "--worker", workload, "--module", module,
                 "--seconds", str(seconds)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, cwd="/tmp", env=full_env))
        for job in jobs:   # every job warm before any is timed
            line = job.stdout.readline()
            if line.strip() != "READY":
                raise RuntimeError(line + job.stderr.read()[-2000:])
        for job in jobs:
            job.stdin.write("go\n")
            job.stdin.flush()
        results = []
        for job in jobs:
            out, err = job.communicate(timeout=600)
            if job.returncode:
                raise RuntimeError(err[-2000:])
            results.append(json.loads(out.strip().splitlines()[-1])[f"{statistic}_ms"])
        return statistics.mean(results)
    except (RuntimeError, subprocess.SubprocessError, OSError) as e:
        print(f"{python} {workload} {situation} failed: {e}", file=sys.stderr)
        return None
    finally:
        for p in spinners + jobs:
            if p.poll() is None:
                p.kill()
                p.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--module", default="ndflow")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--workloads", default="cnn,mlp")
    ap.add_argument("--situations", default=",".join(SITUATIONS))
    ap.add_argument("--tf", default=TF_PYTHON)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--statistic", choices=("mean", "median"), default="mean")
    args = ap.parse_args()
    if args.worker:
        worker(args.module, args.worker, args.seconds)
        return

    from machine import cpu_line
    print(cpu_line())
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    env = dict(kv.split("=", 1) for kv in args.env)
    if env:
        print("ndflow jobs' environment:", " ".join(args.env))
    sides = [("ndflow", sys.executable, env)]
    if args.tf and os.path.exists(args.tf):
        sides.append(("TensorFlow", args.tf, {}))
    modules = {"ndflow": "ndflow", "TensorFlow": "tensorflow"}
    situations = args.situations.split(",")
    if "alone" not in situations:
        situations.insert(0, "alone")
    failed = False
    for workload in args.workloads.split(","):
        figures = {name: {s: [] for s in situations} for name, _, _ in sides}
        for _ in range(args.rounds):
            for situation in situations:
                for name, python, side_env in sides:
                    ms = run_situation(python, modules[name], workload, situation,
                                       args.seconds, side_env, args.statistic)
                    if ms is not None:
                        figures[name][situation].append(ms)
        print(f"\n{workload}: {args.statistic} ms/step (slowdown = contended / alone)")
        print(f"  {'situation':26s}" + "".join(f"{n:>22s}" for n, _, _ in sides)
              + ("   ndflow / TF slowdown (bar <= 1.10)" if len(sides) > 1 else ""))
        alone = {n: min(figures[n]["alone"] or [float("nan")]) for n, _, _ in sides}
        for situation in situations:
            row, slow = f"  {LABELS[situation]:26s}", {}
            for name, _, _ in sides:
                ms = min(figures[name][situation] or [float("nan")])
                slow[name] = ms / alone[name]
                row += f"{ms:12.1f} ({slow[name]:5.2f}x)  "
            if len(sides) > 1 and situation != "alone":
                ratio = slow["ndflow"] / slow["TensorFlow"]
                ok = ratio <= 1.10
                failed |= not ok
                row += f"   {ratio:5.2f} {'met' if ok else 'MISSED'}"
            print(row, flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

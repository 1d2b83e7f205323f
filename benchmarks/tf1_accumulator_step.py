"""TF1 synchronous gradient averaging through a ConditionalAccumulator (the pattern of TF1's
SyncReplicasOptimizer), plus the eager setdiff1d / sparse_matmul calls: ndflow vs TensorFlow.

    python benchmarks/tf1_accumulator_step.py [--size 262144] [--replicas 4] [--steps 200]
                                              [--tf PYTHON]

One step = `replicas` Session runs of apply_grad (a float32 gradient of `size` elements
fed from NumPy, at the current step) and one run of take_grad; the figure is ms per step
(best of 3 rounds of `steps` steps, after 10 warm-up steps). The same source runs in both
interpreters (`--worker MODULE`: `import MODULE as tf`), one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def _best_ms(fn, calls: int) -> float:
    fn()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e3


def worker(module: str, size: int, replicas: int, steps: int) -> dict:
    tf = __import__(module)
    v1 = tf.compat.v1
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(size).astype(np.float32) for _ in range(replicas)]
    with tf.Graph().as_default():
        acc = v1.ConditionalAccumulator(tf.float32, shape=[size])
        g = v1.placeholder(tf.float32, [size])
        local_step = v1.placeholder(tf.int64, [])
        apply = acc.apply_grad(g, local_step=local_step)
        take = acc.take_grad(replicas)
        with v1.Session() as sess:
            done = [0]   # the accumulator's global step: older gradients would be dropped

            def step():
                for grad in grads:
                    sess.run(apply, {g: grad, local_step: done[0]})
                sess.run(take)
                done[0] += 1
            for _ in range(10):
                step()
            step_ms = _best_ms(step, steps)
    x = tf.constant(rng.integers(0, 10000, 100000).astype(np.int64))
    y = tf.constant(rng.integers(0, 10000, 5000).astype(np.int64))
    a = tf.constant(rng.standard_normal((256, 256)).astype(np.float32))
    return {"step_ms": step_ms,
            "setdiff1d_ms": _best_ms(lambda: v1.setdiff1d(x, y).out.numpy(), 50),
            "sparse_matmul_ms": _best_ms(lambda: v1.sparse_matmul(a, a).numpy(), 200)}


def run_worker(python: str, module: str, args) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", module,
                          "--size", str(args.size), "--replicas", str(args.replicas),
                          "--steps", str(args.steps)],
                         capture_output=True, text=True, env=env, timeout=1800,
                         cwd=tempfile.gettempdir())
    if out.returncode != 0:
        print(f"{module} run failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=262144)
    ap.add_argument("--replicas", type=int, default=4)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.size, args.replicas, args.steps)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    ours = run_worker(sys.executable, "ndflow", args)
    theirs = run_worker(args.tf, "tensorflow", args) if os.path.exists(args.tf) else None
    if not ours:
        sys.exit("the ndflow run failed")
    for key, what in (("step_ms", f"accumulator step ({args.replicas} x apply_grad of "
                                  f"{args.size} floats + take_grad)"),
                      ("setdiff1d_ms", "setdiff1d (100000 vs 5000 int64)"),
                      ("sparse_matmul_ms", "sparse_matmul 256x256")):
        line = f"{what}: ndflow {ours[key]:.3f} ms"
        if theirs:
            line += f", TensorFlow {theirs[key]:.3f} ms, ratio {ours[key] / theirs[key]:.2f}x"
        print(line)


if __name__ == "__main__":
    main()

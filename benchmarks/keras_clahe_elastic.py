"""Keras 3's ContrastLimitedAdaptiveHistogramEqualization and RandomElasticTransform: ndflow vs
TensorFlow's Keras on the same images.

    python benchmarks/keras_clahe_elastic.py [--calls 10] [--rounds 2] [--tf PYTHON]

Figures (ms per eager layer call, median over `calls` after a warm-up):
- clahe: CLAHE (tile grid 8x8, clip limit 4) of a batch of 8 RGB 128x128 float images;
- elastic: RandomElasticTransform(seed=1) of a batch of 8 RGB 64x64 images in training mode.
The same source runs in both interpreters (`--worker MODULE`: `import MODULE as tf`), each
`rounds` times, alternating; a figure is the best of its rounds (the machine may be shared).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time

import numpy as np


def _median_ms(fn, n: int) -> float:
    fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e3


def worker(module: str, calls: int) -> dict:
    tf = importlib.import_module(module)
    keras = tf.keras
    rng = np.random.default_rng(0)
    big = tf.constant((255 * rng.random((8, 128, 128, 3)) ** 2).astype(np.float32))
    small = tf.constant((255 * rng.random((8, 64, 64, 3))).astype(np.float32))
    clahe = keras.layers.ContrastLimitedAdaptiveHistogramEqualization()
    elastic = keras.layers.RandomElasticTransform(seed=1)
    return {"clahe": _median_ms(lambda: np.asarray(clahe(big)), calls),
            "elastic": _median_ms(lambda: np.asarray(elastic(small, training=True)), calls)}


def run(python: str, module: str, calls: int) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    res = subprocess.run([python, os.path.abspath(__file__), "--worker", module, "--calls",
                          str(calls)], capture_output=True, text=True, env=env, timeout=1200)
    if res.returncode != 0:
        print(f"{module} run failed:\n{res.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.calls)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(run(sys.executable, "ndflow", args.calls))
        if os.path.exists(args.tf):
            theirs.append(run(args.tf, "tensorflow", args.calls))
    ours, theirs = [r for r in ours if r], [r for r in theirs if r]
    if not ours:
        sys.exit("the ndflow run failed")
    print(f"per eager call (best of {args.rounds})")
    for key in ours[0]:
        nd = min(r[key] for r in ours)
        line = f"  {key:8s} ndflow {nd:8.2f} ms"
        if theirs:
            tfv = min(r[key] for r in theirs)
            line += f"   TensorFlow {tfv:8.2f} ms   ratio {nd / tfv:5.2f}x"
        print(line)


if __name__ == "__main__":
    main()

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
import time

import numpy as np
from side_by_side import TF_PYTHON, alternate, print_ratios


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



def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=TF_PYTHON)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.calls)))
        return
    from machine import cpu_line  # noqa: PLC0415 - imports torch: the parent only

    print(cpu_line())
    ours, theirs = alternate(__file__, args.rounds, "--calls", args.calls, tf_python=args.tf)
    print(f"per eager call (best of {args.rounds})")
    print_ratios(ours, theirs, width=8)


if __name__ == "__main__":
    main()

"""tf.math.sobol_sample, tf.io.decode_proto / encode_proto and tf.signal.fftnd & co: ndflow
against TensorFlow, each in a subprocess. TF's CPU build has no FFTND kernel, so the N-D
transforms are timed against TF's fft2d / rfft2d / irfft2d over the same inner two dimensions.

    python benchmarks/sobol_proto_fftnd.py [--repeat 7] [--tf PYTHON]

Printed: the CPU line, then per case the best-of-`repeat` milliseconds of one eager call
(values fetched with .numpy()) in ndflow and TensorFlow, and ndflow's time over TF's.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory
from side_by_side import run_json  # noqa: E402 - benchmarks/ is the script's directory

_PROGRAM = '''
import json, sys, time
import numpy as np
import {module} as tf

repeat = int(sys.argv[1])
nd = {module!r} == "ndflow"
ex = tf.train.Example(features=tf.train.Features(feature={{
    "a": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(20)))),
    "b": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5] * 10))}}))
int64_list = ex.features.feature["a"].int64_list.SerializeToString()
batch = tf.constant([int64_list] * 2000)
sizes, values = tf.io.decode_proto(batch, "tensorflow.Int64List", ["value"], [tf.int64])
z = tf.complex(tf.random.uniform([64, 128, 128]), tf.random.uniform([64, 128, 128]))
x = tf.random.uniform([64, 128, 128])
h = tf.signal.rfft2d(x)
CASES = {{
    "sobol_sample(10, 100000)": lambda: tf.math.sobol_sample(10, 100000),
    "sobol_sample(1000, 1000, skip=1000)": lambda: tf.math.sobol_sample(1000, 1000, 1000),
    "decode_proto 2000 x Int64List[20]": lambda: tf.io.decode_proto(
        batch, "tensorflow.Int64List", ["value"], [tf.int64])[1][0],
    "encode_proto 2000 x Int64List[20]": lambda: tf.io.encode_proto(
        sizes, values, ["value"], "tensorflow.Int64List"),
    "fftnd [64,128,128] axes (1,2) / TF fft2d": (
        (lambda: tf.signal.fftnd(z, fft_length=[128, 128], axes=[1, 2])) if nd
        else (lambda: tf.signal.fft2d(z))),
    "rfftnd [64,128,128] axes (1,2) / TF rfft2d": (
        (lambda: tf.signal.rfftnd(x, fft_length=[128, 128], axes=[1, 2])) if nd
        else (lambda: tf.signal.rfft2d(x))),
    "irfftnd [64,128,65] axes (1,2) / TF irfft2d": (
        (lambda: tf.signal.irfftnd(h, fft_length=[128, 128], axes=[1, 2])) if nd
        else (lambda: tf.signal.irfft2d(h))),
}}


def best_ms(fn):
    fn().numpy()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn().numpy()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


print(json.dumps({{name: best_ms(fn) for name, fn in CASES.items()}}))
'''


def _run(python: str, module: str, repeat: int) -> dict | None:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    return run_json([python, "-c", _PROGRAM.format(module=module), str(repeat)], module,
                    env=env, timeout=1200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--tf", default="/work/tfvenv/bin/python")
    args = parser.parse_args()
    print(cpu_line())
    ours = _run(sys.executable, "ndflow", args.repeat)
    theirs = _run(args.tf, "tensorflow", args.repeat) if os.path.exists(args.tf) else None
    if ours is None:
        return
    print(f"best of {args.repeat}")
    print(f"{'case':46s} {'ndflow ms':>10s} {'TF ms':>10s} {'ratio':>7s}")
    for name, ms in ours.items():
        tf_ms = theirs.get(name) if theirs else None
        ratio = f"{ms / tf_ms:7.2f}" if tf_ms else "      -"
        tf_text = f"{tf_ms:10.2f}" if tf_ms else "         -"
        print(f"{name:46s} {ms:10.2f} {tf_text} {ratio}")


if __name__ == "__main__":
    main()

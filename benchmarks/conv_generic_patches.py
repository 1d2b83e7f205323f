"""tf.conv (Conv), tf.conv2d_backprop_input_v2 / filter_v2, tf.extract_volume_patches (and its
gradient) and tf.ragged_fill_empty_rows (and its gradient op) at representative sizes, eager,
results fetched: ndflow against TensorFlow 2.21 (when its interpreter is given), in
alternating rounds so that both see the same load on a shared machine.

    python benchmarks/conv_generic_patches.py [--tf /work/tfvenv/bin/python] [--rounds 5]

Where TF's eager CPU kernels refuse a call (Conv with groups or CHANNELS_FIRST) TF runs it
under XLA (`jit_compile=True`, compile excluded); TF has no kernel for the V2 backprop ops, so
its V1 ops (Conv2DBackpropInput / Filter, the sizes a constant) are timed for them. Prints the
milliseconds per call (best of the rounds, each the best of CALLS calls) and ndflow/TF.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory

import ndflow as tf  # noqa: E402

CALLS = 3

# The cases, as source both interpreters run with their `tf`: name -> a call.
CASES_SRC = r'''
import numpy as np


def make(tf):
    tensorflow = tf.__name__.startswith("tensorflow")
    rng = np.random.default_rng(0)

    def f32(*shape):
        return tf.constant(rng.standard_normal(shape).astype(np.float32))

    def xla(fn, *args):
        if not tensorflow:
            return lambda: fn(*args)
        compiled = tf.function(fn, jit_compile=True)
        compiled(*args)
        return lambda: compiled(*args)

    x, w = f32(8, 32, 32, 64), f32(3, 3, 64, 64)
    xb = tf.reshape(x, [2, 4, 32, 32, 64])
    x3, w3 = f32(2, 16, 32, 32, 16), f32(3, 3, 3, 16, 32)
    xg, wg = f32(8, 32, 32, 64), f32(3, 3, 16, 64)
    xc = tf.transpose(x, [0, 3, 1, 2])
    dy = f32(8, 32, 32, 64)
    s4, s5 = [1, 1, 1, 1], [1, 1, 1, 1, 1]
    vol = f32(4, 16, 32, 32, 8)
    vol_small = f32(2, 8, 16, 16, 4)
    n, rows = 1_000_000, 2_000_000
    rowids = tf.constant(np.sort(rng.integers(0, rows, n)), tf.int64)
    shuffled = tf.constant(rng.integers(0, rows, n), tf.int64)
    values = f32(n)
    nrows, default = tf.constant(rows, tf.int64), tf.constant(0.0)
    filled = tf.ragged_fill_empty_rows(rowids, values, nrows, default)
    grad_values = tf.ones_like(filled.output_values)

    def bi():
        if tensorflow:
            return tf.raw_ops.Conv2DBackpropInput(input_sizes=[8, 32, 32, 64], filter=w,
                                                  out_backprop=dy, strides=s4, padding="SAME")
        return tf.conv2d_backprop_input_v2(x, w, dy, s4, "SAME")

    def bf():
        if tensorflow:
            return tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[3, 3, 64, 64],
                                                   out_backprop=dy, strides=s4, padding="SAME")
        return tf.conv2d_backprop_filter_v2(x, w, dy, s4, "SAME")

    def patches_grad():
        with tf.GradientTape() as tape:
            tape.watch(vol_small)
            y = tf.extract_volume_patches(vol_small, [1, 2, 2, 2, 1], s5, "SAME")
        return tape.gradient(y, vol_small)

    return {
        "conv 2d 8x32x32x64 3x3x64 SAME": lambda: tf.conv(x, w, s4, "SAME"),
        "conv 2d stride 2 VALID": lambda: tf.conv(x, w, [1, 2, 2, 1], "VALID"),
        "conv 2d batch_dims=2": lambda: tf.conv(xb, w, s4, "SAME", batch_dims=2),
        "conv 3d 2x16x32x32x16 3x3x3x32": lambda: tf.conv(x3, w3, s5, "SAME"),
        "conv 2d groups=4 (TF: XLA)": xla(lambda a, b: tf.conv(a, b, s4, "SAME", groups=4),
                                          xg, wg),
        "conv 2d CHANNELS_FIRST (TF: XLA)": xla(
            lambda a, b: tf.conv(a, b, s4, "SAME", data_format="CHANNELS_FIRST"), xc, w),
        "backprop_input_v2 (TF: V1)": bi,
        "backprop_filter_v2 (TF: V1)": bf,
        "volume_patches 4x16x32x32x8 2x3x3": lambda: tf.extract_volume_patches(
            vol, [1, 2, 3, 3, 1], s5, "SAME"),
        "volume_patches strided VALID": lambda: tf.extract_volume_patches(
            vol, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"),
        "volume_patches gradient": patches_grad,
        "ragged_fill 1M values, 2M rows": lambda: tf.ragged_fill_empty_rows(
            rowids, values, nrows, default),
        "ragged_fill unsorted": lambda: tf.ragged_fill_empty_rows(
            shuffled, values, nrows, default),
        "ragged_fill_grad": lambda: tf.ragged_fill_empty_rows_grad(
            filled.reverse_index_map, grad_values),
    }
'''

# TensorFlow times one case per line read from stdin and answers with its milliseconds.
_TF_WORKER = r"""
import sys, time
import tensorflow as tf
CALLS = int(sys.argv[1])
scope = {}
exec(sys.stdin.readline().encode().decode("unicode_escape"), scope)
cases = scope["make"](tf)
print("ready", flush=True)


def fetch(out):
    for t in tf.nest.flatten(out):
        t.numpy()


for line in sys.stdin:
    fn = cases[line.rstrip("\n")]
    fetch(fn())
    best = float("inf")
    for _ in range(CALLS):
        t = time.perf_counter()
        fetch(fn())
        best = min(best, time.perf_counter() - t)
    print(best * 1e3, flush=True)
"""


def _fetch(out):
    for t in tf.nest.flatten(out):
        t.numpy()


def time_call(fn) -> float:
    _fetch(fn())
    best = float("inf")
    for _ in range(CALLS):
        t = time.perf_counter()
        _fetch(fn())
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tf", default=None, help="TensorFlow's Python interpreter")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default=None, help="run the cases whose name contains it")
    args = parser.parse_args()
    print(cpu_line())
    scope: dict = {}
    exec(CASES_SRC, scope)
    cases = scope["make"](tf)
    names = [n for n in cases if args.only is None or args.only in n]
    worker = None
    if args.tf and os.path.exists(args.tf):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        worker = subprocess.Popen([args.tf, "-c", _TF_WORKER, str(CALLS)], cwd="/tmp",
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, env=env)
        worker.stdin.write(CASES_SRC.encode("unicode_escape").decode() + "\n")
        worker.stdin.flush()
        while worker.stdout.readline().strip() != "ready":
            pass
    best: dict = {}
    for _ in range(args.rounds):
        for name in names:
            ms = time_call(cases[name])
            best[("ndflow", name)] = min(best.get(("ndflow", name), float("inf")), ms)
            if worker is not None:
                worker.stdin.write(name + "\n")
                worker.stdin.flush()
                ms = float(worker.stdout.readline())
                best[("TF", name)] = min(best.get(("TF", name), float("inf")), ms)
    if worker is not None:
        worker.stdin.close()
        worker.wait()
    print(f"eager, ms per call (best of {args.rounds} rounds x {CALLS} calls)")
    width = max(len(n) for n in names) + 2
    print(f"{'':{width}}{'ndflow':>10}" + (f"{'TF 2.21':>10}{'ndflow/TF':>11}" if worker else ""))
    for name in names:
        row = f"{name:{width}}{best[('ndflow', name)]:10.2f}"
        if worker is not None:
            row += (f"{best[('TF', name)]:10.2f}"
                    f"{best[('ndflow', name)] / best[('TF', name)]:11.2f}")
        print(row)
    print(json.dumps({f"{who}/{name}": round(v, 3) for (who, name), v in best.items()}))


if __name__ == "__main__":
    main()

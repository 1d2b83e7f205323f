"""Gradient of a long `tf.while_loop`: ndflow vs TensorFlow (in a subprocess).

    python benchmarks/while_grad.py [--steps 1000] [--repeat 3] [--tf /work/tfvenv/bin/python]

The loop is `x = x * w + sin(x)` on a [64] float32 tensor for `steps` iterations; a
`tf.function` takes `tape.gradient(reduce_sum(x), [x0, w])`. Printed: milliseconds per call
(best of `repeat`, after a first call that traces and compiles). The While gradient's cost
grows with the steps: linearly when the forward loop stacks its states (TensorList
accumulators), quadratically when each backward step recomputes the forward prefix.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory
from side_by_side import run_json  # noqa: E402 - benchmarks/ is the script's directory

import ndflow as tf  # noqa: E402

_TF_SCRIPT = r"""
import json, sys, time
import numpy as np
import tensorflow as tf
steps, repeat = int(sys.argv[1]), int(sys.argv[2])
x0 = tf.constant(np.linspace(0.1, 1.0, 64, dtype=np.float32))
w = tf.constant(0.5)

@tf.function
def grad(x0, w):
    with tf.GradientTape() as tape:
        tape.watch([x0, w])
        _, x = tf.while_loop(lambda i, x: i < steps, lambda i, x: (i + 1, x * w + tf.sin(x)),
                             (tf.constant(0), x0))
        loss = tf.reduce_sum(x)
    return tape.gradient(loss, [x0, w])

t = time.perf_counter(); r = grad(x0, w); first = time.perf_counter() - t
best = float("inf")
for _ in range(repeat):
    t = time.perf_counter(); r = grad(x0, w); best = min(best, time.perf_counter() - t)
print(json.dumps({"first_ms": first * 1e3, "ms": best * 1e3,
                  "dw": float(r[1].numpy()), "dx0_sum": float(np.sum(r[0].numpy()))}))
"""


def measure_ndflow(steps: int, repeat: int) -> dict:
    x0 = tf.constant(np.linspace(0.1, 1.0, 64, dtype=np.float32))
    w = tf.constant(0.5)

    @tf.function
    def grad(x0, w):
        with tf.GradientTape() as tape:
            tape.watch([x0, w])
            _, x = tf.while_loop(lambda i, x: i < steps,
                                 lambda i, x: (i + 1, x * w + tf.sin(x)), (tf.constant(0), x0))
            loss = tf.reduce_sum(x)
        return tape.gradient(loss, [x0, w])

    t = time.perf_counter()
    r = grad(x0, w)
    first = time.perf_counter() - t
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        r = grad(x0, w)
        best = min(best, time.perf_counter() - t)
    return {"first_ms": first * 1e3, "ms": best * 1e3, "dw": float(r[1].numpy()),
            "dx0_sum": float(np.sum(r[0].numpy()))}


def measure_tf(python: str, steps: int, repeat: int) -> dict | None:
    if not python or not os.path.exists(python):
        return None
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
               TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1")
    return run_json([python, "-c", _TF_SCRIPT, str(steps), str(repeat)],
                    "TensorFlow", env=env, timeout=1200)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--repeat", type=int, default=3, help="timed calls (best is printed)")
    p.add_argument("--tf", default="/work/tfvenv/bin/python",
                   help="TensorFlow interpreter ('' to skip)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    print(cpu_line())
    print(f"{'steps':>6}{'ndflow ms':>11}{'(1st call)':>12}{'tf ms':>9}{'(1st call)':>12}"
          f"{'nd/tf':>7}  dw ndflow / tf")
    for steps in args.steps:
        nd = measure_ndflow(steps, args.repeat)
        tfr = measure_tf(args.tf, steps, args.repeat)
        line = f"{steps:>6}{nd['ms']:>11.1f}{nd['first_ms']:>12.1f}"
        if tfr:
            line += (f"{tfr['ms']:>9.1f}{tfr['first_ms']:>12.1f}{nd['ms'] / tfr['ms']:>7.2f}"
                     f"  {nd['dw']:.5g} / {tfr['dw']:.5g}")
        print(line, flush=True)


if __name__ == "__main__":
    main()

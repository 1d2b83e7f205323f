"""tf.experimental.numpy: ndflow vs TensorFlow 2.21, per call, with NumPy behavior enabled
(as the TF guide runs it).

    python benchmarks/tf_numpy.py [--tf /work/tfvenv/bin/python] [--n 2000]

TF-NumPy is a Python layer over the ops, so what it costs is mostly dispatch: small cases
(8x8) measure that, the 512x512 cases and the guide's model step (forward and gradients of
a 32-64-2 MLP on a batch of 512) measure kernels too. TensorFlow runs the same script in a
subprocess; the ratio is ndflow's time over TF's (below 1: ndflow faster).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

_CASES = r"""
import numpy as np
tnp.experimental_enable_numpy_behavior()
tnp.random.seed(0)
s = tnp.asarray(np.arange(64.0).reshape(8, 8))
si = tnp.asarray(np.arange(64, dtype=np.int32).reshape(8, 8))
sf = tnp.asarray(np.ones((8, 8), np.float32))
big = tnp.random.randn(512, 512).astype(tnp.float32)
big_i = tnp.asarray(np.arange(512 * 512, dtype=np.int32).reshape(512, 512))
rows = tnp.asarray(np.arange(0, 512, 2))
w1 = tnp.random.randn(32, 64).astype(tnp.float32)
b1 = tnp.random.randn(64).astype(tnp.float32)
w2 = tnp.random.randn(64, 2).astype(tnp.float32)
inputs = tnp.random.randn(512, 32).astype(tnp.float32)
labels = tnp.random.randn(512, 2).astype(tnp.float32)

def step():
    with tf.GradientTape() as tape:
        tape.watch((w1, b1, w2))
        y = tnp.maximum(tnp.matmul(inputs, w1) + b1, 0)
        loss = tnp.sum(tnp.square(tnp.matmul(y, w2) - labels))
    return tape.gradient(loss, (w1, b1, w2))

CASES = {
    "add 8x8": lambda: tnp.add(s, s),
    "add int32+float32 8x8 (promotes)": lambda: tnp.add(si, sf),
    "operator x + 1.5 (int32)": lambda: si + 1.5,
    "sin of int32 8x8": lambda: tnp.sin(si),
    "sum 8x8": lambda: tnp.sum(s),
    "asarray(list)": lambda: tnp.asarray([[1.0, 2.0], [3.0, 4.0]]),
    "x[[rows]] 8x8": lambda: s[[1, 3, 5]],
    "where 8x8": lambda: tnp.where(s > 3, s, 0),
    "matmul 512x512": lambda: tnp.matmul(big, big),
    "mean axis=0 512x512": lambda: tnp.mean(big, axis=0),
    "cumsum int32 512x512": lambda: tnp.cumsum(big_i, axis=1),
    "x[rows, ::2] 512x512": lambda: big[rows, ::2],
    "guide model step (batch 512)": step,
}
"""

_TF_SCRIPT = r"""
import json, sys, timeit
import tensorflow as tf
import tensorflow.experimental.numpy as tnp
""" + _CASES + r"""
n = int(sys.argv[1])
out = {}
for k, f in CASES.items():
    f()
    number = max(1, n // 100) if ("512" in k) else n
    out[k] = min(timeit.repeat(f, number=number, repeat=5)) / number * 1e6
print(json.dumps(out))
"""


def measure_ndflow(n: int) -> dict:
    import ndflow as tf  # noqa: F401 - the cases' namespace
    import ndflow.experimental.numpy as tnp  # noqa: F401
    env = {"tf": tf, "tnp": tnp}
    exec(_CASES, env)
    out = {}
    for k, f in env["CASES"].items():
        f()
        number = max(1, n // 100) if "512" in k else n
        out[k] = min(timeit.repeat(f, number=number, repeat=5)) / number * 1e6
    return out


def main() -> None:
    from machine import cpu_line
    parser = argparse.ArgumentParser()
    parser.add_argument("--tf", default="/work/tfvenv/bin/python")
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    print(cpu_line())
    ours = measure_ndflow(args.n)
    theirs = None
    if os.path.exists(args.tf):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        run = subprocess.run([args.tf, "-c", _TF_SCRIPT, str(args.n)], capture_output=True,
                             text=True, env=env, cwd="/tmp")
        theirs = json.loads(run.stdout.strip().splitlines()[-1]) if run.returncode == 0 \
            else None
        if theirs is None:
            print("TensorFlow run failed:", run.stderr[-2000:])
    print(f"{'case':36s} {'ndflow us':>11s} {'TF us':>11s} {'ratio':>7s}")
    for k, v in ours.items():
        t = theirs.get(k) if theirs else None
        ratio = f"{v / t:7.2f}" if t else "      -"
        print(f"{k:36s} {v:11.1f} {t if t else float('nan'):11.1f} {ratio}")


if __name__ == "__main__":
    main()

"""Per-op overhead of small eager ops: ndflow vs PyTorch eager (and TensorFlow eager).

    python benchmarks/eager_overhead.py [--tf /work/tfvenv/bin/python] [--n 20000]

Each case runs one op on 2x2 float32 tensors in a loop and prints microseconds per op;
ratios are against `torch.add` / `torch.mm` ... measured in the same process. TensorFlow
(when its interpreter is given and exists) runs the same loops in a subprocess.
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory
from side_by_side import run_json  # noqa: E402 - benchmarks/ is the script's directory

import ndflow as tf  # noqa: E402
from ndflow.autodiff.tape import GradientTape  # noqa: E402

CASES = ("add", "matmul", "add_python_scalar", "add_under_tape")

_TF_SCRIPT = r"""
import json, sys, timeit
import numpy as np
import tensorflow as tf
n = int(sys.argv[1])
x = tf.constant(np.ones((2, 2), np.float32)); y = tf.constant(np.ones((2, 2), np.float32))
cases = {
    "add": lambda: tf.add(x, y),
    "matmul": lambda: tf.matmul(x, y),
    "add_python_scalar": lambda: tf.add(x, 1.0),
}
out = {}
for k, f in cases.items():
    f()
    out[k] = min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6
with tf.GradientTape() as tape:
    tape.watch(x)
    f = lambda: tf.add(x, y)
    f()
    out["add_under_tape"] = min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6
print(json.dumps(out))
"""


def _best(fn, n: int) -> float:
    fn()
    return min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6


def measure_ndflow(n: int) -> dict:
    x = tf.constant(np.ones((2, 2), np.float32))
    y = tf.constant(np.ones((2, 2), np.float32))
    out = {
        "add": _best(lambda: tf.add(x, y), n),
        "matmul": _best(lambda: tf.matmul(x, y), n),
        "add_python_scalar": _best(lambda: tf.add(x, 1.0), n),
    }
    with GradientTape() as tape:
        tape.watch(x)
        out["add_under_tape"] = _best(lambda: tf.add(x, y), n)
    return out


def measure_torch(n: int) -> dict:
    x = torch.ones(2, 2)
    y = torch.ones(2, 2)
    out = {
        "add": _best(lambda: torch.add(x, y), n),
        "matmul": _best(lambda: torch.mm(x, y), n),
        "add_python_scalar": _best(lambda: torch.add(x, 1.0), n),
    }
    xg = x.clone().requires_grad_(True)
    out["add_under_tape"] = _best(lambda: torch.add(xg, y), n)
    return out


def measure_tf(python: str, n: int) -> dict | None:
    if not python or not os.path.exists(python):
        return None
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    return run_json([python, "-c", _TF_SCRIPT, str(n)], "TensorFlow", env=env, timeout=600)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=20000, help="ops per timing loop")
    p.add_argument("--tf", default="/work/tfvenv/bin/python",
                   help="TensorFlow interpreter ('' to skip)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    nd = measure_ndflow(args.n)
    th = measure_torch(args.n)
    tfr = measure_tf(args.tf, args.n)
    head = f"{'case':<20}{'ndflow us':>11}{'torch us':>10}{'nd/torch':>10}"
    if tfr:
        head += f"{'tf us':>9}{'nd/tf':>8}"
    print(cpu_line())
    print(head)
    for c in CASES:
        line = f"{c:<20}{nd[c]:>11.2f}{th[c]:>10.2f}{nd[c] / th[c]:>10.1f}"
        if tfr:
            line += f"{tfr[c]:>9.2f}{nd[c] / tfr[c]:>8.2f}"
        print(line)


if __name__ == "__main__":
    main()

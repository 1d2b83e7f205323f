"""What a custom op costs over a built-in one: a Relu registered with
`ndflow.custom_op.register_op` (torch.relu as its kernel, outputs checked on every call) vs
ndflow's own Relu, PyTorch's torch.relu, and TensorFlow's tf.nn.relu.

    python benchmarks/custom_op_overhead.py [--tf /work/tfvenv/bin/python] [--n 20000]

Cases, microseconds per op (the best of 5 repeats): one eager op on a 2x2 tensor (overhead)
and on a 512x512 one; a tf.function chaining 20 of them on a 64x64 tensor (per op). Ratios:
the custom op against ndflow's built-in Relu, measured in the same process. TensorFlow (when
its interpreter exists) runs its Relu cases in a subprocess.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import timeit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory

import ndflow as tf  # noqa: E402
from ndflow import custom_op  # noqa: E402

CHAIN = 20
SIZES = {"eager_2x2": (2, 2), "eager_512x512": (512, 512)}

_TF_SCRIPT = r"""
import json, sys, timeit
import numpy as np
import tensorflow as tf
n = int(sys.argv[1])
out = {}
for case, shape in {"eager_2x2": (2, 2), "eager_512x512": (512, 512)}.items():
    x = tf.constant(np.random.rand(*shape).astype(np.float32) - 0.5)
    f = lambda: tf.nn.relu(x)
    f()
    m = max(n // (1 if shape[0] < 64 else 50), 20)
    out[case] = min(timeit.repeat(f, number=m, repeat=5)) / m * 1e6
x = tf.constant(np.random.rand(64, 64).astype(np.float32) - 0.5)
@tf.function
def chain(t):
    for _ in range(20):
        t = tf.nn.relu(t)
    return t
chain(x)
m = max(n // 20, 20)
out["function_chain"] = min(timeit.repeat(lambda: chain(x), number=m, repeat=5)) / m / 20 * 1e6
print(json.dumps(out))
"""


def _custom_relu():
    return custom_op.register_op(
        'REGISTER_OP("BenchCustomRelu").Input("features: T").Output("activations: T")'
        '.Attr("T: {half, float, double}").SetShapeFn(shape_inference::UnchangedShape)',
        torch.relu)


def _time(fn, n: int) -> float:
    fn()
    return min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6


def measure(n: int) -> dict:
    custom = _custom_relu()
    out: dict = {}
    for case, shape in SIZES.items():
        m = max(n // (1 if shape[0] < 64 else 50), 20)
        x = tf.constant(np.random.rand(*shape).astype(np.float32) - 0.5)
        xt = x.value
        out[case] = {"ndflow built-in Relu": _time(lambda x=x: tf.nn.relu(x), m),
                     "ndflow custom op": _time(lambda x=x: custom(x), m),
                     "torch.relu": _time(lambda xt=xt: torch.relu(xt), m)}
    x = tf.constant(np.random.rand(64, 64).astype(np.float32) - 0.5)

    def chain_of(op):
        @tf.function
        def chain(t):
            for _ in range(CHAIN):
                t = op(t)
            return t
        return chain
    builtin, mine = chain_of(tf.nn.relu), chain_of(custom)
    m = max(n // CHAIN, 20)
    out["function_chain"] = {"ndflow built-in Relu": _time(lambda: builtin(x), m) / CHAIN,
                             "ndflow custom op": _time(lambda: mine(x), m) / CHAIN}
    return out


def tensorflow(python: str, n: int) -> dict:
    if not python or not os.path.exists(python):
        return {}
    try:
        res = subprocess.run([python, "-c", _TF_SCRIPT, str(n)], capture_output=True,
                             text=True, timeout=600, cwd="/tmp")
        return json.loads(res.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError) as e:
        print(f"TensorFlow run failed: {e}", file=sys.stderr)
        return {}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--tf", default="/work/tfvenv/bin/python")
    args = p.parse_args()
    ours = measure(args.n)
    theirs = tensorflow(args.tf, args.n)
    print(cpu_line())
    for case, row in ours.items():
        if case in theirs:
            row["TensorFlow tf.nn.relu"] = theirs[case]
        base = row["ndflow built-in Relu"]
        cells = ", ".join(f"{k} {v:.2f} us ({v / base:.2f}x)" for k, v in row.items())
        print(f"{case:15s} {cells}")


if __name__ == "__main__":
    main()

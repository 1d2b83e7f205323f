"""tf.nn.fractional_max_pool / fractional_avg_pool, forward + backward (a GradientTape over the
pool, in a tf.function), ndflow against TensorFlow, each in a subprocess.

    python benchmarks/fractional_pool.py [--shape 32 64 64 16] [--ratio 1.414]
                                         [--repeat 20] [--threads N] [--tf PYTHON]

Input: float32 [batch, height, width, channels]; pooling ratio [1, r, r, 1], seed 1 (so both
draw the same regions). Printed: best-of-`repeat` milliseconds of one forward + backward
step (pool, sum of squares, input gradient) for max and average pooling, disjoint and
overlapping regions, and ndflow's time over TensorFlow's.
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

shape = [int(v) for v in sys.argv[1].split(",")]
ratio, repeat = float(sys.argv[2]), int(sys.argv[3])
x = tf.constant(np.random.RandomState(0).rand(*shape).astype(np.float32))


def step_fn(pool, overlapping):
    @tf.function
    def step(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            out, _, _ = pool(v, [1.0, ratio, ratio, 1.0], overlapping=overlapping, seed=1)
            loss = tf.reduce_sum(out * out)
        return tape.gradient(loss, v)
    return step


def best_ms(fn):
    fn(x).numpy()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(x).numpy()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


res = {{}}
for kind, pool in (("max", tf.nn.fractional_max_pool), ("avg", tf.nn.fractional_avg_pool)):
    for overlapping in (False, True):
        res[f"{{kind}}_{{'overlap' if overlapping else 'disjoint'}}"] = best_ms(
            step_fn(pool, overlapping))
print(json.dumps(res))
'''


def _run(python: str, module: str, args) -> dict | None:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    if args.threads:
        env.update(TF_NUM_INTRAOP_THREADS=str(args.threads), TF_NUM_INTEROP_THREADS="1",
                   OMP_NUM_THREADS=str(args.threads))
    return run_json([python, "-c", _PROGRAM.format(module=module),
                     ",".join(map(str, args.shape)), str(args.ratio), str(args.repeat)],
                    module, env=env, timeout=1200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, default=[32, 64, 64, 16])
    parser.add_argument("--ratio", type=float, default=1.414)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0,
                        help="intra-op threads for both (default: each one's own)")
    parser.add_argument("--tf", default="/work/tfvenv/bin/python")
    args = parser.parse_args()
    print(cpu_line())
    print(f"float32 {args.shape}, pooling ratio [1, {args.ratio}, {args.ratio}, 1], forward + "
          f"backward in a tf.function, best of {args.repeat}")
    ours = _run(sys.executable, "ndflow", args)
    theirs = _run(args.tf, "tensorflow", args) if os.path.exists(args.tf) else None
    for case in ("max_disjoint", "max_overlap", "avg_disjoint", "avg_overlap"):
        row = [f"{case:13s}"]
        if ours:
            row.append(f"ndflow {ours[case]:8.2f} ms")
        if theirs:
            row.append(f"TensorFlow {theirs[case]:8.2f} ms")
        if ours and theirs:
            row.append(f"(ndflow/TF {ours[case] / theirs[case]:.2f}x)")
        print("  ".join(row))


if __name__ == "__main__":
    main()

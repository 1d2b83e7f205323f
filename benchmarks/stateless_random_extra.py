"""tf.random.stateless_binomial, stateless_parameterized_truncated_normal and
experimental.stateless_shuffle: ndflow against TensorFlow, each in a subprocess (both draw the
same values for the same seed).

    python benchmarks/stateless_random_extra.py [--n 1000000] [--repeat 7] [--threads N]
                                                [--tf PYTHON]

Printed: the CPU line (model and vector features), then per case the best-of-`repeat`
milliseconds of one eager call (values fetched with .numpy()) in ndflow and TensorFlow, and
ndflow's time over TensorFlow's. Both use their default intra-op threads unless --threads sets
TF_NUM_INTRAOP_THREADS (and OMP_NUM_THREADS) for both.
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
import {module} as tf

n, repeat = int(sys.argv[1]), int(sys.argv[2])
B = tf.random.stateless_binomial
P = tf.random.stateless_parameterized_truncated_normal
CASES = {{
    "binomial count 10, p 0.5 (inversion)": lambda: B([n], [1, 2], 10.0, 0.5),
    "binomial count 1000, p 0.5 (BTRS)": lambda: B([n], [1, 2], 1000.0, 0.5),
    "binomial count 1000, p 0.9 (BTRS)": lambda: B([n], [1, 2], 1000.0, 0.9),
    "truncated normal [-2, 2] (normal proposals)": lambda: P([n], [1, 2]),
    "truncated normal [-0.5, 0.5] (uniform proposals)": lambda: P([n], [1, 2], 0.0, 1.0,
                                                                   -0.5, 0.5),
    "truncated normal [3, inf) (exponential proposals)": lambda: P([n], [1, 2], 0.0, 1.0,
                                                                    3.0, float("inf")),
    "truncated normal float64 [-2, 2]": lambda: P([n], [1, 2], *(
        tf.constant(v, tf.float64) for v in (0.0, 1.0, -2.0, 2.0))),
    "stateless_shuffle of range(n)": lambda: tf.random.experimental.stateless_shuffle(
        tf.range(n), [1, 2]),
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


def _run(python: str, module: str, args) -> dict | None:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    if args.threads:
        env.update(TF_NUM_INTRAOP_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
    return run_json([python, "-c", _PROGRAM.format(module=module), str(args.n),
                     str(args.repeat)], module, env=env, timeout=1200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--tf", default="/work/tfvenv/bin/python")
    args = parser.parse_args()
    print(cpu_line())
    ours = _run(sys.executable, "ndflow", args)
    theirs = _run(args.tf, "tensorflow", args) if os.path.exists(args.tf) else None
    if ours is None:
        return
    print(f"{args.n} samples, best of {args.repeat}")
    print(f"{'case':52s} {'ndflow ms':>10s} {'TF ms':>10s} {'ratio':>7s}")
    for name, ms in ours.items():
        tf_ms = theirs.get(name) if theirs else None
        ratio = f"{ms / tf_ms:7.2f}" if tf_ms else "      -"
        tf_text = f"{tf_ms:10.1f}" if tf_ms else "         -"
        print(f"{name:52s} {ms:10.1f} {tf_text} {ratio}")


if __name__ == "__main__":
    main()

"""An AutoGraph'd loop: Python `for`/`if` on tensors inside tf.function, ndflow vs TensorFlow
(in a subprocess running the same source).

    python benchmarks/autograph_loop.py [--steps 1000] [--repeat 5] [--tf /work/tfvenv/bin/python]

The function runs `for i in tf.range(n): if x[0] > 10: x = x * 0.5 else: x = x * 1.1 + 0.01`
on a [64] float32 tensor: AutoGraph turns it into one While op whose body holds an If.
Printed: the first call (conversion + tracing + compiling + one run) and the steady-state
milliseconds per call (best of `repeat`), i.e. per `steps` loop iterations.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory

# AutoGraph reads the function's source, so the program is written to a file and run.
_PROGRAM = '''
import json, sys, time
import numpy as np
import {module} as tf

steps, repeat = int(sys.argv[1]), int(sys.argv[2])


@tf.function
def loop(x, n):
    for i in tf.range(n):
        if x[0] > 10.0:
            x = x * 0.5
        else:
            x = x * 1.1 + 0.01
    return x


x = tf.constant(np.ones(64, np.float32))
n = tf.constant(steps)
t = time.perf_counter()
r = loop(x, n).numpy()
first = time.perf_counter() - t
best = float("inf")
for _ in range(repeat):
    t = time.perf_counter()
    r = loop(x, n).numpy()
    best = min(best, time.perf_counter() - t)
print(json.dumps({{"first_ms": first * 1e3, "ms": best * 1e3, "x0": float(r[0])}}))
'''


def _run(python: str, module: str, steps: int, repeat: int) -> dict | None:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(_PROGRAM.format(module=module))
    try:
        out = subprocess.run([python, f.name, str(steps), str(repeat)], capture_output=True,
                             text=True, timeout=600)
    finally:
        os.unlink(f.name)
    if out.returncode != 0:
        print(f"{module} run failed:", out.stderr[-500:])
        return None
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tf", default="/work/tfvenv/bin/python")
    args = parser.parse_args()
    print(cpu_line())
    ours = _run(sys.executable, "ndflow", args.steps, args.repeat)
    theirs = _run(args.tf, "tensorflow", args.steps, args.repeat) \
        if os.path.exists(args.tf) else None
    print(f"AutoGraph for/if loop, {args.steps} iterations on a [64] tensor")
    for label, r in (("ndflow", ours), ("TF 2.21", theirs)):
        if r:
            print(f"{label:>8}: first call {r['first_ms']:8.1f} ms, steady {r['ms']:8.2f} ms "
                  f"({r['ms'] * 1e3 / args.steps:.1f} us/iteration), x[0] = {r['x0']:.4f}")
    if ours and theirs:
        print(f"   ratio: steady {ours['ms'] / theirs['ms']:.2f}x TF, first call "
              f"{ours['first_ms'] / theirs['first_ms']:.2f}x TF")


if __name__ == "__main__":
    main()

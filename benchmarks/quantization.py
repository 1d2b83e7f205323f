"""tf.quantization: quantize (MIN_COMBINED, MIN_FIRST, SCALED) and dequantize of a float32
tensor, and quantize_and_dequantize_v2, ndflow against TensorFlow, each in a subprocess.

    python benchmarks/quantization.py [--shape 256 1024] [--repeat 30] [--tf PYTHON]

Printed: best-of-`repeat` milliseconds of one eager call (quint8 / qint8, range [-3, 5]) and
ndflow's time over TensorFlow's. TensorFlow runs with its oneDNN rewrite off, so both run
TF's reference kernels (the ones whose values ndflow matches).
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
repeat = int(sys.argv[2])
x = tf.constant(np.random.RandomState(0).uniform(-4, 6, shape).astype(np.float32))
Q = tf.quantization
q8 = Q.quantize(x, -3.0, 5.0, tf.quint8)
cases = {{
    "quantize MIN_COMBINED quint8": lambda: Q.quantize(x, -3.0, 5.0, tf.quint8)[0],
    "quantize MIN_FIRST quint8": lambda: Q.quantize(x, -3.0, 5.0, tf.quint8,
                                                    mode="MIN_FIRST")[0],
    "quantize SCALED qint8": lambda: Q.quantize(x, -3.0, 5.0, tf.qint8, mode="SCALED")[0],
    "dequantize MIN_COMBINED quint8": lambda: Q.dequantize(q8[0], q8[1], q8[2]),
    "dequantize MIN_FIRST quint8": lambda: Q.dequantize(q8[0], q8[1], q8[2],
                                                        mode="MIN_FIRST"),
    "quantize_and_dequantize_v2": lambda: Q.quantize_and_dequantize_v2(x, -3.0, 5.0,
                                                                      range_given=True),
}}
res = {{}}
for name, fn in cases.items():
    fn().numpy()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn().numpy()
        best = min(best, time.perf_counter() - t)
    res[name] = best * 1e3
print(json.dumps(res))
'''


def _run(python: str, module: str, args) -> dict | None:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0"}
    return run_json([python, "-c", _PROGRAM.format(module=module),
                     ",".join(map(str, args.shape)), str(args.repeat)],
                    module, env=env, timeout=1200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--tf", default="/work/tfvenv/bin/python")
    args = parser.parse_args()
    print(cpu_line())
    print(f"float32 {args.shape}, eager, best of {args.repeat}")
    ours = _run(sys.executable, "ndflow", args)
    theirs = _run(args.tf, "tensorflow", args) if os.path.exists(args.tf) else None
    for case in (ours or theirs or {}):
        row = [f"{case:32s}"]
        if ours:
            row.append(f"ndflow {ours[case]:8.3f} ms")
        if theirs:
            row.append(f"TensorFlow {theirs[case]:8.3f} ms")
        if ours and theirs:
            row.append(f"(ndflow/TF {ours[case] / theirs[case]:.2f}x)")
        print("  ".join(row))


if __name__ == "__main__":
    main()

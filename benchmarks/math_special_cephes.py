"""tf.math.special.dawsn / expint / fresnel_cos / fresnel_sin / spence on 1M float32 values
(eager, the result fetched), ndflow against TensorFlow (when its interpreter is given), in
alternating rounds so that both see the same load on a shared machine.

    python benchmarks/math_special_cephes.py [--tf /work/tfvenv/bin/python] [--n 1000000]
        [--rounds 7] [--aten]

Prints the milliseconds per call (best over the rounds of 5 calls each) and ndflow/TF;
`--aten` also times ndflow's ATen path (the one GPUs run) on the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory

import ndflow as tf  # noqa: E402
from ndflow.kernels import denormals  # noqa: E402
from ndflow.kernels import math_special_cephes as kernels  # noqa: E402

NAMES = ("dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence")
CALLS = 5


def inputs(n: int) -> np.ndarray:
    """Points over every interval of the five functions: |x| up to 100 on a log scale, a
    tenth of them negative."""
    rng = np.random.default_rng(0)
    x = 10.0 ** rng.uniform(-3.0, 2.0, n)
    x[rng.random(n) < 0.1] *= -1
    return x.astype(np.float32)


# TensorFlow times one function per line read from stdin and answers with its milliseconds.
_TF_WORKER = r"""
import sys, time
import numpy as np
import tensorflow as tf
n = int(sys.argv[1])
rng = np.random.default_rng(0)
x = 10.0 ** rng.uniform(-3.0, 2.0, n)
x[rng.random(n) < 0.1] *= -1
x = tf.constant(x.astype(np.float32))
CALLS = int(sys.argv[2])
print("ready", flush=True)
for line in sys.stdin:
    fn = getattr(tf.math.special, line.strip())
    fn(x).numpy()
    best = float("inf")
    for _ in range(CALLS):
        t = time.perf_counter()
        fn(x).numpy()
        best = min(best, time.perf_counter() - t)
    print(best * 1e3, flush=True)
"""


def time_ndflow(name: str, x, aten: bool = False) -> float:
    if aten:
        xt = torch.from_numpy(x.numpy())

        def call():
            flushed = denormals.enter()
            try:
                kernels.compute(name, xt, use_numba=False)
            finally:
                if flushed:
                    denormals.leave()
    else:
        fn = getattr(tf.math.special, name)

        def call():
            fn(x).numpy()
    call()
    best = float("inf")
    for _ in range(CALLS):
        t = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tf", default=None, help="TensorFlow's Python interpreter")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--aten", action="store_true", help="time the ATen path too")
    args = parser.parse_args()
    print(cpu_line())
    x = tf.constant(inputs(args.n))
    worker = None
    if args.tf and os.path.exists(args.tf):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        worker = subprocess.Popen([args.tf, "-c", _TF_WORKER, str(args.n), str(CALLS)],
                                  cwd="/tmp",
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, env=env)
        while worker.stdout.readline().strip() != "ready":
            pass
    best = {}
    for _ in range(args.rounds):
        for name in NAMES:
            runs = [("ndflow", lambda n=name: time_ndflow(n, x))]
            if args.aten:
                runs.append(("ndflow ATen", lambda n=name: time_ndflow(n, x, aten=True)))
            if worker is not None:
                def tf_time(n=name):
                    worker.stdin.write(n + "\n")
                    worker.stdin.flush()
                    return float(worker.stdout.readline())
                runs.append(("TensorFlow", tf_time))
            for who, run in runs:
                ms = run()
                best[(who, name)] = min(best.get((who, name), float("inf")), ms)
    if worker is not None:
        worker.stdin.close()
        worker.wait()
    print(f"{args.n} float32 values, eager, ms per call (best of {args.rounds} rounds x "
          f"{CALLS} calls)")
    whos = sorted({who for who, _ in best}, key=["ndflow", "ndflow ATen", "TensorFlow"].index)
    print(f"{'':12}" + "".join(f"{who:>14}" for who in whos) +
          ("   ndflow/TF" if "TensorFlow" in whos else ""))
    for name in NAMES:
        row = "".join(f"{best[(who, name)]:14.2f}" for who in whos)
        if "TensorFlow" in whos:
            row += f"{best[('ndflow', name)] / best[('TensorFlow', name)]:12.2f}"
        print(f"{name:12}{row}")
    print(json.dumps({f"{who}/{name}": round(v, 3) for (who, name), v in best.items()}))


if __name__ == "__main__":
    main()

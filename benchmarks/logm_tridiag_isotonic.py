"""tf.linalg.logm, tf.linalg.eigh_tridiagonal and tf.nn.isotonic_regression on representative
sizes, ndflow against TensorFlow (when its interpreter is given), in alternating rounds so
that both see the same load on a shared machine.

    python benchmarks/logm_tridiag_isotonic.py [--tf /work/tfvenv/bin/python] [--rounds 5]

Each case is timed eagerly (the result fetched) on both sides, except eigh_tridiagonal, whose
TF composite runs its while loops in Python when eager (seconds for n = 100): TF's time there
is its tf.function's (its fastest), ndflow's the eager call. Prints milliseconds per call (best
over the rounds of CALLS calls each) and ndflow/TF.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from machine import best_ms_after_pause, cpu_line  # noqa: E402 - benchmarks/ is the script's directory

import ndflow as tf  # noqa: E402

CALLS = 3

# name -> source of (fn, args) built from `tf` and `np` (shared by both sides)
CASES = {
    "logm c128 [16,32,32]": """
rng = np.random.default_rng(0)
x = tf.constant(np.eye(32) * 8 + rng.standard_normal((16, 32, 32))
                + 1j * rng.standard_normal((16, 32, 32)))
fn, args = tf.linalg.logm, (x,)""",
    "logm c64 [256,8,8]": """
rng = np.random.default_rng(1)
x = tf.constant((np.eye(8) * 4 + rng.standard_normal((256, 8, 8))
                 + 1j * rng.standard_normal((256, 8, 8))).astype(np.complex64))
fn, args = tf.linalg.logm, (x,)""",
    "logm c128 [128,128]": """
rng = np.random.default_rng(2)
x = tf.constant(np.eye(128) * 16 + rng.standard_normal((128, 128))
                + 1j * rng.standard_normal((128, 128)))
fn, args = tf.linalg.logm, (x,)""",
    "eigh_tridiagonal f64 n=200": """
rng = np.random.default_rng(3)
a, b = tf.constant(rng.standard_normal(200)), tf.constant(rng.standard_normal(199))
fn, args = GRAPH(lambda a, b: tf.linalg.eigh_tridiagonal(a, b)), (a, b)""",
    "eigh_tridiagonal f64 n=1000": """
rng = np.random.default_rng(4)
a, b = tf.constant(rng.standard_normal(1000)), tf.constant(rng.standard_normal(999))
fn, args = GRAPH(lambda a, b: tf.linalg.eigh_tridiagonal(a, b)), (a, b)""",
    "eigh_tridiagonal f32 n=1000 select i [0,9]": """
rng = np.random.default_rng(5)
a = tf.constant(rng.standard_normal(1000).astype(np.float32))
b = tf.constant(rng.standard_normal(999).astype(np.float32))
fn, args = GRAPH(lambda a, b: tf.linalg.eigh_tridiagonal(a, b, select="i",
                                                           select_range=[0, 9])), (a, b)""",
    "eigh_tridiagonal f64 n=200 +vectors": """
rng = np.random.default_rng(6)
a, b = tf.constant(rng.standard_normal(200)), tf.constant(rng.standard_normal(199))
fn, args = GRAPH(lambda a, b: tf.linalg.eigh_tridiagonal(a, b, eigvals_only=False)), (a, b)""",
    "eigh_tridiagonal c128 n=500 +vectors": """
rng = np.random.default_rng(7)
a = tf.constant(rng.standard_normal(500) + 0j)
b = tf.constant(rng.standard_normal(499) + 1j * rng.standard_normal(499))
fn, args = GRAPH(lambda a, b: tf.linalg.eigh_tridiagonal(a, b, eigvals_only=False)), (a, b)""",
    "isotonic f32 [1000,1000]": """
rng = np.random.default_rng(8)
x = tf.constant(rng.standard_normal((1000, 1000)).astype(np.float32))
fn, args = tf.nn.isotonic_regression, (x,)""",
    "isotonic f32 [100000,16] increasing": """
rng = np.random.default_rng(9)
x = tf.constant(rng.standard_normal((100000, 16)).astype(np.float32))
fn, args = (lambda v: tf.nn.isotonic_regression(v, decreasing=False)), (x,)""",
    "isotonic f64 [64,20000] axis 0": """
rng = np.random.default_rng(10)
x = tf.constant(np.cumsum(rng.standard_normal((20000, 64)), axis=0))
fn, args = (lambda v: tf.nn.isotonic_regression(v, axis=0)), (x,)""",
    "isotonic f16 [1000,1000]": """
rng = np.random.default_rng(11)
x = tf.constant(rng.standard_normal((1000, 1000)).astype(np.float16))
fn, args = tf.nn.isotonic_regression, (x,)""",
}


# TensorFlow builds a case per line read from stdin and answers with its milliseconds.
_TF_WORKER = r"""
import sys, time
import numpy as np
import tensorflow as tf
CASES = {CASES!r}
GRAPH = tf.function
def _fetch(out):
    for t in (out if isinstance(out, (tuple, list)) else (out,)):
        t.numpy()
print("ready", flush=True)
for line in sys.stdin:
    name, calls = line.rstrip("\n").rsplit("|", 1)
    scope = {{"tf": tf, "np": np, "GRAPH": GRAPH}}
    exec(CASES[name], scope)
    fn, args = scope["fn"], scope["args"]
    time.sleep(0.3)
    _fetch(fn(*args))
    best = float("inf")
    for _ in range(int(calls)):
        t = time.perf_counter()
        _fetch(fn(*args))
        best = min(best, time.perf_counter() - t)
    print(best * 1e3, flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tf", default="", help="TensorFlow's Python interpreter")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    opts = parser.parse_args()
    print(cpu_line())
    names = [n for n in CASES if opts.only in n]
    worker = None
    if opts.tf:
        worker = subprocess.Popen([opts.tf, "-c", _TF_WORKER.format(CASES=CASES)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  cwd="/tmp", stderr=subprocess.DEVNULL)
        assert worker.stdout.readline().strip() == "ready"
    built = {}
    for name in names:    # ndflow's eigh_tridiagonal is one op: timed eagerly
        scope = {"tf": tf, "np": np, "GRAPH": lambda f: f}
        exec(CASES[name], scope)
        built[name] = (scope["fn"], scope["args"])
    best = {name: [float("inf"), float("inf")] for name in names}
    for _ in range(opts.rounds):
        for name in names:
            best[name][0] = min(best[name][0], best_ms_after_pause(*built[name], CALLS))
            if worker is not None:
                worker.stdin.write(f"{name}|{CALLS}\n")
                worker.stdin.flush()
                best[name][1] = min(best[name][1], float(worker.stdout.readline()))
    print(f"{'case':44s} {'ndflow ms':>10s} {'TF ms':>10s} {'ndflow/TF':>10s}")
    for name in names:
        nd, t = best[name]
        ratio = f"{nd / t:10.3f}" if worker is not None else ""
        tf_ms = f"{t:10.3f}" if worker is not None else ""
        print(f"{name:44s} {nd:10.3f} {tf_ms:>10s} {ratio}")
    if worker is not None:
        worker.stdin.close()
        worker.wait()


if __name__ == "__main__":
    main()

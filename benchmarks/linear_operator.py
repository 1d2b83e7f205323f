"""tf.linalg.LinearOperator methods on representative sizes, ndflow against TensorFlow (when
its interpreter is given, in its own process), timed in turn (in_turn.py) so that both see
the same load on a shared machine.

    python benchmarks/linear_operator.py [--tf /work/tfvenv/bin/python] [--steps 15]

Every case is eager on both sides (the operator built once, the method called and its result
fetched): the structured solves and products (Cholesky/LU of a full matrix, a diagonal, the
Woodbury solve of a low-rank update, FFTs of a circulant, the vec trick of a Kronecker
product, the tridiagonal kernel) and, last, one small call where Python overhead is all there
is. Prints the median milliseconds per call and ndflow/TF.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from in_turn import StepServer, medians_in_turn  # noqa: E402 - benchmarks/ is on the path
from machine import cpu_line, fetch  # noqa: E402 - benchmarks/ is the script's directory

import ndflow as tf  # noqa: E402

# name -> source of (fn, args) built from `tf` and `np` (shared by both sides)
CASES = {
    "FullMatrix solve f32 [8,256,256] rhs 16": """
rng = np.random.default_rng(0)
op = tf.linalg.LinearOperatorFullMatrix(
    (rng.standard_normal((8, 256, 256)) + 16 * np.eye(256)).astype(np.float32))
rhs = tf.constant(rng.standard_normal((8, 256, 16)).astype(np.float32))
fn, args = op.solve, (rhs,)""",
    "FullMatrix SPD solve f64 [8,256,256] (Cholesky)": """
rng = np.random.default_rng(1)
a = rng.standard_normal((8, 256, 256))
op = tf.linalg.LinearOperatorFullMatrix(a @ a.transpose(0, 2, 1) + 256 * np.eye(256),
                                        is_self_adjoint=True, is_positive_definite=True)
rhs = tf.constant(rng.standard_normal((8, 256, 16)))
fn, args = op.solve, (rhs,)""",
    "FullMatrix log_abs_determinant f32 [8,256,256]": """
rng = np.random.default_rng(2)
op = tf.linalg.LinearOperatorFullMatrix(
    (rng.standard_normal((8, 256, 256)) + 16 * np.eye(256)).astype(np.float32))
fn, args = op.log_abs_determinant, ()""",
    "Diag matmul f32 [8,4096] x [8,4096,32]": """
rng = np.random.default_rng(3)
op = tf.linalg.LinearOperatorDiag(rng.uniform(1, 2, (8, 4096)).astype(np.float32))
x = tf.constant(rng.standard_normal((8, 4096, 32)).astype(np.float32))
fn, args = op.matmul, (x,)""",
    "LowerTriangular solve f32 [4,512,512] rhs 64": """
rng = np.random.default_rng(4)
op = tf.linalg.LinearOperatorLowerTriangular(
    np.tril(rng.standard_normal((4, 512, 512)) + 8 * np.eye(512)).astype(np.float32))
rhs = tf.constant(rng.standard_normal((4, 512, 64)).astype(np.float32))
fn, args = op.solve, (rhs,)""",
    "LowRankUpdate solve f32 N=2048 rank 16 rhs 32": """
rng = np.random.default_rng(5)
op = tf.linalg.LinearOperatorLowRankUpdate(
    tf.linalg.LinearOperatorDiag(rng.uniform(1, 2, 2048).astype(np.float32),
                                 is_positive_definite=True),
    rng.standard_normal((2048, 16)).astype(np.float32))
rhs = tf.constant(rng.standard_normal((2048, 32)).astype(np.float32))
fn, args = op.solve, (rhs,)""",
    "LowRankUpdate log_abs_determinant f64 N=2048 rank 16": """
rng = np.random.default_rng(6)
op = tf.linalg.LinearOperatorLowRankUpdate(
    tf.linalg.LinearOperatorDiag(rng.uniform(1, 2, 2048)), rng.standard_normal((2048, 16)),
    diag_update=rng.uniform(1, 2, 16))
fn, args = op.log_abs_determinant, ()""",
    "Circulant matvec f32 [16,4096]": """
rng = np.random.default_rng(7)
kernel = rng.standard_normal((16, 4096))
op = tf.linalg.LinearOperatorCirculant(
    np.fft.fft(kernel).astype(np.complex64), input_output_dtype=tf.float32)
x = tf.constant(rng.standard_normal((16, 4096)).astype(np.float32))
fn, args = op.matvec, (x,)""",
    "Circulant2D solve c64 [4,64,64] rhs 8": """
rng = np.random.default_rng(8)
op = tf.linalg.LinearOperatorCirculant2D(
    (np.fft.fft2(rng.standard_normal((4, 64, 64))) + 64).astype(np.complex64))
rhs = tf.constant((rng.standard_normal((4, 4096, 8)) + 0j).astype(np.complex64))
fn, args = op.solve, (rhs,)""",
    "Kronecker matmul f32 [64x64](x)[64x64] x [4096,16]": """
rng = np.random.default_rng(9)
op = tf.linalg.LinearOperatorKronecker([
    tf.linalg.LinearOperatorFullMatrix(rng.standard_normal((64, 64)).astype(np.float32)),
    tf.linalg.LinearOperatorFullMatrix(rng.standard_normal((64, 64)).astype(np.float32))])
x = tf.constant(rng.standard_normal((4096, 16)).astype(np.float32))
fn, args = op.matmul, (x,)""",
    "Tridiag solve f64 [8,512] rhs 4": """
rng = np.random.default_rng(10)
op = tf.linalg.LinearOperatorTridiag(rng.standard_normal((8, 3, 512))
                                     + np.array([[0.0], [4.0], [0.0]]))
rhs = tf.constant(rng.standard_normal((8, 512, 4)))
fn, args = op.solve, (rhs,)""",
    "Toeplitz matvec f32 n=2048": """
rng = np.random.default_rng(11)
op = tf.linalg.LinearOperatorToeplitz(rng.standard_normal(2048).astype(np.float32),
                                      rng.standard_normal(2048).astype(np.float32))
x = tf.constant(rng.standard_normal(2048).astype(np.float32))
fn, args = op.matvec, (x,)""",
    "Composition(Full, Diag) @ x, then to_dense, f32 3x3 (overhead)": """
op = tf.linalg.LinearOperatorFullMatrix(np.eye(3, dtype=np.float32)) @ \\
    tf.linalg.LinearOperatorDiag(np.ones(3, np.float32))
x = tf.constant(np.ones((3, 1), np.float32))
fn, args = (lambda v: (op.matmul(v), op.to_dense())), (x,)""",
}


_LAST_CALL = [0.0]


def after_pause(run) -> None:
    """`run()`, after 0.3 s when the other side ran since the last call: its process's
    spinning pool threads go idle first (on a 2-core machine TF's threads spinning through
    ndflow's block cost it 10-100x). The wait falls in the untimed call that starts each
    block (in_turn.py); TF's side does the same."""
    if time.perf_counter() - _LAST_CALL[0] > 0.05:
        time.sleep(0.3)
    run()
    _LAST_CALL[0] = time.perf_counter()


# TensorFlow's side of a case: the same source, served by in_turn.StepServer.
_TF_SCRIPT = """
import time
import numpy as np
import tensorflow as tf
_LAST_CALL = [0.0]
def _fetch(out):
    for t in (out if isinstance(out, (tuple, list)) else (out,)):
        t.numpy()
{case}
{pause}

def step():
    after_pause(lambda: fetch(fn(*args)))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tf", default="", help="TensorFlow's Python interpreter")
    parser.add_argument("--steps", type=int, default=15, help="timed calls per side")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    opts = parser.parse_args()
    print(cpu_line())
    print(f"{'case':56s} {'ndflow ms':>10s} {'TF ms':>10s} {'ndflow/TF':>10s}")
    for name in (n for n in CASES if opts.only in n):
        scope = {"tf": tf, "np": np}
        exec(CASES[name], scope)
        fn, args = scope["fn"], scope["args"]
        calls = {"ndflow": lambda fn=fn, args=args: after_pause(lambda: fetch(fn(*args)))}
        if opts.tf:   # its own process, which takes its turns between ndflow's blocks
            script = _TF_SCRIPT.format(case=CASES[name], pause=inspect.getsource(after_pause))
            calls["TF"] = StepServer(opts.tf, script, [], cwd="/tmp")
        try:
            ms = medians_in_turn(calls, opts.steps, warmup=2)
        finally:
            if "TF" in calls:
                calls["TF"].close()
        nd, t = ms["ndflow"], ms.get("TF")
        tf_ms, ratio = ("", "") if t is None else (f"{t:10.3f}", f"{nd / t:10.3f}")
        print(f"{name:56s} {nd:10.3f} {tf_ms:>10s} {ratio}", flush=True)


if __name__ == "__main__":
    main()

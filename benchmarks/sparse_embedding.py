"""Training an embedding table with sparse gradients: step time vs table size, ndflow vs
TensorFlow (both in subprocesses running the same program).

    python benchmarks/sparse_embedding.py [--rows 10000 100000 1000000] [--opt sgd adam ...]
                                          [--steps 100] [--repeat 3] [--tf /work/tfvenv/bin/python]

The model: a [rows, 64] float32 table, a batch of 64 random ids, `embedding_lookup`, a
[64, 1] dense layer and a squared loss; one `tf.function` step takes `tape.gradient` (the
table's gradient is IndexedSlices) and applies it with the optimizer:
`sgd` / `momentum` / `adam` are `tf.compat.v1.train.GradientDescentOptimizer` /
`MomentumOptimizer` / `AdamOptimizer`,
`keras_sgd` / `keras_adam` are `tf.keras.optimizers.SGD` / `Adam`.

Printed per (optimizer, rows): milliseconds per step (best of `repeat` runs of `steps`
steps), and the bytes of table-sized state a step touches by the optimizer's semantics (a
model, the same for both libraries): the sparse paths read and write only the 64 rows
(gather 1 read, scatter 1 read + 1 write per row; Momentum also reads and writes its
accumulator's rows); TF1 Adam decays all of m and v and
updates the whole table (TF's `_apply_sparse_shared`: m, v read + written, the table read
+ written, m and v read again), and Keras Adam's update of m and v is dense, so their steps
grow with the table.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory
from side_by_side import run_json  # noqa: E402 - benchmarks/ is the script's directory

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DIM, BATCH = 64, 64
OPTIMIZERS = ("sgd", "momentum", "adam", "keras_sgd", "keras_adam")

_SCRIPT = r"""
import json, sys, time
import numpy as np
import {module} as tf
rows, opt_name, steps, repeat = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = np.random.RandomState(0)
table = tf.Variable(rng.uniform(-0.05, 0.05, [rows, {dim}]).astype(np.float32))
w = tf.Variable(np.full([{dim}, 1], 0.1, np.float32))
opt = {{"sgd": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1),
       "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
       "adam": lambda: tf.compat.v1.train.AdamOptimizer(1e-3),
       "keras_sgd": lambda: tf.keras.optimizers.SGD(0.1),
       "keras_adam": lambda: tf.keras.optimizers.Adam(1e-3)}}[opt_name]()
if opt_name.startswith("keras"):
    opt.build([table, w])
ids = [tf.constant(rng.randint(0, rows, {batch}).astype(np.int32)) for _ in range(steps)]
ys = [tf.constant(rng.uniform(-1, 1, [{batch}, 1]).astype(np.float32)) for _ in range(steps)]
kind = []

@tf.function
def step(i, y):
    with tf.GradientTape() as tape:
        pred = tf.matmul(tf.nn.embedding_lookup(table, i), w)
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, [table, w])
    kind.append(type(grads[0]).__name__)
    opt.apply_gradients(zip(grads, [table, w]))
    return loss

for k in range(3):
    step(ids[k], ys[k])
best = float("inf")
for _ in range(repeat):
    t = time.perf_counter()
    for i, y in zip(ids, ys):
        loss = step(i, y)
    float(loss.numpy())
    best = min(best, (time.perf_counter() - t) / steps)
print(json.dumps({{"ms": best * 1e3, "grad": kind[0], "loss": float(loss.numpy())}}))
"""


def touched_bytes(opt: str, rows: int) -> int:
    """Bytes of table-sized state one step reads and writes (see the module docstring)."""
    row = DIM * 4
    sparse = 3 * BATCH * row               # gather, scatter read + write
    if opt in ("sgd", "keras_sgd"):
        return sparse
    if opt == "momentum":                  # gather; var and accum rows read + written
        return 5 * BATCH * row
    full = rows * row
    if opt == "adam":                      # m, v decayed (2 x rw); table rw reading m, v
        return BATCH * row + 2 * (2 * full + 2 * BATCH * row) + 4 * full
    return BATCH * row + 4 * full + 4 * full  # keras_adam: m, v rw; table rw reading m, v


def measure(python: str, module: str, rows: int, opt: str, steps: int, repeat: int):
    if not python or not os.path.exists(python):
        return None
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
               TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1", OMP_NUM_THREADS="1",
               PYTHONPATH=os.path.abspath(ROOT))
    code = _SCRIPT.format(module=module, dim=DIM, batch=BATCH)
    return run_json([python, "-c", code, str(rows), opt, str(steps), str(repeat)],
                    module, env=env, timeout=1800)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    p.add_argument("--opt", nargs="+", default=list(OPTIMIZERS), choices=OPTIMIZERS)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--repeat", type=int, default=3, help="timed runs (best is printed)")
    p.add_argument("--tf", default="/work/tfvenv/bin/python",
                   help="TensorFlow interpreter ('' to skip)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)  # as both subprocesses (OMP_NUM_THREADS / TF's intra-op threads)
    print(cpu_line())
    print(f"{'optimizer':<11}{'rows':>9}{'grad':>15}{'ndflow ms':>11}{'tf ms':>9}{'nd/tf':>7}"
          f"{'MB touched':>12}")
    for opt in args.opt:
        for rows in args.rows:
            nd = measure(sys.executable, "ndflow", rows, opt, args.steps, args.repeat)
            tfr = measure(args.tf, "tensorflow", rows, opt, args.steps, args.repeat)
            line = f"{opt:<11}{rows:>9}{(nd or tfr or {}).get('grad', '?'):>15}"
            line += f"{nd['ms']:>11.3f}" if nd else f"{'failed':>11}"
            line += f"{tfr['ms']:>9.3f}" if tfr else f"{'-':>9}"
            line += f"{nd['ms'] / tfr['ms']:>7.2f}" if nd and tfr else f"{'':>7}"
            print(line + f"{touched_bytes(opt, rows) / 1e6:>12.3f}", flush=True)


if __name__ == "__main__":
    main()

"""tf.sparse ops eagerly and in a tf.data pipeline: ndflow vs TensorFlow (and torch.sparse for
the matmul) on the same data.

    python benchmarks/sparse_ops.py [--rounds 2] [--tf PYTHON]

The same source runs in both interpreters (`--worker MODULE`: `import MODULE as tf`), one
after the other, `rounds` times, alternating (the machine may be shared); each figure is the
best of three timings after a warm-up call, in microseconds per call:

- sparse_dense_matmul: a [2000, 2000] SparseTensor with 20,000 entries times a [2000, 64]
  matrix (torch.sparse.mm on the same COO tensor, coalesced beforehand, as the reference);
- reorder / reduce_sum(axis=1) / fill_empty_rows / concat(axis=1): of a shuffled [5000, 1000]
  SparseTensor with 50,000 entries;
- cross_hashed: of a [512, 4] string SparseTensor and a [512, 2] int64 tensor, 1000 buckets;
- varlen pipeline: examples/s of parse_example(VarLenFeature) -> fill_empty_rows -> to_dense
  over 256-example batches of 20,000 serialized examples.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def _best_us(fn, reps: int) -> float:
    fn()
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t) / reps)
    return best * 1e6


def _coo(rng, rows: int, cols: int, nnz: int):
    lin = rng.choice(rows * cols, size=nnz, replace=False)
    return np.stack([lin // cols, lin % cols], 1).astype(np.int64), \
        rng.standard_normal(nnz).astype(np.float32)


def worker(module: str) -> dict:
    tf = __import__(module)
    rng = np.random.default_rng(0)
    idx, vals = _coo(rng, 2000, 2000, 20_000)
    order = np.lexsort(idx.T[::-1])
    a = tf.SparseTensor(idx[order], vals[order], [2000, 2000])
    b = tf.constant(rng.standard_normal((2000, 64)).astype(np.float32))
    out = {"sparse_dense_matmul": _best_us(lambda: tf.sparse.sparse_dense_matmul(a, b), 20)}
    idx2, vals2 = _coo(rng, 5000, 1000, 50_000)
    shuffled = tf.SparseTensor(idx2, vals2, [5000, 1000])
    ordered = tf.sparse.reorder(shuffled)
    out["reorder"] = _best_us(lambda: tf.sparse.reorder(shuffled), 20)
    out["reduce_sum"] = _best_us(lambda: tf.sparse.reduce_sum(ordered, axis=1), 20)
    out["fill_empty_rows"] = _best_us(lambda: tf.sparse.fill_empty_rows(ordered, 0.0), 20)
    out["concat"] = _best_us(lambda: tf.sparse.concat(1, [ordered, ordered]), 20)
    words = tf.SparseTensor(np.stack([np.repeat(np.arange(512), 4), np.tile(np.arange(4), 512)],
                                     1).astype(np.int64),
                            np.array([f"w{i % 97}".encode() for i in range(2048)], dtype=object),
                            [512, 4])
    ints = tf.constant(rng.integers(0, 50, size=(512, 2)), tf.int64)
    out["cross_hashed"] = _best_us(lambda: tf.sparse.cross_hashed([words, ints], 1000), 3)
    examples = [tf.train.Example(features=tf.train.Features(feature={
        "ids": tf.train.Feature(int64_list=tf.train.Int64List(
            value=rng.integers(0, 100, size=int(rng.integers(0, 8))).tolist()))}))
        .SerializeToString() for _ in range(20_000)]
    spec = {"ids": tf.io.VarLenFeature(tf.int64)}

    def pipeline():
        ds = tf.data.Dataset.from_tensor_slices(examples).batch(256).map(
            lambda s: tf.sparse.to_dense(tf.sparse.fill_empty_rows(
                tf.io.parse_example(s, spec)["ids"], tf.constant(-1, tf.int64))[0]))
        for _ in ds:
            pass
    out["varlen_pipeline"] = len(examples) / (_best_us(pipeline, 1) / 1e6)
    if module == "ndflow":
        import torch
        t = torch.sparse_coo_tensor(torch.from_numpy(idx.T.copy()), torch.from_numpy(vals),
                                    (2000, 2000)).coalesce()
        tb = torch.from_numpy(b.numpy())
        out["torch_sparse_mm"] = _best_us(lambda: torch.sparse.mm(t, tb), 20)
    return out


def run_worker(python: str, module: str) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", module],
                         capture_output=True, text=True, env=env, timeout=1800,
                         cwd=tempfile.gettempdir())
    if out.returncode != 0:
        print(f"{module} run failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(runs: list, key: str, higher: bool):
    values = [r[key] for r in runs if r and key in r]
    if not values:
        return None
    return max(values) if higher else min(values)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    have_tf = os.path.exists(args.tf)
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(run_worker(sys.executable, "ndflow"))
        if have_tf:
            theirs.append(run_worker(args.tf, "tensorflow"))
    keys = ["sparse_dense_matmul", "reorder", "reduce_sum", "fill_empty_rows", "concat",
            "cross_hashed"]
    print(f"{'(us per call)':24s}{'ndflow':>12s}{'TensorFlow':>12s}{'ndflow/TF':>11s}")
    for key in keys:
        a, b = _best(ours, key, False), _best(theirs, key, False)
        ratio = "" if a is None or b is None else f"{b / a:10.2f}x"
        print(f"{key:24s}{a or 0:12,.1f}{b or 0:12,.1f}{ratio:>11s}")
    torch_mm = _best(ours, "torch_sparse_mm", False)
    if torch_mm:
        print(f"{'torch.sparse.mm':24s}{torch_mm:12,.1f}")
    a, b = _best(ours, "varlen_pipeline", True), _best(theirs, "varlen_pipeline", True)
    ratio = "" if a is None or b is None else f"{a / b:10.2f}x"
    print(f"{'varlen pipeline (ex/s)':24s}{a or 0:12,.0f}{b or 0:12,.0f}{ratio:>11s}")
    print("(ndflow/TF: speed ratio, above 1 = ndflow faster)")


if __name__ == "__main__":
    main()

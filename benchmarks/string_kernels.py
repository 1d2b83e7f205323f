"""String hashing and string gathers eagerly: ndflow vs TensorFlow on the same strings.

    python benchmarks/string_kernels.py [--sizes 10000 100000 1000000] [--rounds 1]
                                        [--only NAME ...] [--tf PYTHON]

The same source runs in both interpreters (`--worker MODULE`: `import MODULE as tf`), one
after the other, single-threaded (TF_NUM_INTRAOP_THREADS=1, torch 1 thread), `rounds` times;
each figure is the best of several timed calls after a warm-up, in milliseconds per call.
The strings: `n` byte strings of lengths 0-100 (most short, some over 64 bytes: every
FarmHash length branch), ASCII with some UTF-8 and NUL bytes, drawn from n // 4 distinct ones.

- to_hash_bucket_fast / to_hash_bucket_strong / to_hash_bucket: of the [n] strings, 1000 buckets;
- fingerprint: tf.fingerprint of the [n] strings (each row one string);
- gather / gather_nd: n random rows of the strings / n random (row, column) pairs of them as
  [n // 4, 4];
- cross_hashed: tf.sparse.cross_hashed of the strings as a [n // 4, 4] SparseTensor and a
  [n // 4, 2] int64 tensor, 1000 buckets (n * 2 crosses);
- keras_hashing: keras.layers.Hashing(1000) on the strings as [n, 1].
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

NAMES = ("to_hash_bucket_fast", "to_hash_bucket_strong", "to_hash_bucket", "fingerprint",
         "gather", "gather_nd", "cross_hashed", "keras_hashing")


def strings(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    distinct = max(n // 4, 1)
    lengths = np.where(rng.random(distinct) < 0.8, rng.integers(0, 17, distinct),
                       rng.integers(17, 101, distinct))
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789_-", np.uint8)
    pool = []
    for i, k in enumerate(lengths):
        s = alphabet[rng.integers(0, alphabet.size, int(k))].tobytes()
        if i % 17 == 0:
            s += "é日".encode()
        if i % 29 == 0:
            s = s[: len(s) // 2] + b"\x00" + s[len(s) // 2:]
        pool.append(s)
    out = np.empty(n, dtype=object)
    out[:] = [pool[j] for j in rng.integers(0, distinct, n)]
    return out


def _best_ms(fn) -> float:
    fn()
    t = time.perf_counter()
    fn()
    once = time.perf_counter() - t
    reps = max(1, min(20, int(0.3 / max(once, 1e-6))))
    best = once
    for _ in range(3 if once < 2 else 1):
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t) / reps)
    return best * 1e3


def cases(tf, n: int) -> dict:
    """name -> a call of the op on n strings."""
    s = strings(n)
    rng = np.random.default_rng(1)
    x = tf.constant(s)
    rows = n // 4
    x2 = tf.constant(s[:rows * 4].reshape(rows, 4))
    idx = tf.constant(rng.integers(0, n, n), tf.int64)
    idx_nd = tf.constant(np.stack([rng.integers(0, rows, n), rng.integers(0, 4, n)], 1),
                         tf.int64)
    words = tf.SparseTensor(
        np.stack([np.repeat(np.arange(rows), 4), np.tile(np.arange(4), rows)], 1)
        .astype(np.int64), s[:rows * 4], [rows, 4])
    ints = tf.constant(rng.integers(0, 50, size=(rows, 2)), tf.int64)
    layer = tf.keras.layers.Hashing(num_bins=1000)
    x_col = tf.reshape(x, [n, 1])
    return {
        "to_hash_bucket_fast": lambda: tf.strings.to_hash_bucket_fast(x, 1000),
        "to_hash_bucket_strong": lambda: tf.strings.to_hash_bucket_strong(x, 1000, [1, 2]),
        "to_hash_bucket": lambda: tf.strings.to_hash_bucket(x, 1000),
        "fingerprint": lambda: tf.fingerprint(x),
        "gather": lambda: tf.gather(x, idx),
        "gather_nd": lambda: tf.gather_nd(x2, idx_nd),
        "cross_hashed": lambda: tf.sparse.cross_hashed([words, ints], 1000).values,
        "keras_hashing": lambda: layer(x_col),
    }


def worker(module: str, sizes: list, only: list) -> dict:
    tf = __import__(module)
    if module == "ndflow":
        import torch
        torch.set_num_threads(1)
    out = {}
    for n in sizes:
        for name, fn in cases(tf, n).items():
            if not only or name in only:
                out[f"{name}/{n}"] = _best_ms(lambda fn=fn: fn().numpy())
    return out


def run_worker(python: str, module: str, sizes: list, only: list) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
               TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1", OMP_NUM_THREADS="1",
               PYTHONPATH=os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
    cmd = [python, os.path.abspath(__file__), "--worker", module,
           "--sizes", *map(str, sizes)] + (["--only", *only] if only else [])
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600,
                         cwd=tempfile.gettempdir())
    if res.returncode != 0:
        print(f"{module} run failed:\n{res.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", nargs="*", default=[], choices=NAMES)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"),
                    help="TensorFlow interpreter ('' to skip)")
    ap.add_argument("--worker", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.sizes, args.only)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line
    print(cpu_line())
    nd_runs, tf_runs = [], []
    for _ in range(args.rounds):
        nd_runs.append(run_worker(sys.executable, "ndflow", args.sizes, args.only))
        if args.tf and os.path.exists(args.tf):
            tf_runs.append(run_worker(args.tf, "tensorflow", args.sizes, args.only))
    keys = [k for r in nd_runs + tf_runs if r for k in r]
    print(f"{'op':<24}{'n':>9}{'ndflow ms':>12}{'tf ms':>10}{'nd/tf':>8}")
    for key in dict.fromkeys(keys):
        nd = min((r[key] for r in nd_runs if r and key in r), default=None)
        tfv = min((r[key] for r in tf_runs if r and key in r), default=None)
        name, n = key.split("/")
        line = f"{name:<24}{n:>9}"
        line += f"{nd:>12.3f}" if nd is not None else f"{'failed':>12}"
        line += f"{tfv:>10.3f}" if tfv is not None else f"{'-':>10}"
        line += f"{nd / tfv:>8.2f}" if nd is not None and tfv else ""
        print(line, flush=True)


if __name__ == "__main__":
    main()

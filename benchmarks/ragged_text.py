"""RaggedTensors in a text pipeline and eagerly: ndflow vs TensorFlow on the same data.

    python benchmarks/ragged_text.py [--lines 20000] [--rounds 2] [--tf PYTHON]

The same source runs in both interpreters (`--worker MODULE`: `import MODULE as tf`), one
after the other, `rounds` times, alternating (the machine may be shared); each figure is the
best of its rounds, after a warm-up pass:

- pipeline: lines/s of `from_tensor_slices(lines).batch(256).map(split -> lower ->
  RaggedTensor.to_tensor)` (the tokenizing front of a text model), iterated to the end;
- ragged_batch: sequences/s of `from_tensor_slices(ragged token ids).ragged_batch(64)
  .map(reduce_sum over the ragged axis)`;
- eager ops: microseconds per `tf.reduce_mean(rt, axis=1)` and per `rt * 2 + 1` on a
  RaggedTensor of 1,000 rows (mean length 20).
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

WORDS = ["the", "cat", "sat", "on", "a", "Mat", "Dog", "ran", "far", "away", "and", "back"]


def _lines(n: int) -> list:
    rng = np.random.default_rng(0)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 40)))) for _ in range(n)]


def _best_rate(fn, count: int, reps: int = 3) -> float:
    fn()  # warm-up (traces the map functions)
    best = min(_timed(fn) for _ in range(reps))
    return count / best


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def worker(module: str, n_lines: int) -> dict:
    tf = __import__(module)
    lines = _lines(n_lines)

    def tokenize():
        ds = tf.data.Dataset.from_tensor_slices(lines).batch(256).map(
            lambda s: tf.strings.lower(tf.strings.split(s)).to_tensor(default_value=""))
        for _ in ds:
            pass

    rng = np.random.default_rng(1)
    lengths = rng.integers(0, 40, size=n_lines)
    ids = tf.RaggedTensor.from_row_lengths(
        rng.integers(0, 1000, size=int(lengths.sum())).astype(np.int64), lengths)

    def batches():
        ds = tf.data.Dataset.from_tensor_slices(ids).ragged_batch(64).map(
            lambda x: tf.reduce_sum(x, axis=1))
        for _ in ds:
            pass

    small = tf.RaggedTensor.from_row_lengths(
        rng.random(int(lengths[:1000].sum())).astype(np.float32), lengths[:1000])
    reps = 200

    def means():
        for _ in range(reps):
            tf.reduce_mean(small, axis=1)

    def arith():
        for _ in range(reps):
            small * 2.0 + 1.0

    return {"pipeline": _best_rate(tokenize, n_lines),
            "ragged_batch": _best_rate(batches, n_lines),
            "reduce_mean_us": 1e6 / _best_rate(means, reps),
            "arith_us": 1e6 / _best_rate(arith, reps)}


def run_worker(python: str, module: str, n_lines: int) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", module,
                          "--lines", str(n_lines)], capture_output=True, text=True, env=env,
                         timeout=1800, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        print(f"{module} run failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(runs: list, key: str, higher: bool):
    values = [r[key] for r in runs if r]
    if not values:
        return None
    return max(values) if higher else min(values)


def _fmt(v, rate: bool) -> str:
    return "-" if v is None else f"{v:,.0f}" if rate else f"{v:,.1f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.lines)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    have_tf = os.path.exists(args.tf)
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(run_worker(sys.executable, "ndflow", args.lines))
        if have_tf:
            theirs.append(run_worker(args.tf, "tensorflow", args.lines))
    rows = [("pipeline (lines/s)", "pipeline", True), ("ragged_batch (seqs/s)",
                                                        "ragged_batch", True),
            ("reduce_mean axis=1 (us)", "reduce_mean_us", False),
            ("rt * 2 + 1 (us)", "arith_us", False)]
    print(f"{'':26s}{'ndflow':>12s}{'TensorFlow':>12s}{'ndflow/TF':>11s}")
    for label, key, higher in rows:
        a, b = _best(ours, key, higher), _best(theirs, key, higher)
        ratio = "" if a is None or b is None else f"{(a / b if higher else b / a):10.2f}x"
        print(f"{label:26s}{_fmt(a, higher):>12s}{_fmt(b, higher):>12s}{ratio:>11s}")
    print("(ndflow/TF: speed ratio, above 1 = ndflow faster)")


if __name__ == "__main__":
    main()

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
import time

import numpy as np
from side_by_side import TF_PYTHON, alternate, print_speed_table

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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=TF_PYTHON)
    ap.add_argument("--worker", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.lines)))
        return
    from machine import cpu_line  # noqa: PLC0415 - imports torch: the parent only

    print(cpu_line())
    rows = [("pipeline (lines/s)", "pipeline", True), ("ragged_batch (seqs/s)",
                                                        "ragged_batch", True),
            ("reduce_mean axis=1 (us)", "reduce_mean_us", False),
            ("rt * 2 + 1 (us)", "arith_us", False)]
    ours, theirs = alternate(__file__, args.rounds, "--lines", args.lines, tf_python=args.tf,
                             higher={key for _, key, rate in rows if rate})
    print_speed_table(rows, ours, theirs, width=26)


if __name__ == "__main__":
    main()

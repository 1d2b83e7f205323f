"""tf.experimental composites: ndflow vs TensorFlow on the same data.

    python benchmarks/experimental_composites.py [--n 4000] [--rounds 2] [--tf PYTHON]

The same source runs in both interpreters (`--worker MODULE`: `import MODULE as tf`), one
after the other, `rounds` times, alternating (the machine may be shared); each figure is the
best of its rounds, after a warm-up pass:

- batchable: elements/s of `from_tensor_slices(BatchableExtensionType with a dense and a
  ragged field).batch(64)`, iterated to the end (the encoder path of tf.data);
- structured: elements/s of the same over a StructuredTensor from `from_pyval`;
- row_partition: microseconds per `RowPartition.from_row_lengths(...)` plus `value_rowids()`;
- ragged shape: microseconds per `tf.ones(tf.shape(rt))` on a RaggedTensor of 1,000 rows.

No `from __future__ import annotations`: the worker's ExtensionType reads its annotations.
"""

import argparse
import json
import time

import numpy as np
from side_by_side import TF_PYTHON, alternate, print_speed_table


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _best_rate(fn, count: int, reps: int = 3) -> float:
    fn()
    return count / min(_timed(fn) for _ in range(reps))


def worker(module: str, n: int) -> dict:
    tf = __import__(module)

    class Tokens(tf.experimental.BatchableExtensionType):
        ids: tf.RaggedTensor
        weights: tf.Tensor

    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 20, size=n)
    ids = tf.RaggedTensor.from_row_lengths(
        rng.integers(0, 1000, size=int(lengths.sum())).astype(np.int64), lengths)
    value = Tokens(ids, tf.constant(rng.random((n, 8)).astype(np.float32)))

    def batchable():
        for _ in tf.data.Dataset.from_tensor_slices(value).batch(64):
            pass

    st = tf.experimental.StructuredTensor.from_pyval(
        [{"a": int(i), "b": [float(x) for x in range(int(k))]} for i, k in enumerate(lengths)])

    def structured():
        for _ in tf.data.Dataset.from_tensor_slices(st).batch(64):
            pass

    small = tf.RaggedTensor.from_row_lengths(
        rng.random(int(lengths[:1000].sum())).astype(np.float32), lengths[:1000])
    row_lengths = lengths[:1000]
    reps = 200

    def partitions():
        for _ in range(reps):
            tf.experimental.RowPartition.from_row_lengths(row_lengths).value_rowids()

    def shapes():
        for _ in range(reps):
            tf.ones(tf.shape(small))

    return {"batchable": _best_rate(batchable, n), "structured": _best_rate(structured, n),
            "row_partition_us": 1e6 / _best_rate(partitions, reps),
            "ragged_shape_us": 1e6 / _best_rate(shapes, reps)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=TF_PYTHON)
    ap.add_argument("--worker", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.n)))
        return
    from machine import cpu_line  # noqa: PLC0415 - imports torch: the parent only

    print(cpu_line())
    rows = [("batchable batch (elem/s)", "batchable", True),
            ("structured batch (elem/s)", "structured", True),
            ("RowPartition build (us)", "row_partition_us", False),
            ("tf.ones(tf.shape(rt)) (us)", "ragged_shape_us", False)]
    ours, theirs = alternate(__file__, args.rounds, "--n", args.n, tf_python=args.tf,
                             higher={key for _, key, rate in rows if rate})
    print_speed_table(rows, ours, theirs, width=28)


if __name__ == "__main__":
    main()

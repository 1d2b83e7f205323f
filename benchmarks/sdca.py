"""tf.compat.v1.train.sdca_optimizer / sdca_fprint and tf.io.decode_proto / encode_proto,
ndflow (numba batch kernels) against TensorFlow, each in a fresh interpreter, alternating.

    python benchmarks/sdca.py [--rounds 3] [--repeat 7]

Cases at the sizes of the first measurements and ten times larger: SDCA on n examples with
10 sparse entries (values) among 1000 features and 8 dense columns, squared loss; SdcaFprint
of n ids; decode / encode of n serialized tensorflow.Int64List of 20 values. Printed: the CPU
line, then per case the best milliseconds of one eager call (values fetched with .numpy()),
TF's, and ndflow's over TF's (below 1: ndflow faster).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from side_by_side import alternate, print_ratios  # noqa: E402 - the script's directory


def _cases(tf, np, scale: int) -> dict:
    rng = np.random.default_rng(0)
    n = 1000 * scale
    ex = np.repeat(np.arange(n), 10)
    feat = np.concatenate([np.sort(rng.choice(1000, 10, replace=False)) for _ in range(n)])
    args = dict(
        sparse_example_indices=[tf.constant(ex, tf.int64)],
        sparse_feature_indices=[tf.constant(feat, tf.int64)],
        sparse_feature_values=[tf.constant(rng.standard_normal(ex.size).astype(np.float32))],
        dense_features=[tf.constant(rng.standard_normal([n, 8]).astype(np.float32))],
        example_weights=tf.constant(np.ones(n, np.float32)),
        example_labels=tf.constant(rng.standard_normal(n).astype(np.float32)),
        sparse_indices=[tf.constant(np.arange(1000), tf.int64)],
        sparse_weights=[tf.constant(np.zeros(1000, np.float32))],
        dense_weights=[tf.constant(np.zeros(8, np.float32))],
        example_state_data=tf.constant(np.zeros([n, 4], np.float32)),
        loss_type="squared_loss", l1=0.01, l2=1.0, num_loss_partitions=1,
        num_inner_iterations=1)
    ids = tf.constant([f"example_id_{i}".encode() for i in range(10 * n)])
    message = tf.train.Int64List(value=list(range(20))).SerializeToString()
    batch = tf.constant([message] * (2 * n))
    sizes, values = tf.io.decode_proto(batch, "tensorflow.Int64List", ["value"], [tf.int64])
    return {
        f"sdca_optimizer {n} x (10 sparse + 8 dense)":
            lambda: tf.compat.v1.train.sdca_optimizer(**args)[0],
        f"sdca_fprint {10 * n} ids": lambda: tf.compat.v1.train.sdca_fprint(ids),
        f"decode_proto {2 * n} x Int64List[20]": lambda: tf.io.decode_proto(
            batch, "tensorflow.Int64List", ["value"], [tf.int64])[1][0],
        f"encode_proto {2 * n} x Int64List[20]": lambda: tf.io.encode_proto(
            sizes, values, ["value"], "tensorflow.Int64List"),
    }


def _worker(module: str, repeat: int) -> None:
    import numpy as np  # noqa: PLC0415 - the worker's library decides the imports
    tf = __import__(module)
    out = {}
    for scale in (1, 10):
        for name, fn in _cases(tf, np, scale).items():
            fn().numpy()
            best = float("inf")
            for _ in range(repeat if scale == 1 else max(2, repeat // 2)):
                t = time.perf_counter()
                fn().numpy()
                best = min(best, time.perf_counter() - t)
            out[name] = best * 1e3
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--worker")
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, args.repeat)
        return
    from machine import cpu_line  # noqa: PLC0415 - imports torch: not in the TF worker
    print(cpu_line())
    ours, theirs = alternate(__file__, args.rounds, "--repeat", str(args.repeat),
                             env={"TF_CPP_MIN_LOG_LEVEL": "3"})
    print("best ms of one eager call; ratio = ndflow / TF")
    print_ratios(ours, theirs, width=42)


if __name__ == "__main__":
    main()

"""Feature-column preprocessing: one Session step of `tf.compat.v1.feature_column.input_layer`
and `linear_model` over a batch of raw features, ndflow vs TensorFlow (both in subprocesses
running the same program).

    python benchmarks/feature_column_input.py [--batch 256 4096] [--steps 50] [--repeat 3]
                                              [--tf /work/tfvenv/bin/python]

The columns: a numeric column with a normalizer, its bucketized form, a 16-d embedding of a
hashed string column (3 ids per example, 10k buckets), an indicator of a vocabulary-list
column with OOV buckets, and an indicator of a hashed cross of the string and bucketized
columns; linear_model takes the same categorical columns. Inputs are fed (dense strings and
floats), so each step hashes, looks up, crosses and combines. Printed: milliseconds per
step (best of `repeat` runs of `steps` steps).
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

_SCRIPT = r"""
import json, sys, time
import numpy as np
import {module} as tf
batch, steps, repeat = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
fc, v1 = tf.feature_column, tf.compat.v1
rng = np.random.RandomState(0)
words = np.array([("w%d" % i).encode() for i in rng.randint(0, 5000, batch * 3)],
                 dtype=object).reshape(batch, 3)
sizes = np.array([[b"small"], [b"large"], [b"huge"], [b"medium"]] * (batch // 4), dtype=object)
price = rng.uniform(0, 100, [batch, 1]).astype(np.float32)
g = tf.Graph()
with g.as_default():
    w_in = v1.placeholder(tf.string, [None, 3])
    s_in = v1.placeholder(tf.string, [None, 1])
    p_in = v1.placeholder(tf.float32, [None, 1])
    feats = {{"w": w_in, "s": s_in, "p": p_in}}
    p = fc.numeric_column("p", normalizer_fn=lambda x: (x - 50.0) / 30.0)
    pb = fc.bucketized_column(fc.numeric_column("p"), [10.0, 25.0, 50.0, 75.0])
    w = fc.categorical_column_with_hash_bucket("w", 10000)
    s = fc.categorical_column_with_vocabulary_list("s", ["small", "medium", "large"],
                                                   num_oov_buckets=2)
    x = fc.crossed_column(["w", pb], 5000)
    dense = v1.feature_column.input_layer(feats, [
        p, pb, fc.embedding_column(w, 16), fc.indicator_column(s), fc.indicator_column(x)])
    logits = v1.feature_column.linear_model(feats, [p, pb, w, s, x], units=2)
    out = tf.reduce_sum(dense) + tf.reduce_sum(logits)
    sess = v1.Session()
    sess.run([v1.global_variables_initializer(), v1.tables_initializer()])
feed = {{w_in: words, s_in: sizes, p_in: price}}
for _ in range(3):
    sess.run(out, feed)
best = float("inf")
for _ in range(repeat):
    t = time.perf_counter()
    for _ in range(steps):
        v = sess.run(out, feed)
    best = min(best, (time.perf_counter() - t) / steps)
print(json.dumps({{"ms": best * 1e3, "out": float(v)}}))
"""


def measure(python: str, module: str, batch: int, steps: int, repeat: int):
    if not python or not os.path.exists(python):
        return None
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
               TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1", OMP_NUM_THREADS="1",
               PYTHONPATH=os.path.abspath(ROOT))
    code = _SCRIPT.format(module=module)
    return run_json([python, "-c", code, str(batch), str(steps), str(repeat)],
                    module, env=env, timeout=1800)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--batch", type=int, nargs="+", default=[256, 4096])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--repeat", type=int, default=3, help="timed runs (best is printed)")
    p.add_argument("--tf", default="/work/tfvenv/bin/python",
                   help="TensorFlow interpreter ('' to skip)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    print(cpu_line())
    print(f"{'batch':>7}{'ndflow ms':>11}{'tf ms':>9}{'nd/tf':>7}")
    for batch in args.batch:
        nd = measure(sys.executable, "ndflow", batch, args.steps, args.repeat)
        tfr = measure(args.tf, "tensorflow", batch, args.steps, args.repeat)
        line = f"{batch:>7}"
        line += f"{nd['ms']:>11.3f}" if nd else f"{'failed':>11}"
        line += f"{tfr['ms']:>9.3f}" if tfr else f"{'-':>9}"
        line += f"{nd['ms'] / tfr['ms']:>7.2f}" if nd and tfr else f"{'':>7}"
        print(line, flush=True)


if __name__ == "__main__":
    main()

"""Keras preprocessing layers on a text pipeline: ndflow vs TensorFlow's Keras 3.

    python benchmarks/keras_text_preprocessing.py [--docs 8000] [--rounds 3] [--tf PYTHON]

Synthetic documents (60 words each drawn from 3,000, seeded) in a batched tf.data pipeline
(batch 256). Figures, each the best of `rounds` runs (the machine may be shared):
- adapt: TextVectorization(max_tokens=2000, output_sequence_length=80).adapt(dataset);
- map: one pass over `dataset.map(lambda x: vectorize(x))` (int sequences);
- multi_hot: one pass mapping a TextVectorization(output_mode="multi_hot") over it;
- lookup: StringLookup + Normalization-free IntegerLookup-style lookups of 1M tokens, eager.
The same source runs in both interpreters (`--worker MODULE`: `import MODULE as tf`).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time

import numpy as np


def worker(module: str, n_docs: int) -> dict:
    tf = importlib.import_module(module)
    layers = importlib.import_module("keras").layers if module == "tensorflow" \
        else tf.keras.layers
    rng = np.random.default_rng(0)
    words = np.array([f"w{i}" for i in range(3000)])
    docs = [" ".join(rng.choice(words, 60)) + "." for _ in range(n_docs)]
    ds = tf.data.Dataset.from_tensor_slices(docs).batch(256)
    out = {}
    tv = layers.TextVectorization(max_tokens=2000, output_sequence_length=80)
    t = time.perf_counter()
    tv.adapt(ds)
    out["adapt"] = time.perf_counter() - t
    t = time.perf_counter()
    for _ in ds.map(lambda x: tv(x)):
        pass
    out["map"] = time.perf_counter() - t
    mh = layers.TextVectorization(max_tokens=2000, output_mode="multi_hot",
                                  vocabulary=tv.get_vocabulary()[2:])
    t = time.perf_counter()
    for _ in ds.map(lambda x: mh(x)):
        pass
    out["multi_hot"] = time.perf_counter() - t
    lookup = layers.StringLookup(vocabulary=list(words[:2000]))
    tokens = tf.constant(rng.choice(words, (1000, 1000)))
    lookup(tokens)
    t = time.perf_counter()
    lookup(tokens)
    out["lookup"] = time.perf_counter() - t
    return out


def run(python: str, module: str, n_docs: int) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    res = subprocess.run([python, os.path.abspath(__file__), "--worker", module, "--docs",
                          str(n_docs)], capture_output=True, text=True, env=env, timeout=1200)
    if res.returncode != 0:
        print(f"{module} run failed:\n{res.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=8000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.docs)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(run(sys.executable, "ndflow", args.docs))
        if os.path.exists(args.tf):
            theirs.append(run(args.tf, "tensorflow", args.docs))
    ours, theirs = [r for r in ours if r], [r for r in theirs if r]
    if not ours:
        sys.exit("the ndflow run failed")
    print(f"{args.docs} documents x 60 words, batch 256 (best of {args.rounds})")
    for key in ours[0]:
        nd = min(r[key] for r in ours)
        line = f"  {key:10s} ndflow {nd * 1e3:8.1f} ms"
        if theirs:
            tfv = min(r[key] for r in theirs)
            line += f"   TensorFlow {tfv * 1e3:8.1f} ms   ratio {nd / tfv:5.2f}x"
        print(line)


if __name__ == "__main__":
    main()

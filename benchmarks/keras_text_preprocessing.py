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
import time

import numpy as np
from side_by_side import TF_PYTHON, alternate, print_ratios


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



def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=8000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tf", default=TF_PYTHON)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.docs)))
        return
    from machine import cpu_line  # noqa: PLC0415 - imports torch: the parent only

    print(cpu_line())
    ours, theirs = alternate(__file__, args.rounds, "--docs", args.docs, tf_python=args.tf)
    print(f"{args.docs} documents x 60 words, batch 256 (best of {args.rounds})")
    print_ratios(ours, theirs, scale=1e3, width=10, digits=1)


if __name__ == "__main__":
    main()

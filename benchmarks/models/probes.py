"""Keras models nobody here tuned for, written as users write them and trained with `fit`
(Adam unless said), against TensorFlow 2.21 in the same run: the probes behind the
"sessions" tables of docs/performance.md, where each was found trailing or not.

    python benchmarks/models/probes.py [NAME ...] [--rounds 2] [--list]

Each model runs in a fresh ndflow worker and a fresh TensorFlow worker (side_by_side.py),
alternating for `--rounds` rounds; each side keeps its best median step. Printed: the CPU
line, then per model the ndflow and TensorFlow steps (ms) and their ratio.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import probe_zoo_sequences  # noqa: E402, F401 - registers the sequence probes
import side_by_side  # noqa: E402
from probe_zoo import PROBES, Multi  # noqa: E402


def _compile(name, keras, model) -> None:
    losses = keras.losses
    loss = {
        "tutorial": "sparse_categorical_crossentropy",
        "huber": losses.Huber(),
        "autoencoder": "mse",
        "rdgru": "mse",
        "regress": "mse",
        "deconv": "binary_crossentropy",
        "widedeep": losses.BinaryCrossentropy(from_logits=True),
    }.get(name, losses.SparseCategoricalCrossentropy(from_logits=True))
    opt = "adam"
    if name == "adamw":
        opt = keras.optimizers.AdamW(1e-3, weight_decay=0.01)
    elif name == "clipnorm":
        opt = keras.optimizers.Adam(
            keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9), clipnorm=1.0
        )
    model.compile(optimizer=opt, loss=loss, metrics=["accuracy"] if name == "tutorial" else None)


def _fit_arrays(tf, model, x, y, batch: int, epochs: int) -> dict:
    """harness.fit_step for a model of several inputs (a list of arrays)."""
    t0 = time.perf_counter()
    model.fit([a[:batch] for a in x], y[:batch], batch_size=batch, epochs=1, verbose=0)
    first = time.perf_counter() - t0
    stamps = harness.stamp_callback(tf)
    model.fit(list(x), y, batch_size=batch, epochs=epochs, verbose=0, callbacks=[stamps])
    return {"first_s": first, "step_ms": harness.median_ms(stamps.stamps)}


def run(tf, name: str, epochs: int = 3) -> dict:
    keras = tf.keras
    keras.utils.set_random_seed(1)
    batch, _, x, y, model = PROBES[name](name, tf, keras, keras.layers, np.random.default_rng(0))
    _compile(name, keras, model)
    if isinstance(x, Multi):
        arrays = [list.__getitem__(x, i) for i in range(list.__len__(x))]
        return _fit_arrays(tf, model, arrays, y, batch, epochs)
    return harness.measure(tf, harness.FitWorkload(model, x, y, batch), epochs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="probes to run (default: all)")
    parser.add_argument("--worker")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--list", action="store_true", help="print the probes and exit")
    args = parser.parse_args()
    if args.list:
        for n, fn in PROBES.items():
            print(f"{n:12s} {fn.__doc__}")
        return
    unknown = [n for n in args.names if n not in PROBES]
    if unknown:
        parser.error(f"unknown probes {unknown}; --list names them")
    if args.worker:
        print(json.dumps(run(importlib.import_module(args.worker), args.names[0])))
        return
    from machine import cpu_line

    print(cpu_line())
    print(f"{'model':12s} {'ndflow ms':>10s} {'TF ms':>10s} {'ratio':>6s}")
    for name in args.names or list(PROBES):
        ours, theirs = side_by_side.alternate(__file__, args.rounds, name)
        mine = ours["step_ms"] if ours else float("nan")
        tf_ms = theirs["step_ms"] if theirs else float("nan")
        print(f"{name:12s} {mine:10.2f} {tf_ms:10.2f} {mine / tf_ms:6.2f}", flush=True)


if __name__ == "__main__":
    main()

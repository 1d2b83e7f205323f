"""What an unknown batch dimension costs a `tf.function` training step, and what compiling
its plan for the shapes it is called with gives back (passes/shape_specialization.py).

    python benchmarks/shape_specialization.py [--rounds 8]

The Transformer classifier of benchmarks/models/transformer_classifier.py, trained by a
custom `tf.function` step (GradientTape, Keras Adam) as TF2 loops write it with an
`input_signature`: once with the batch dimension None (the usual signature, so the step
never retraces), once with it fixed at 32, and the None one again with the specialization
switched off (`tf.config.optimizer.set_experimental_options({"shape_specialization":
False})`), its plan the generic one. Each configuration runs one epoch (30 batches) in turn
per round, after two warm-up epochs; the figure is the median ms per step.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))

import machine  # noqa: E402
import transformer_classifier as model_def  # noqa: E402

import ndflow as tf  # noqa: E402

OFF = {"shape_specialization": False}


def make_step(model, batch):
    optimizer = tf.keras.optimizers.Adam()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    sig = [tf.TensorSpec([batch, model_def.MAXLEN], tf.int32), tf.TensorSpec([batch], tf.int32)]
    return tf.function(step, input_signature=sig)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args(argv)
    print(machine.cpu_line())
    batch, n = model_def.BATCH, model_def.BATCHES
    work = model_def.setup(tf)
    xs = [tf.constant(work.x[i * batch:(i + 1) * batch]) for i in range(n)]
    ys = [tf.constant(work.y[i * batch:(i + 1) * batch]) for i in range(n)]
    runs = {"batch None, specialized": (make_step(work.model, None), {}),
            "batch 32 in the signature": (make_step(work.model, batch), {}),
            "batch None, generic plan": (make_step(work.model, None), OFF)}

    def epoch(step, options):
        tf.config.optimizer.set_experimental_options(options or {k: True for k in OFF})
        start = time.perf_counter()
        for x, y in zip(xs, ys):
            step(x, y).numpy()
        return (time.perf_counter() - start) / n * 1e3

    for step, options in runs.values():
        epoch(step, options)
        epoch(step, options)
    times = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (step, options) in runs.items():
            times[name].append(epoch(step, options))
    tf.config.optimizer.set_experimental_options({k: True for k in OFF})
    base = statistics.median(times["batch 32 in the signature"])
    for name, t in times.items():
        ms = statistics.median(t)
        print(f"  {name:28s} {ms:7.2f} ms/step   {ms / base:5.2f}x the fixed batch")


if __name__ == "__main__":
    main()

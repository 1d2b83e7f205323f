"""A tf.distribute strategy's cost on one machine: Keras `fit` and a custom `strategy.run` step
of an MLP (784-512-512-10, global batch 256) on 2 logical CPU devices vs the same without a
strategy, in ndflow and in TensorFlow. `--strategy mirrored` (MirroredStrategy: towers,
splitting, the all-reduce) or `central_storage` (CentralStorageStrategy: variables on the CPU,
the aggregated update).

    python benchmarks/strategy_overhead.py [--strategy mirrored] [--steps 30] [--rounds 2]

Logical CPU devices share the same cores, so a strategy cannot be faster here: the figures
measure its overhead (for `strategy.run`, TF's replica threads and merge_call too). Each figure
is the median ms/step over `steps` steps after a warm-up epoch, the best of `rounds` runs;
ndflow and TensorFlow run the same source in separate interpreters, alternating
(benchmarks/side_by_side.py).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from side_by_side import TF_PYTHON, alternate

STRATEGIES = {"mirrored": "MirroredStrategy",
              "central_storage": "experimental.CentralStorageStrategy"}
BATCH = 256


def worker(module: str, steps: int, kind: str) -> dict:
    tf = __import__(module)
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    make = tf.distribute
    for part in STRATEGIES[kind].split("."):
        make = getattr(make, part)
    strategy = make(["/cpu:0", "/cpu:1"])
    rng = np.random.RandomState(0)
    x = rng.randn(BATCH * steps, 784).astype(np.float32)
    y = rng.randint(0, 10, BATCH * steps).astype(np.int32)

    def model():
        tf.keras.utils.set_random_seed(0)
        m = tf.keras.Sequential([tf.keras.Input((784,)), tf.keras.layers.Dense(512, "relu"),
                                 tf.keras.layers.Dense(512, "relu"), tf.keras.layers.Dense(10)])
        m.compile(tf.keras.optimizers.SGD(0.01),
                  tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return m

    class StepTimes(tf.keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.times = [time.perf_counter()]

        def on_train_batch_end(self, batch, logs=None):
            self.times.append(time.perf_counter())

    def fit_ms(m):
        cb = StepTimes()
        m.fit(x, y, batch_size=BATCH, epochs=2, shuffle=False, verbose=0, callbacks=[cb])
        return float(np.median(np.diff(cb.times[1:]))) * 1e3  # the second epoch's steps

    out = {"version": tf.__version__, "fit_single_ms": fit_ms(model())}
    with strategy.scope():
        distributed = model()
    out["fit_strategy_ms"] = fit_ms(distributed)

    with strategy.scope():
        m = model()
        opt = tf.keras.optimizers.SGD(0.01)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")

    def replica_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, m(xb, training=True)) / BATCH
        grads = tape.gradient(loss, m.trainable_variables)
        opt.apply_gradients(zip(grads, m.trainable_variables))
        return loss

    @tf.function
    def train_step(batch):
        return strategy.reduce("SUM", strategy.run(replica_step, args=batch), axis=None)

    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)
    batches = list(strategy.experimental_distribute_dataset(ds))
    train_step(batches[0]).numpy()
    times = []
    for b in batches:
        start = time.perf_counter()
        train_step(b).numpy()
        times.append(time.perf_counter() - start)
    out["run_strategy_ms"] = float(np.median(times)) * 1e3
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strategy", choices=sorted(STRATEGIES), default="mirrored")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=TF_PYTHON)
    ap.add_argument("--worker", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps, args.strategy)))
        return
    from machine import cpu_line  # noqa: PLC0415 - imports torch: the parent only

    print(cpu_line())
    best_ours, best_theirs = alternate(__file__, args.rounds, "--steps", args.steps,
                                       "--strategy", args.strategy, tf_python=args.tf)
    print(f"MLP 784-512-512-10, global batch {BATCH}, 2 logical CPU devices, "
          f"tf.distribute.{STRATEGIES[args.strategy]}, median ms/step, best of {args.rounds}")
    rows = [("ndflow", best_ours)] + ([(f"TensorFlow {best_theirs['version']}", best_theirs)]
                                      if best_theirs else [])
    for name, r in rows:
        print(f"  {name:18s} fit {r['fit_single_ms']:7.2f}   fit with the strategy "
              f"{r['fit_strategy_ms']:7.2f} ({r['fit_strategy_ms'] / r['fit_single_ms']:.2f}x)"
              f"   strategy.run step {r['run_strategy_ms']:7.2f}")
    if best_theirs:
        for key in ("fit_single_ms", "fit_strategy_ms", "run_strategy_ms"):
            print(f"  ndflow / TF {key[:-3]:16s} {best_ours[key] / best_theirs[key]:5.2f}x")
    else:
        print("  TensorFlow: not available")


if __name__ == "__main__":
    main()

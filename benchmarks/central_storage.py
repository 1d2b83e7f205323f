"""CentralStorageStrategy's cost on one machine: Keras `fit` and a custom `strategy.run` step
of an MLP (784-512-512-10, global batch 256) on 2 logical CPU compute devices, variables on
the CPU, vs the same without a strategy, in ndflow and in TensorFlow.

    python benchmarks/central_storage.py [--steps 30] [--rounds 2] [--tf PYTHON]

Logical CPU devices share the cores, so the figures measure the strategy's overhead (replica
threads, merge_call, the aggregated update). Each figure is the median ms/step after a warm-up,
the best of `rounds` runs; ndflow and TensorFlow run the same source in separate interpreters
(`--worker MODULE`), alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

BATCH = 256


def worker(module: str, steps: int) -> dict:
    tf = __import__(module)
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
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
        central = model()
    out["fit_central_ms"] = fit_ms(central)

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
    out["run_central_ms"] = float(np.median(times)) * 1e3
    return out


def run_worker(python: str, module: str, steps: int) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    res = subprocess.run([python, os.path.abspath(__file__), "--worker", module,
                          "--steps", str(steps)], capture_output=True, text=True, env=env,
                         timeout=1800, cwd="/tmp")
    if res.returncode != 0:
        print(f"{module} run failed:\n{res.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def _best(runs: list) -> dict | None:
    runs = [r for r in runs if r]
    if not runs:
        return None
    return {k: (min(r[k] for r in runs) if k.endswith("_ms") else runs[0][k]) for k in runs[0]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(run_worker(sys.executable, "ndflow", args.steps))
        if os.path.exists(args.tf):
            theirs.append(run_worker(args.tf, "tensorflow", args.steps))
    best_ours, best_theirs = _best(ours), _best(theirs)
    if best_ours is None:
        sys.exit("the ndflow run failed")
    print(f"MLP 784-512-512-10, global batch {BATCH}, 2 logical CPU compute devices, median "
          f"ms/step, best of {args.rounds} rounds")
    rows = [("ndflow", best_ours)] + ([(f"TensorFlow {best_theirs['version']}", best_theirs)]
                                      if best_theirs else [])
    for name, r in rows:
        print(f"  {name:18s} fit {r['fit_single_ms']:7.2f}   fit central storage "
              f"{r['fit_central_ms']:7.2f} ({r['fit_central_ms'] / r['fit_single_ms']:.2f}x)"
              f"   strategy.run step {r['run_central_ms']:7.2f}")
    if best_theirs:
        for key in ("fit_single_ms", "fit_central_ms", "run_central_ms"):
            print(f"  ndflow / TF {key[:-3]:16s} {best_ours[key] / best_theirs[key]:5.2f}x")
    else:
        print("  TensorFlow: not available")


if __name__ == "__main__":
    main()

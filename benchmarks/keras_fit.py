"""Keras `fit` and `predict` on the MNIST example's CNN: ndflow vs its own bare training step
and vs TensorFlow's Keras on the same model, weights and data.

    python benchmarks/keras_fit.py [--steps 50] [--epochs 3] [--rounds 2] [--tf PYTHON]

The model is ndflow/models/image/mnist/keras_convolutional.py's (conv 5x5x32, pool, conv
5x5x64, pool, dense 512 + dropout, dense 10, L2 on the dense layers; SGD with momentum,
sparse categorical cross-entropy from logits, metrics=["accuracy"]), trained at batch 64 on
the bundled digits (tiled to `steps` batches per epoch). Figures, each a median:
- bare step: a `tf.function` doing forward, loss (with the L2 terms), gradient and the SGD
  update on ready-made batch tensors, the loss fetched every step (as fit's logs are);
- fit: the time per step inside `model.fit(..., verbose=0)` (between consecutive
  `on_train_batch_end` calls, so it counts slicing the batch, the step, the metrics and the
  callbacks);
both over `epochs` epochs after a warm-up one, the bare step's and fit's epochs alternating;
- predict: `model.predict` on 10,000 digits (Keras' default batch size 32), after a warm-up
  call.
Bars (issue 9): fit <= 1.10x the bare step; ndflow's fit <= 0.8x TensorFlow's fit; ndflow's
predict <= 0.8x TensorFlow's predict.

The same source runs in both interpreters (`--worker MODULE`: `import MODULE as tf`), one
after the other, each `rounds` times, alternating; a figure is the best of its rounds (the
machine may be shared). The parent makes the data and the initial weights once, so both start
from the same point.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

BATCH = 64
PREDICT_SIZE = 10_000
SEED = 66478
LAYER_SHAPES = [(5, 5, 1, 32), (32,), (5, 5, 32, 64), (64,), (3136, 512), (512,),
                (512, 10), (10,)]


# -- FLOPs -----------------------------------------------------------------------------------

def forward_flops(batch: int) -> dict:
    """Multiply-adds x2 of the convolutions and matmuls (elementwise ops not counted)."""
    return {"conv1": 2 * batch * 28 * 28 * 32 * 5 * 5 * 1,
            "conv2": 2 * batch * 14 * 14 * 64 * 5 * 5 * 32,
            "dense": 2 * batch * 3136 * 512,
            "dense_1": 2 * batch * 512 * 10}


def train_flops(batch: int) -> int:
    """Forward + weight gradients (as much as the forward) + input gradients (every layer
    but the first)."""
    f = forward_flops(batch)
    return 3 * sum(f.values()) - f["conv1"]


# -- the worker: runs under ndflow or TensorFlow -----------------------------------------------

def build_model(keras):
    """keras_convolutional.build_model, repeated here so that TensorFlow can run it too."""
    def l2():
        return keras.regularizers.L2(5e-4 / 2)

    return keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(32, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2, padding="same"),
        keras.layers.Conv2D(64, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2, padding="same"),
        keras.layers.Flatten(),
        keras.layers.Dense(512, activation="relu", kernel_regularizer=l2(),
                           bias_regularizer=l2()),
        keras.layers.Dropout(0.5, seed=SEED),
        keras.layers.Dense(10, kernel_regularizer=l2(), bias_regularizer=l2()),
    ])


def _compiled(tf, weights):
    keras = tf.keras
    model = build_model(keras)
    model.set_weights(weights)
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.SGD(0.01, momentum=0.9), metrics=["accuracy"])
    return model


def _bare_step(tf, weights, x, y):
    """A function running one epoch of the bare training step; returns its step times."""
    model = _compiled(tf, weights)
    loss_fn, opt = model.loss, model.optimizer
    batches = [(tf.constant(x[i:i + BATCH]), tf.constant(y[i:i + BATCH]))
               for i in range(0, len(x), BATCH)]

    @tf.function
    def step(data, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(data, training=True)) + tf.add_n(model.losses)
        variables = model.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    def epoch():
        times = []
        for data, labels in batches:
            t = time.perf_counter()
            step(data, labels).numpy()
            times.append(time.perf_counter() - t)
        return times

    return epoch


def _fit(tf, weights, x, y):
    """A function running one epoch of `fit`; returns its step times (and the model)."""
    model = _compiled(tf, weights)
    ends: list[float] = []

    class StepTimes(tf.keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            ends.clear()

        def on_train_batch_end(self, batch, logs=None):
            ends.append(time.perf_counter())

    callbacks = [StepTimes()]

    def epoch():
        model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, callbacks=callbacks)
        # Between consecutive batch ends (so step 0, which holds the epoch's start, is out).
        return [b - a for a, b in zip(ends, ends[1:])]

    return epoch, model


def _train_ms(tf, weights, x, y, epochs: int) -> tuple[float, float, float]:
    """(bare step ms, fit ms per step, fit's last training accuracy): a warm-up epoch of
    each (tracing), then `epochs` epochs of each, alternating, so that a change in the
    machine's load hits both alike."""
    bare_epoch = _bare_step(tf, weights, x, y)
    fit_epoch, model = _fit(tf, weights, x, y)
    bare_epoch()
    fit_epoch()
    bare, fit = [], []
    for _ in range(epochs):
        bare += bare_epoch()
        fit += fit_epoch()
    accuracy = float(model.history.history["accuracy"][-1])
    return 1000 * float(np.median(bare)), 1000 * float(np.median(fit)), accuracy


def _predict_ms(tf, weights, x, repeat: int = 3) -> float:
    model = _compiled(tf, weights)
    model.predict(x, verbose=0)  # warm-up (tracing)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        model.predict(x, verbose=0)
        times.append(time.perf_counter() - t)
    return 1000 * float(np.median(times))


def worker(module: str, data_path: str, epochs: int) -> dict:
    tf = __import__(module)
    np.random.seed(SEED)
    tf.random.set_seed(SEED)
    d = np.load(data_path)
    weights = [d[f"w{i}"] for i in range(len(LAYER_SHAPES))]
    x, y, px = d["x"], d["y"], d["predict_x"]
    bare_ms, fit_ms, accuracy = _train_ms(tf, weights, x, y, epochs)
    return {"version": tf.__version__, "bare_ms": bare_ms, "fit_ms": fit_ms,
            "fit_accuracy": accuracy,
            "predict_ms": _predict_ms(tf, weights, px)}


# -- the parent ------------------------------------------------------------------------------

def make_data(path: str, steps: int) -> None:
    """The digits (tiled to `steps` batches; 10,000 for predict) and Glorot-uniform weights."""
    from ndflow.data.digits import load_digits  # only the parent imports ndflow
    from ndflow.models.image.mnist.dataset import normalize

    splits = load_digits()
    n = steps * BATCH
    reps = -(-n // len(splits.train))
    x = np.tile(normalize(splits.train.images), (reps, 1, 1, 1))[:n]
    y = np.tile(splits.train.labels, reps)[:n]
    everything = normalize(np.concatenate([splits.train.images, splits.validation.images,
                                           splits.test.images]))
    predict_x = np.tile(everything, (-(-PREDICT_SIZE // len(everything)), 1, 1, 1))
    rng = np.random.default_rng(SEED)
    weights = {}
    for i, shape in enumerate(LAYER_SHAPES):
        if len(shape) == 1:
            weights[f"w{i}"] = np.zeros(shape, np.float32)
        else:
            fan_in = int(np.prod(shape[:-1]))
            fan_out = shape[-1] * (int(np.prod(shape[:-2])) if len(shape) == 4 else 1)
            limit = np.sqrt(6 / (fan_in + fan_out))
            weights[f"w{i}"] = rng.uniform(-limit, limit, shape).astype(np.float32)
    np.savez(path, x=x, y=y, predict_x=predict_x[:PREDICT_SIZE], **weights)


def run_worker(python: str, module: str, data_path: str, epochs: int) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", module, data_path,
                          "--epochs", str(epochs)], capture_output=True, text=True, env=env,
                         timeout=1800)
    if out.returncode != 0:
        print(f"{module} run failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(runs: list[dict]) -> dict | None:
    runs = [r for r in runs if r]
    if not runs:
        return None
    best = dict(runs[0])
    for key in ("bare_ms", "fit_ms", "predict_ms"):
        best[key] = min(r[key] for r in runs)
    return best


def _bar(ratio: float, limit: float) -> str:
    return f"{ratio:5.2f}x (bar <= {limit:.2f}x: {'ok' if ratio <= limit else 'MISSED'})"


def report(ours: list, theirs: list, steps: int, epochs: int) -> None:
    """The best of the rounds for each figure, its ratios against the bars, and the same
    ratios round by round (how much the machine's load moved them)."""
    best_ours, best_theirs = _best(ours), _best(theirs)
    flops = train_flops(BATCH)
    print(f"MNIST CNN (keras_convolutional), batch {BATCH}, {steps} steps/epoch, medians over "
          f"{epochs} epochs after a warm-up one, best of {len(ours)} rounds; "
          f"{flops / 1e9:.3f} GFLOP per training step, "
          f"{sum(forward_flops(1).values()) * PREDICT_SIZE / 1e9:.2f} GFLOP per predict")
    rows = [("ndflow", best_ours)]
    if best_theirs:
        rows.append((f"TensorFlow {best_theirs['version']}", best_theirs))
    for name, r in rows:
        print(f"  {name:18s} bare step {r['bare_ms']:7.2f} ms ({flops / r['bare_ms'] / 1e6:5.1f} "
              f"GFLOP/s)   fit {r['fit_ms']:7.2f} ms/step ({flops / r['fit_ms'] / 1e6:5.1f} "
              f"GFLOP/s, accuracy {r['fit_accuracy']:.3f})   predict 10k "
              f"{r['predict_ms']:8.1f} ms")

    def line(label, ratio, limit=None, per_round=None):
        text = f"{ratio:5.2f}x"
        if limit:
            text += f" (bar <= {limit:.2f}x: {'ok' if ratio <= limit else 'MISSED'})"
        if per_round:
            text += "   rounds: " + ", ".join(f"{r:.2f}" for r in per_round)
        print(f"  {label + ':':33s}{text}")

    line("ndflow fit / ndflow bare step", best_ours["fit_ms"] / best_ours["bare_ms"], 1.1,
         [o["fit_ms"] / o["bare_ms"] for o in ours if o])
    if best_theirs:
        line("TF fit / TF bare step", best_theirs["fit_ms"] / best_theirs["bare_ms"])
        pairs = [(o, t) for o, t in zip(ours, theirs) if o and t]
        for label, key, limit in (("ndflow fit / TF fit", "fit_ms", 0.8),
                                  ("ndflow predict / TF predict", "predict_ms", 0.8),
                                  ("ndflow bare step / TF bare step", "bare_ms", None)):
            line(label, best_ours[key] / best_theirs[key], limit,
                 [o[key] / t[key] for o, t in pairs])
    if not best_theirs:
        print("  TensorFlow: not available")
    from machine import floor_line  # imports torch: the parent only, never a worker
    print(floor_line(flops, "training step"))
    if best_theirs:
        print(f"  a 0.80x bar on TF's fit asks for {0.8 * best_theirs['fit_ms']:.2f} ms/step")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50, help="batches per epoch")
    ap.add_argument("--epochs", type=int, default=3, help="timed epochs after a warm-up one")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each, alternating")
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", nargs=2, metavar=("MODULE", "DATA"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.epochs)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    have_tf = os.path.exists(args.tf)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        make_data(path, args.steps)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run_worker(sys.executable, "ndflow", path, args.epochs))
            if have_tf:
                theirs.append(run_worker(args.tf, "tensorflow", path, args.epochs))
    if _best(ours) is None:
        sys.exit("the ndflow run failed")
    report(ours, theirs, args.steps, args.epochs)


if __name__ == "__main__":
    main()

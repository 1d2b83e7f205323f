"""A `tf.data` input pipeline on TFRecord files: ndflow vs TensorFlow's own `tf.data` on the
same files in the same run, and what the pipeline costs Keras `fit`.

    python benchmarks/input_pipeline.py [--images 10240] [--epochs 2] [--rounds 2] [--tf PYTHON]
                                        [--env KEY=VALUE]

Data: the bundled UCI digits scaled to MNIST's 28x28 uint8 format, tiled to `images`, written
once by ndflow's `tf.io.TFRecordWriter` as `tf.train.Example`s ("image": the 784 raw bytes,
"label": int64) — so TensorFlow reads ndflow-written files. Figures (best of rounds; within a
round, the best of `epochs` passes after a warm-up pass):

- images/s of two pipelines, each TFRecord read -> parse -> decode_raw -> augment (cast,
  scale to [0, 1], random left-right flip, uniform noise) -> shuffle(1000) -> batch(128) ->
  prefetch(AUTOTUNE):
  * per-example: `map(parse_single_example + ..., num_parallel_calls=AUTOTUNE)` before
    `batch` (the tutorial's form);
  * vectorized: `shuffle`, `batch`, then `map(parse_example + ..., AUTOTUNE)` on batches
    (the form TensorFlow's performance guide recommends);
  bar (issue 10): ndflow >= 0.8x TensorFlow's images/s.
- fit: seconds per epoch (best of `epochs`, after a warm-up epoch, in one `fit` call) of a
  small CNN's `fit` fed by the vectorized pipeline vs `fit` on the same images as in-memory
  arrays (bar: within 10%); and fed by a pipeline whose `map` also
  does extra work calibrated to cost about one training step per batch, with
  `num_parallel_calls=AUTOTUNE` and `prefetch(AUTOTUNE)` (bar, issue 53: its ratio to
  in-memory `fit` <= TensorFlow's ratio in the same run), and by one whose map waits about a
  step without using CPU (bar: within 10% of in-memory).

The same source runs in both interpreters (`--worker MODULE`: `import MODULE as tf`), one
after the other, `rounds` times, alternating (the machine may be shared).
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

BATCH = 128
SHUFFLE = 1000
SEED = 1234
MAX_REPS = 400


# -- the worker: runs under ndflow or TensorFlow ---------------------------------------------

def _augment(tf, pixels, batched: bool):
    """uint8 pixels -> float32 in [0, 1], randomly flipped left-right, with a little noise."""
    shape = [-1, 28, 28, 1] if batched else [28, 28, 1]
    x = tf.cast(tf.reshape(pixels, shape), tf.float32) / 255.0
    flip_shape = tf.stack([tf.shape(x)[0], 1, 1, 1]) if batched else [1, 1, 1]
    flip = tf.random.uniform(flip_shape) < 0.5
    x = tf.where(flip, tf.reverse(x, axis=[-2]), x)
    return x + tf.random.uniform(tf.shape(x), -0.01, 0.01)


def _features(tf):
    return {"image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)}


def per_example_pipeline(tf, path):
    features = _features(tf)

    def parse(record):
        f = tf.io.parse_single_example(record, features)
        return _augment(tf, tf.io.decode_raw(f["image"], tf.uint8), False), f["label"]

    return (tf.data.TFRecordDataset(path)
            .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
            .shuffle(SHUFFLE, seed=SEED).batch(BATCH).prefetch(tf.data.AUTOTUNE))


def vectorized_pipeline(tf, path, extra_work: int = 0, wait_s: float = 0.0):
    features = _features(tf)

    def wait(x):  # latency without CPU work (a remote read, a disk seek): the GIL is released
        time.sleep(wait_s)
        return x

    def parse(records):
        f = tf.io.parse_example(records, features)
        x = _augment(tf, tf.io.decode_raw(f["image"], tf.uint8), True)
        if extra_work:  # work costing about a training step (calibrated by the caller)
            y = x
            for _ in range(extra_work):
                y = tf.tanh(tf.matmul(tf.reshape(y, [-1, 28]), tf.ones([28, 28]) / 28.0))
            x = x + 0.0 * tf.reshape(y, tf.shape(x))
        if wait_s:
            x = tf.ensure_shape(tf.py_function(wait, [x], tf.float32), [None, 28, 28, 1])
        return x, f["label"]

    return (tf.data.TFRecordDataset(path).shuffle(SHUFFLE, seed=SEED).batch(BATCH)
            .map(parse, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE))


def _images_per_second(dataset, epochs: int, cpu: list | None = None) -> float:
    """Best images/s of `epochs` passes; `cpu` gets the process CPU-seconds per image of
    the best pass (all threads: the pipeline's work whatever thread did it)."""
    for _ in dataset:  # warm-up: traces the map function, fills caches
        pass
    best = 0.0
    for _ in range(epochs):
        t, c, n = time.perf_counter(), time.process_time(), 0
        for x, _ in dataset:
            n += int(x.shape[0])
        rate = n / (time.perf_counter() - t)
        if rate > best:
            best = rate
            if cpu is not None:
                cpu[:] = [(time.process_time() - c) / n]
    return best


def build_model(keras):
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(16, 3, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10),
    ])


def _fit_seconds(tf, weights, data, epochs: int, labels=None) -> tuple:
    """(wall, CPU) seconds of the best epoch of `fit` on a dataset or arrays: one `fit`
    call of a warm-up epoch and `epochs` timed ones, each timed from its on_epoch_begin to
    its on_epoch_end (so the data adapter's one-time set-up is out; each epoch's fresh pass
    is in). CPU: the process's CPU-seconds (every thread) in that epoch."""
    keras = tf.keras
    model = build_model(keras)
    model.set_weights(weights)
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.SGD(0.01), metrics=["accuracy"])
    times: list = []

    class EpochTimes(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.start = (time.perf_counter(), time.process_time())

        def on_epoch_end(self, epoch, logs=None):
            times.append((time.perf_counter() - self.start[0],
                          time.process_time() - self.start[1]))

    kwargs = {} if labels is None else {"batch_size": BATCH, "shuffle": True}
    model.fit(data, labels, epochs=1 + epochs, verbose=0, callbacks=[EpochTimes()], **kwargs)
    return min(times[1:])


def _calibrate_extra_work(tf, path, step_s: float) -> int:  # noqa: ARG001
    """Repetitions of the extra map work whose pipeline alone costs about `step_s` a batch."""
    def per_batch(reps):
        return 1.0 / _images_per_second(vectorized_pipeline(tf, path, reps), 1) * BATCH

    base = per_batch(0)
    probe = 32
    # floor the measured cost: on a busy machine a noisy probe could ask for thousands of
    # repetitions (a huge graph that TensorFlow then spends minutes optimizing)
    cost = max(per_batch(probe) - base, 2e-5 * probe) / probe
    return max(1, min(MAX_REPS, int(round(max(step_s - base, 0.0) / cost))))


def _progress(what: str, value) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {what}: {value}", file=sys.stderr, flush=True)


def worker(module: str, data_path: str, epochs: int) -> dict:
    tf = __import__(module)
    tf.random.set_seed(SEED)
    d = np.load(data_path)
    path, x, y = str(d["path"]), d["x"], d["y"]
    weights = [d[f"w{i}"] for i in range(len([k for k in d.files if k.startswith("w")]))]
    out = {"version": tf.__version__,
           "per_example": _images_per_second(per_example_pipeline(tf, path), epochs),
           "vectorized": _images_per_second(vectorized_pipeline(tf, path), epochs)}
    _progress("pipelines", out)
    xs = (x.astype(np.float32) / 255.0)[..., None]
    steps = -(-len(x) // BATCH)
    out["fit_arrays_s"], out["fit_arrays_cpu"] = _fit_seconds(tf, weights, xs, epochs, y)
    _progress("fit on arrays", out["fit_arrays_s"])
    out["fit_pipeline_s"], out["fit_pipeline_cpu"] = _fit_seconds(
        tf, weights, vectorized_pipeline(tf, path), epochs)
    _progress("fit on the pipeline", out["fit_pipeline_s"])
    step_s = min(out["fit_arrays_s"], out["fit_pipeline_s"]) / steps
    reps = _calibrate_extra_work(tf, path, step_s)
    out["extra_work_reps"] = reps
    _progress("extra map work repetitions", reps)
    cpu: list = []
    out["extra_map_s_per_batch"] = BATCH / _images_per_second(
        vectorized_pipeline(tf, path, reps), 1, cpu)
    out["extra_map_cpu_per_batch"] = cpu[0] * BATCH
    out["fit_heavy_map_s"], out["fit_heavy_map_cpu"] = _fit_seconds(
        tf, weights, vectorized_pipeline(tf, path, reps), epochs)
    _progress("fit with a step-sized map", out["fit_heavy_map_s"])
    # the same step-sized cost as latency (no CPU): what prefetching can hide on any machine
    out["wait_s_per_batch"] = step_s
    out["fit_wait_map_s"], out["fit_wait_map_cpu"] = _fit_seconds(
        tf, weights, vectorized_pipeline(tf, path, wait_s=step_s), epochs)
    _progress("fit with a step-long wait in the map", out["fit_wait_map_s"])
    return out


# -- the parent ------------------------------------------------------------------------------

def make_data(tmp: str, images: int) -> tuple[str, int]:
    """The TFRecord file (written by ndflow) and an .npz with the same images for `fit` and
    the initial weights; returns (npz path, bytes per image on disk)."""
    import ndflow as tf  # only the parent imports ndflow
    from ndflow.data.digits import load_digits

    splits = load_digits()
    pixels = np.concatenate([splits.train.images, splits.validation.images,
                             splits.test.images])
    labels = np.concatenate([splits.train.labels, splits.validation.labels,
                             splits.test.labels])
    reps = -(-images // len(pixels))
    pixels = np.tile(pixels, (reps, 1, 1))[:images].astype(np.uint8)
    labels = np.tile(labels, reps)[:images].astype(np.int64)
    path = os.path.join(tmp, "digits.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for im, label in zip(pixels, labels):
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[im.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
            })).SerializeToString())
    model = build_model(tf.keras)
    weights = {f"w{i}": np.asarray(w) for i, w in enumerate(model.get_weights())}
    npz = os.path.join(tmp, "data.npz")
    np.savez(npz, path=path, x=pixels, y=labels, **weights)
    return npz, os.path.getsize(path) // images


def run_worker(python: str, module: str, data_path: str, epochs: int,
               extra_env: dict) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **extra_env)
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", module, data_path,
                          "--epochs", str(epochs)], capture_output=True, text=True, env=env,
                         timeout=1800, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        print(f"{module} run failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(runs: list) -> dict | None:
    runs = [r for r in runs if r]
    if not runs:
        return None
    best = dict(runs[0])
    for key in ("per_example", "vectorized"):
        best[key] = max(r[key] for r in runs)
    for key in ("fit_arrays", "fit_pipeline", "fit_heavy_map", "fit_wait_map"):
        fastest = min(runs, key=lambda r, key=key: r[key + "_s"])
        best[key + "_s"], best[key + "_cpu"] = fastest[key + "_s"], fastest[key + "_cpu"]
    return best


def _check(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def report(ours: list, theirs: list, images: int, record_bytes: int) -> None:
    o, t = _best(ours), _best(theirs)
    print(f"{images} MNIST-format images (28x28 uint8 = 784 pixel bytes; {record_bytes} bytes "
          f"per image as a TFRecord'ed tf.train.Example), batch {BATCH}, shuffle {SHUFFLE}; "
          f"best of {len(ours)} rounds")
    rows = [("ndflow", o)] + ([(f"TensorFlow {t['version']}", t)] if t else [])
    for name, r in rows:
        print(f"  {name:18s} images/s: per-example {r['per_example']:7.0f}, vectorized "
              f"{r['vectorized']:7.0f};  fit s/epoch: arrays {r['fit_arrays_s']:.2f}, pipeline "
              f"{r['fit_pipeline_s']:.2f}, step-sized map {r['fit_heavy_map_s']:.2f} (the map "
              f"{1000 * r['extra_map_s_per_batch']:.1f} ms/batch), step-long wait "
              f"{r['fit_wait_map_s']:.2f} ({1000 * r['wait_s_per_batch']:.1f} ms/batch)")
    if t:
        for key, label in (("per_example", "per-example"), ("vectorized", "vectorized")):
            ratio = o[key] / t[key]
            rounds = ", ".join(f"{a[key] / b[key]:.2f}" for a, b in zip(ours, theirs) if a and b)
            print(f"  ndflow / TF images/s, {label + ':':13s} {ratio:5.2f}x "
                  f"(bar >= 0.80x: {_check(ratio >= 0.8)})   rounds: {rounds}")
    if t:
        # the bars above are relative to each library's own fit on arrays; what a user waits
        # for is the epoch itself
        print("  ndflow / TF seconds per epoch: " + ", ".join(
            f"{label} {o[key + '_s'] / t[key + '_s']:.2f}x" for key, label in (
                ("fit_arrays", "fit on arrays"), ("fit_pipeline", "fit fed by the pipeline"),
                ("fit_heavy_map", "with a step-sized map"),
                ("fit_wait_map", "with a step-long wait"))))
    cores = os.cpu_count() or 1
    heavy_tf = t["fit_heavy_map_s"] / t["fit_arrays_s"] if t else None
    for name, r in rows:
        p = r["fit_pipeline_s"] / r["fit_arrays_s"]
        h = r["fit_heavy_map_s"] / r["fit_arrays_s"]
        w = r["fit_wait_map_s"] / r["fit_arrays_s"]
        # issue 53: the step-sized map's ratio against TensorFlow's own in the same run (no
        # schedule on 2 cores meets an absolute bar); the wait-only map's within 10%
        heavy_bar = (f"bar <= TF's {heavy_tf:.2f}x: {_check(h <= heavy_tf)}"
                     if heavy_tf and r is o else "")
        print(f"  {name}: fit fed by the pipeline / on arrays {p:5.2f}x (bar <= 1.10x: "
              f"{_check(p <= 1.1)});  with a step-sized map {h:5.2f}x ({heavy_bar});  "
              f"with a step-long wait in the map {w:5.2f}x (bar <= 1.10x: {_check(w <= 1.1)})")
        # CPU-seconds per epoch: the step's (fit on arrays) + the heavy map's alone; no
        # schedule of `cores` cores runs that work faster than its sum / cores
        steps = -(-images // BATCH)
        step_cpu, map_cpu = r["fit_arrays_cpu"], r["extra_map_cpu_per_batch"] * steps
        floor = max(r["fit_arrays_s"], (step_cpu + map_cpu) / cores) / r["fit_arrays_s"]
        print(f"    CPU-s/epoch: step {step_cpu:.2f} (wall {r['fit_arrays_s']:.2f}), "
              f"step-sized map alone {map_cpu:.2f}, fit with it {r['fit_heavy_map_cpu']:.2f}"
              f" (wall {r['fit_heavy_map_s']:.2f}); on {cores} cores the step-sized map's fit "
              f"needs >= {floor:.2f}x of fit on arrays")
    if not t:
        print("  TensorFlow: not available")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=10240)
    ap.add_argument("--epochs", type=int, default=2, help="timed passes after a warm-up one")
    ap.add_argument("--rounds", type=int, default=2, help="runs of each, alternating")
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="an environment variable for both workers (e.g. OMP_WAIT_POLICY="
                         "PASSIVE: on a busy machine OpenMP's spinning threads slow torch)")
    ap.add_argument("--worker", nargs=2, metavar=("MODULE", "DATA"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.epochs)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    extra_env = dict(e.split("=", 1) for e in args.env)
    if extra_env:
        print("worker environment: " + " ".join(args.env))
    have_tf = os.path.exists(args.tf)
    with tempfile.TemporaryDirectory() as tmp:
        npz, record_bytes = make_data(tmp, args.images)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run_worker(sys.executable, "ndflow", npz, args.epochs, extra_env))
            if have_tf:
                theirs.append(run_worker(args.tf, "tensorflow", npz, args.epochs, extra_env))
    if _best(ours) is None:
        sys.exit("the ndflow run failed")
    report(ours, theirs, args.images, record_bytes)


if __name__ == "__main__":
    main()

"""Keras 3 image augmentation: ndflow vs TensorFlow's Keras on the same pipeline and data.

    python benchmarks/keras_image_augmentation.py [--batches 20] [--rounds 2] [--tf PYTHON]

Figures (seconds per batch of 32 RGB 128x128 images, median over `batches` after a warm-up):
- transform: the raw ImageProjectiveTransformV3 op (bilinear, reflect), one matrix per image;
- augment: `tf.function` of Sequential([Rescaling(1/255), RandomFlip("horizontal"),
  RandomRotation(0.1), RandomZoom(0.1), RandomTranslation(0.1, 0.1), RandomContrast(0.2)])
  in training mode;
- dataset: the same Sequential in `tf.data` `map` over 640 uint8 images, batch 32, per batch.
The same source runs in both interpreters (`--worker MODULE`: `import MODULE as tf`), each
`rounds` times, alternating; a figure is the best of its rounds (the machine may be shared).
"""

from __future__ import annotations

import argparse
import importlib
import json
import time

import numpy as np
from side_by_side import TF_PYTHON, alternate, print_ratios

BATCH, SIZE = 32, 128


def _median_time(fn, n: int) -> float:
    fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def worker(module: str, batches: int) -> dict:
    tf = importlib.import_module(module)
    keras = tf.keras
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (BATCH, SIZE, SIZE, 3)).astype(np.uint8)
    x = tf.constant(images.astype(np.float32))
    a = rng.uniform(-0.3, 0.3, BATCH).astype(np.float32)
    c, s = np.cos(a), np.sin(a)
    mats = np.stack([c, -s, 5 + 0 * c, s, c, -3 + 0 * c, 0 * c, 0 * c], 1).astype(np.float32)
    out = {}
    out["transform"] = _median_time(lambda: tf.raw_ops.ImageProjectiveTransformV3(
        images=x, transforms=mats, output_shape=[SIZE, SIZE], fill_value=0.0,
        interpolation="BILINEAR", fill_mode="REFLECT").numpy(), batches)
    L = keras.layers  # noqa: N806 - Keras' idiom
    aug = keras.Sequential([L.Rescaling(1 / 255.0), L.RandomFlip("horizontal"),
                            L.RandomRotation(0.1), L.RandomZoom(0.1),
                            L.RandomTranslation(0.1, 0.1), L.RandomContrast(0.2)])
    fn = tf.function(lambda t: aug(t, training=True))
    out["augment"] = _median_time(lambda: fn(x).numpy(), batches)
    data = np.repeat(images, 20, 0)
    ds = tf.data.Dataset.from_tensor_slices(data).batch(BATCH).map(
        lambda t: aug(t, training=True))

    def epoch():
        for b in ds:
            b.numpy()
    out["dataset"] = _median_time(epoch, max(2, batches // 10)) / (len(data) // BATCH)
    return out



def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=TF_PYTHON)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.batches)))
        return
    from machine import cpu_line  # noqa: PLC0415 - imports torch: the parent only

    print(cpu_line())
    ours, theirs = alternate(__file__, args.rounds, "--batches", args.batches, tf_python=args.tf)
    print(f"batch {BATCH} x {SIZE}x{SIZE}x3, per batch (best of {args.rounds})")
    print_ratios(ours, theirs, scale=1e3, width=10)


if __name__ == "__main__":
    main()

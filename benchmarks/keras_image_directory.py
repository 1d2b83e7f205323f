"""`tf.keras.utils.image_dataset_from_directory` throughput: ndflow vs TensorFlow 2.21's Keras
on the same directory of PNG files, and a PyDataset fed to `predict` with 1 and 4 workers.

    python benchmarks/keras_image_directory.py [--images 512] [--rounds 3] [--tf PYTHON]

The parent writes `images` 96x96 RGB PNGs in 4 class folders; each worker (the same source
run under `import MODULE as tf`) times one full pass over image_dataset_from_directory
(image_size 64x64, batch 32, shuffle with a seed) after a warm-up pass, then ndflow alone
times `model.predict` on a PyDataset whose __getitem__ sleeps 5 ms (an I/O-bound loader).
A figure is the best of the rounds; the machine may be shared, so ratios are indicative.
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


def make_images(root: str, count: int) -> None:
    from PIL import Image  # noqa: PLC0415 - only the parent writes the files
    rng = np.random.RandomState(0)
    for i in range(count):
        folder = os.path.join(root, f"class{i % 4}")
        os.makedirs(folder, exist_ok=True)
        Image.fromarray(rng.randint(0, 256, (96, 96, 3)).astype("uint8")).save(
            os.path.join(folder, f"{i}.png"))


def worker(module: str, root: str) -> dict:
    tf = __import__(module)
    keras = tf.keras
    out = {"version": tf.__version__}

    def one_pass():
        ds = keras.utils.image_dataset_from_directory(root, image_size=(64, 64), batch_size=32,
                                                      seed=1, verbose=False)
        start = time.perf_counter()
        n = sum(int(x.shape[0]) for x, _ in ds)
        return time.perf_counter() - start, n

    one_pass()
    seconds, n = one_pass()
    out["images_per_s"] = n / seconds
    if module == "ndflow":
        class Slow(keras.utils.PyDataset):
            def __len__(self):
                return 40

            def __getitem__(self, i):
                time.sleep(0.005)
                return np.full((8, 4), i, "float32")

        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
        for workers in (1, 4):
            data = Slow(workers=workers, max_queue_size=8)
            model.predict(data, verbose=0)
            start = time.perf_counter()
            model.predict(data, verbose=0)
            out[f"pydataset_w{workers}_ms"] = (time.perf_counter() - start) * 1e3
    return out


def run(python: str, module: str, root: str) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([python, os.path.abspath(__file__), "--worker", module, root],
                          capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        print(f"{module} run failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", nargs=2, metavar=("MODULE", "ROOT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    with tempfile.TemporaryDirectory() as root:
        make_images(root, args.images)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run(sys.executable, "ndflow", root))
            if os.path.exists(args.tf):
                theirs.append(run(args.tf, "tensorflow", root))
    ours, theirs = [r for r in ours if r], [r for r in theirs if r]
    if not ours:
        sys.exit("the ndflow run failed")
    best = max(r["images_per_s"] for r in ours)
    print(f"image_dataset_from_directory, {args.images} PNGs 96x96 -> 64x64, batch 32, best "
          f"of {len(ours)} rounds")
    print(f"  ndflow      {best:8.0f} images/s")
    if theirs:
        tf_best = max(r["images_per_s"] for r in theirs)
        print(f"  TensorFlow {theirs[0]['version']} {tf_best:8.0f} images/s")
        print(f"  ndflow / TF throughput: {best / tf_best:5.2f}x")
    w1 = min(r["pydataset_w1_ms"] for r in ours)
    w4 = min(r["pydataset_w4_ms"] for r in ours)
    print(f"  PyDataset predict, 40 batches of a 5 ms loader: workers=1 {w1:6.1f} ms, "
          f"workers=4 {w4:6.1f} ms ({w1 / w4:4.2f}x faster)")


if __name__ == "__main__":
    main()

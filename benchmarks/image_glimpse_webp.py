"""tf.image.extract_glimpse, tf.io.decode_webp, tf.io.decode_jpeg, tf.io.decode_and_crop_jpeg and
tf.image.generate_bounding_box_proposals on representative sizes, ndflow against TensorFlow
(when its interpreter is given), in alternating rounds so that both see the same load on a
shared machine.

    python benchmarks/image_glimpse_webp.py [--tf /work/tfvenv/bin/python] [--rounds 3]

Every case runs eagerly, the result fetched. TensorFlow has no CPU kernel for
GenerateBoundingBoxProposals (GPU only): its cases show ndflow's time alone ("-" for TF).
The WebP and JPEG files are encoded once, by TensorFlow where it can (JPEG) and Pillow
(WebP: TF has no encoder), and handed to both sides as bytes. Prints milliseconds per call
(best over the rounds of CALLS calls each) and ndflow/TF.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from machine import best_ms_after_pause, cpu_line  # noqa: E402 - benchmarks/ is the script's directory

import ndflow as tf  # noqa: E402

CALLS = 5
FILES = "/tmp/ndflow_bench_image_files.npz"

# name -> source of (fn, args) built from `tf`, `np` and `files` (bytes, shared by both sides)
CASES = {
    "glimpse uniform [32,224,224,3] -> 64x64": """
rng = np.random.default_rng(0)
x = tf.constant(rng.random((32, 224, 224, 3)).astype(np.float32))
o = tf.constant(rng.uniform(-1.2, 1.2, (32, 2)).astype(np.float32))
fn, args = (lambda x, o: tf.image.extract_glimpse(x, [64, 64], o)), (x, o)""",
    "glimpse zero [256,28,28,1] -> 8x8 pixels": """
rng = np.random.default_rng(1)
x = tf.constant(rng.random((256, 28, 28, 1)).astype(np.float32))
o = tf.constant(rng.uniform(-2, 26, (256, 2)).astype(np.float32))
fn, args = (lambda x, o: tf.image.extract_glimpse(x, [8, 8], o, centered=False,
                                                  normalized=False, noise="zero")), (x, o)""",
    "glimpse gaussian [8,512,512,3] -> 128x128": """
rng = np.random.default_rng(2)
x = tf.constant(rng.random((8, 512, 512, 3)).astype(np.float32))
o = tf.constant(rng.uniform(-1, 1, (8, 2)).astype(np.float32))
fn = lambda x, o: tf.image.extract_glimpse(x, [128, 128], o, noise="gaussian")  # noqa: E731
args = (x, o)""",
    "glimpse inside v1 [64,96,96,3] -> 32x32": """
rng = np.random.default_rng(3)
x = tf.constant(rng.random((64, 96, 96, 3)).astype(np.float32))
o = tf.constant(rng.uniform(-0.5, 0.5, (64, 2)).astype(np.float32))
fn, args = (lambda x, o: tf.compat.v1.image.extract_glimpse(x, [32, 32], o)), (x, o)""",
    "decode_webp lossy RGB 512x384": """
fn, args = tf.io.decode_webp, (tf.constant(files["lossy"].tobytes()),)""",
    "decode_webp lossless RGBA 512x384": """
fn, args = tf.io.decode_webp, (tf.constant(files["lossless"].tobytes()),)""",
    "decode_webp animation 12 x 160x120": """
fn, args = tf.io.decode_webp, (tf.constant(files["animation"].tobytes()),)""",
    "decode_image webp lossy (first frame)": """
fn, args = (lambda c: tf.io.decode_image(c, expand_animations=False)), (
    tf.constant(files["lossy"].tobytes()),)""",
    "decode_jpeg 500x375 (4:2:0)": """
fn, args = tf.io.decode_jpeg, (tf.constant(files["jpeg"].tobytes()),)""",
    "decode_jpeg 1600x1200 (4:2:0)": """
fn, args = tf.io.decode_jpeg, (tf.constant(files["jpeg_big"].tobytes()),)""",
    "decode_jpeg 1600x1200 ratio 2": """
fn, args = (lambda c: tf.io.decode_jpeg(c, ratio=2)), (
    tf.constant(files["jpeg_big"].tobytes()),)""",
    "decode_jpeg 1600x1200 accurate": """
fn, args = (lambda c: tf.io.decode_jpeg(c, dct_method="INTEGER_ACCURATE")), (
    tf.constant(files["jpeg_big"].tobytes()),)""",
    "decode_image jpeg 500x375 float32": """
fn, args = (lambda c: tf.io.decode_image(c, dtype=tf.float32)), (
    tf.constant(files["jpeg"].tobytes()),)""",
    "decode_and_crop_jpeg 500x375 -> 224x224": """
c = tf.constant(files["jpeg"].tobytes())
fn, args = (lambda c: tf.io.decode_and_crop_jpeg(c, [60, 101, 224, 224])), (c,)""",
    "decode_and_crop_jpeg 500x375 whole": """
c = tf.constant(files["jpeg"].tobytes())
fn, args = (lambda c: tf.io.decode_and_crop_jpeg(c, [0, 0, 375, 500])), (c,)""",
    "decode_and_crop_jpeg accurate 224x224": """
c = tf.constant(files["jpeg"].tobytes())
fn, args = (lambda c: tf.io.decode_and_crop_jpeg(c, [60, 101, 224, 224],
                                                 dct_method="INTEGER_ACCURATE")), (c,)""",
    "decode_and_crop_jpeg ratio 2 -> 112x112": """
c = tf.constant(files["jpeg"].tobytes())
fn, args = (lambda c: tf.io.decode_and_crop_jpeg(c, [30, 50, 112, 112], ratio=2)), (c,)""",
    "decode_and_crop_jpeg 1600x1200 -> 224x224": """
c = tf.constant(files["jpeg_big"].tobytes())
fn, args = (lambda c: tf.io.decode_and_crop_jpeg(c, [500, 700, 224, 224])), (c,)""",
    "proposals [2,38,50,9] pre 6000 post 300": """
rng = np.random.default_rng(4)
h, w, a = 38, 50, 9
s = tf.constant(rng.random((2, h, w, a)).astype(np.float32))
d = tf.constant((rng.standard_normal((2, h, w, 4 * a)) * 0.2).astype(np.float32))
cy, cx = np.meshgrid(np.arange(h) * 16 + 8.0, np.arange(w) * 16 + 8.0, indexing="ij")
sz = np.array([32, 64, 128] * 3, np.float32)[:, None] * np.array(
    [[1, 1]] * 3 + [[2, 1]] * 3 + [[1, 2]] * 3, np.float32)
an = np.stack([cy[..., None] - sz[:, 0] / 2, cx[..., None] - sz[:, 1] / 2,
               cy[..., None] + sz[:, 0] / 2, cx[..., None] + sz[:, 1] / 2], -1)
an = tf.constant(an.reshape(h, w, 4 * a).astype(np.float32))
info = tf.constant([[608.0, 800.0, 1.0, 0, 0]] * 2)
fn, args = (lambda s, d: tf.image.generate_bounding_box_proposals(
    s, d, info, an, 0.7, 6000, 16.0, 300)), (s, d)""",
    "proposals [8,25,25,3] pre 1000 post 100": """
rng = np.random.default_rng(5)
h, w, a = 25, 25, 3
s = tf.constant(rng.random((8, h, w, a)).astype(np.float32))
d = tf.constant((rng.standard_normal((8, h, w, 4 * a)) * 0.2).astype(np.float32))
cy, cx = np.meshgrid(np.arange(h) * 8 + 4.0, np.arange(w) * 8 + 4.0, indexing="ij")
sz = np.array([[16, 16], [32, 16], [16, 32]], np.float32)
an = np.stack([cy[..., None] - sz[:, 0] / 2, cx[..., None] - sz[:, 1] / 2,
               cy[..., None] + sz[:, 0] / 2, cx[..., None] + sz[:, 1] / 2], -1)
an = tf.constant(an.reshape(h, w, 4 * a).astype(np.float32))
info = tf.constant([[200.0, 200.0, 1.0, 0, 0]] * 8)
fn, args = (lambda s, d: tf.image.generate_bounding_box_proposals(
    s, d, info, an, 0.5, 1000, 4.0, 100)), (s, d)""",
}
TF_LACKS = ("proposals",)    # no CPU kernel in TensorFlow


def _pattern(h, w, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([(x + y) % 256, (x * 2) % 256, (y * 3) % 256], -1).astype(np.float64)
    img = np.clip(img + rng.normal(0, 12, img.shape), 0, 255)
    return img.astype(np.uint8)


def make_files() -> dict:
    """The WebP files (Pillow) and JPEGs (ndflow's encode_jpeg, libjpeg-turbo as TF's)."""
    from PIL import Image  # noqa: PLC0415 - only the benchmark needs it at top level

    def webp(arr, **kw):
        buf = io.BytesIO()
        Image.fromarray(arr).save(buf, format="WEBP", **kw)
        return buf.getvalue()
    rgb = _pattern(384, 512, 0)
    rgba = np.concatenate([rgb, rgb[..., :1]], -1)
    frames = [Image.fromarray(np.roll(_pattern(120, 160, 1), 8 * k, axis=1)) for k in range(12)]
    buf = io.BytesIO()
    frames[0].save(buf, format="WEBP", save_all=True, append_images=frames[1:], duration=40,
                   quality=70)
    jpeg = tf.io.encode_jpeg(_pattern(375, 500, 2), quality=90).numpy()
    big = tf.io.encode_jpeg(_pattern(1200, 1600, 3), quality=90).numpy()
    files = {"lossy": webp(rgb, quality=80), "lossless": webp(rgba, lossless=True),
             "animation": buf.getvalue(), "jpeg": jpeg, "jpeg_big": big}
    return {k: np.frombuffer(v, np.uint8) for k, v in files.items()}


# TensorFlow builds a case per line read from stdin and answers with its milliseconds.
_TF_WORKER = r"""
import sys, time
import numpy as np
import tensorflow as tf
CASES = {CASES!r}
files = dict(np.load({FILES!r}))
def _fetch(out):
    for t in (out if isinstance(out, (tuple, list)) else (out,)):
        t.numpy()
print("ready", flush=True)
for line in sys.stdin:
    name, calls = line.rstrip("\n").rsplit("|", 1)
    scope = {{"tf": tf, "np": np, "files": files}}
    exec(CASES[name], scope)
    fn, args = scope["fn"], scope["args"]
    time.sleep(0.3)
    _fetch(fn(*args))
    best = float("inf")
    for _ in range(int(calls)):
        t = time.perf_counter()
        _fetch(fn(*args))
        best = min(best, time.perf_counter() - t)
    print(best * 1e3, flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tf", default="", help="TensorFlow's Python interpreter")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    opts = parser.parse_args()
    print(cpu_line())
    files = make_files()
    np.savez(FILES, **files)
    names = [n for n in CASES if opts.only in n]
    worker = None
    if opts.tf:
        worker = subprocess.Popen([opts.tf, "-c", _TF_WORKER.format(CASES=CASES, FILES=FILES)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  cwd="/tmp", stderr=subprocess.DEVNULL)
        assert worker.stdout.readline().strip() == "ready"
    built = {}
    for name in names:
        scope = {"tf": tf, "np": np, "files": files}
        exec(CASES[name], scope)
        built[name] = (scope["fn"], scope["args"])
    best = {name: [float("inf"), float("inf")] for name in names}
    for _ in range(opts.rounds):
        for name in names:
            best[name][0] = min(best[name][0], best_ms_after_pause(*built[name], CALLS))
            if worker is not None and not name.startswith(TF_LACKS):
                worker.stdin.write(f"{name}|{CALLS}\n")
                worker.stdin.flush()
                best[name][1] = min(best[name][1], float(worker.stdout.readline()))
    print(f"{'case':44s} {'ndflow ms':>10s} {'TF ms':>10s} {'ndflow/TF':>10s}")
    for name in names:
        nd, t = best[name]
        timed = worker is not None and t != float("inf")
        ratio = f"{nd / t:10.3f}" if timed else f"{'-':>10s}"
        tf_ms = f"{t:10.3f}" if timed else f"{'-':>10s}"
        print(f"{name:44s} {nd:10.3f} {tf_ms} {ratio}")
    if worker is not None:
        worker.stdin.close()
        worker.wait()


if __name__ == "__main__":
    main()

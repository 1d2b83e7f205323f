"""tf.image color adjustments: the fused kernels (one pass RGB -> HSV -> adjust -> RGB) against
the composition RGBToHSV, adjust, HSVToRGB (TF_ADJUST_HUE_FUSED / TF_ADJUST_SATURATION_FUSED
= 0), and TensorFlow's own AdjustHue / AdjustSaturation, each in a subprocess.

    python benchmarks/image_ops.py [--batch 128] [--size 32] [--repeat 20] [--tf PYTHON]

Input: a float32 batch [batch, size, size, 3] (CIFAR-10's distorted inputs at the defaults,
before the 24x24 crop). Printed: best-of-`repeat` milliseconds per call of adjust_hue and
adjust_saturation for each path, plus tf.image.resize for reference: bilinear 2x up, and
antialiased (ScaleAndTranslate with the triangle kernel) and Lanczos-3 halving; and 16-bit PNG
files (ndflow's own codec, kernels/png16.py): encode_png and decode_png(dtype=tf.uint16) of a
smooth uint16 RGB image [16 * size, 16 * size, 3] (TF's adaptive row filters at work), with
the encoded sizes.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory
from side_by_side import run_json  # noqa: E402 - benchmarks/ is the script's directory

_PROGRAM = '''
import json, sys, time
import numpy as np
import {module} as tf

batch, size, repeat = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
x = tf.constant(np.random.RandomState(0).rand(batch, size, size, 3).astype(np.float32))
yy, xx = np.mgrid[0:16 * size, 0:16 * size]
png16 = tf.constant(np.stack([yy * 60 + xx, xx * 50, (yy ^ xx) * 40], -1).astype(np.uint16))
png16_file = tf.io.encode_png(png16)


def best_ms(fn):
    fn().numpy()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn().numpy()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


print(json.dumps({{
    "adjust_hue": best_ms(lambda: tf.image.adjust_hue(x, 0.2)),
    "adjust_saturation": best_ms(lambda: tf.image.adjust_saturation(x, 1.5)),
    "resize_bilinear_2x": best_ms(lambda: tf.image.resize(x, [2 * size, 2 * size])),
    "resize_antialias_half": best_ms(lambda: tf.image.resize(x, [size // 2, size // 2],
                                                             antialias=True)),
    "resize_lanczos3_half": best_ms(lambda: tf.image.resize(x, [size // 2, size // 2],
                                                            method="lanczos3")),
    "encode_png16": best_ms(lambda: tf.io.encode_png(png16)),
    "decode_png16": best_ms(lambda: tf.io.decode_png(png16_file, dtype=tf.uint16)),
    "png16_bytes": len(png16_file.numpy()),
}}))
'''


def _run(python: str, module: str, args, env: dict | None = None) -> dict | None:
    threads = {"TF_NUM_INTRAOP_THREADS": str(args.threads), "TF_NUM_INTEROP_THREADS": "1"}
    return run_json([python, "-c", _PROGRAM.format(module=module), args.batch, args.size,
                     args.repeat], module, env={**threads, **(env or {})}, timeout=600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1,
                        help="intra-op threads for both (TF_NUM_INTRAOP_THREADS)")
    parser.add_argument("--tf", default="/work/tfvenv/bin/python")
    args = parser.parse_args()
    print(cpu_line())
    print(f"float32 images [{args.batch}, {args.size}, {args.size}, 3], best of {args.repeat}, "
          f"{args.threads} intra-op thread(s)")
    fused = _run(sys.executable, "ndflow", args,
                 {"TF_ADJUST_HUE_FUSED": "1", "TF_ADJUST_SATURATION_FUSED": "1"})
    composed = _run(sys.executable, "ndflow", args,
                    {"TF_ADJUST_HUE_FUSED": "0", "TF_ADJUST_SATURATION_FUSED": "0"})
    theirs = _run(args.tf, "tensorflow", args) if os.path.exists(args.tf) else None
    for op in ("adjust_hue", "adjust_saturation", "resize_bilinear_2x", "resize_antialias_half",
               "resize_lanczos3_half", "encode_png16", "decode_png16"):
        row = [f"{op:20s}"]
        for label, r in (("ndflow fused", fused), ("ndflow composed", composed),
                         ("TensorFlow", theirs)):
            if r is not None and not (op.startswith(("resize", "encode", "decode"))
                                      and label == "ndflow composed"):
                row.append(f"{label} {r[op]:7.2f} ms")
        if fused and theirs:
            row.append(f"(fused/TF {fused[op] / theirs[op]:.2f}x)")
        print("  ".join(row))
    if fused and theirs:
        print(f"16-bit PNG file: ndflow {fused['png16_bytes']} bytes, TensorFlow "
              f"{theirs['png16_bytes']} bytes")


if __name__ == "__main__":
    main()

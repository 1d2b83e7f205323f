"""ResNet-50 v1.5 images per second, ndflow against TensorFlow 2.21 in the same run (issue 56).

    python benchmarks/resnet50.py [--rows 1,2,3,4] [--steps 5] [--warmup 3] [--batch 32]
                                  [--small-batch 4] [--tf PYTHON]
    python benchmarks/resnet50.py --layers 18 --image-size 64 --batch 2 --steps 1   # smoke test

The model is the container's Keras builder, `nvidia-examples/cnn/nvutils/resnet_model.py`
(public tf.keras API only), loaded on each side with its `import ndflow as tf` line naming that
side's library, so both build the same functional model (bottleneck v1.5 blocks, BatchNorm, L2
penalties, a float32 softmax). Training is Keras `fit` on one synthetic batch repeated
(`tf.data.Dataset.from_tensors(...).repeat()`, as resnet.py without --data_dir), SGD with
momentum 0.9 and sparse categorical cross-entropy; inference is a `tf.function` calling the
model with training=False on a batch, as resnet.py --predict does. Each configuration runs
in a fresh interpreter: `--warmup` steps first (tracing, compiles, autotuning), then `--steps`
timed steps; the figure is the median step (gaps between `on_train_batch_end` calls; each
inference call fetches its result) as images/s.

Rows (ndflow / TensorFlow images/s, the bar):
1. training, float32, batch --batch: >= 1.25x;
2. training under the `mixed_bfloat16` policy on both sides (what resnet.py's --precision fp16
   means on a CPU with bf16 units, avx512_bf16 / amx_bf16), n/a on a CPU without: >= 1.25x;
3. inference, float32, batch --batch: >= 1.0x;
4. ndflow only: two processes of 1 thread each training float32 at --small-batch at once,
   against one such process alone: total images/s >= 1.6x.
Each row also gives the FLOPs done per second (forward FLOPs counted from the model's
convolutions and dense layer; a training step ~3x forward) beside the CPU's measured GEMM peak.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from side_by_side import TF_PYTHON, run_worker  # noqa: E402

BUILDER = os.path.join(os.path.dirname(HERE), "nvidia-examples", "cnn", "nvutils",
                       "resnet_model.py")
BF16_FLAGS = {"avx512_bf16", "amx_bf16"}


# -- the worker: runs under ndflow or TensorFlow ----------------------------------------------

def load_builder(module: str):
    """resnet_model.py with its `import ndflow as tf` importing `module` instead (the
    TensorFlow worker must not import ndflow)."""
    with open(BUILDER, encoding="utf-8") as f:
        source = f.read()
    line = "import ndflow as tf\n"
    if line not in source:
        raise RuntimeError(f"{BUILDER} no longer imports ndflow as tf")
    builder = types.ModuleType("resnet_model")
    builder.__file__ = BUILDER
    exec(compile(source.replace(line, f"import {module} as tf\n", 1), BUILDER, "exec"),
         builder.__dict__)
    return builder


def forward_flops(tf, model) -> float:
    """One image's forward FLOPs in the convolutions and the dense layer (2 per MAC)."""
    total = 0
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.Conv2D):
            kh, kw, cin, cout = (int(d) for d in layer.kernel.shape)
            _, h, w, _ = layer.output.shape
            total += 2 * int(h) * int(w) * kh * kw * cin * cout
        elif isinstance(layer, tf.keras.layers.Dense):
            total += 2 * int(np.prod([int(d) for d in layer.kernel.shape]))
    return float(total)


def _ready(sync: bool) -> None:
    """With --sync: tells the parent this job is warm and waits for its go (a stdin line)."""
    if sync:
        print("READY", flush=True)
        sys.stdin.readline()


def _median_gap_ms(stamps: list) -> float:
    return statistics.median(b - a for a, b in zip(stamps, stamps[1:])) * 1e3


def worker(args) -> dict:
    if args.threads:
        os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    tf = importlib.import_module(args.worker)
    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.mixed_precision.set_global_policy(args.policy)
    tf.keras.utils.set_random_seed(1)
    model = load_builder(args.worker).resnet(args.layers, 1000, args.image_size)
    rng = np.random.default_rng(0)
    size, batch = args.image_size, args.batch
    images = np.clip(rng.normal(0.0, 1.0, (batch, size, size, 3)), -2.5, 2.5).astype(np.float32)
    result = {"flops": forward_flops(tf, model), "policy": args.policy}

    t0 = time.perf_counter()
    if args.mode == "predict":
        serve = tf.function(lambda x: model(x, training=False))
        x = tf.constant(images)
        for _ in range(max(args.warmup, 1)):
            serve(x).numpy()
        result["warmup_s"] = time.perf_counter() - t0
        _ready(args.sync)
        stamps = [time.perf_counter()]
        for _ in range(args.steps):
            serve(x).numpy()
            stamps.append(time.perf_counter())
    else:
        labels = rng.integers(0, 1000, batch).astype(np.int32)
        data = tf.data.Dataset.from_tensors((images, labels)).repeat()
        model.compile(optimizer=tf.keras.optimizers.SGD(0.01, momentum=0.9),
                      loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        warmup, stamps = max(args.warmup, 1), []

        class Stamps(tf.keras.callbacks.Callback):
            def on_train_batch_end(self, step, logs=None):
                stamps.append(time.perf_counter())
                if step == warmup - 1:     # warm: the gaps from here on are the timed steps
                    result["warmup_s"] = stamps[-1] - t0
                    _ready(args.sync)
                    stamps[:] = [time.perf_counter()]

        model.fit(data, epochs=1, steps_per_epoch=warmup + args.steps, verbose=0,
                  shuffle=False, callbacks=[Stamps()])
    step_ms = _median_gap_ms(stamps)
    result.update(step_ms=step_ms, images_s=batch / step_ms * 1e3)
    return result


# -- the parent ------------------------------------------------------------------------------

def _worker_args(args, mode: str, policy: str, batch: int, threads: int = 0) -> list:
    return ["--mode", mode, "--policy", policy, "--batch", batch, "--steps", args.steps,
            "--warmup", args.warmup, "--layers", args.layers, "--image-size", args.image_size,
            "--threads", threads]


def run_together(args, copies: int) -> list | None:
    """`copies` ndflow training jobs of 1 thread each, warmed up apart and then timed at
    once; their results (None when one failed)."""
    argv = [sys.executable, os.path.abspath(__file__), "--worker", "ndflow", "--sync",
            *map(str, _worker_args(args, "train", "float32", args.small_batch, 1))]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    jobs = []
    try:
        for _ in range(copies):
            jobs.append(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, cwd="/tmp",
                                         env=env))
        for job in jobs:    # every job warm before any is timed
            line = job.stdout.readline()
            if line.strip() != "READY":
                raise RuntimeError(line + job.stderr.read()[-2000:])
        for job in jobs:
            job.stdin.write("go\n")
            job.stdin.flush()
        results = []
        for job in jobs:
            out, err = job.communicate(timeout=1800)
            if job.returncode:
                raise RuntimeError(err[-2000:])
            results.append(json.loads(out.strip().splitlines()[-1]))
        return results
    except (RuntimeError, subprocess.SubprocessError, OSError, ValueError) as e:
        print(f"{copies} x 1-thread run failed: {e}", file=sys.stderr)
        return None
    finally:
        for job in jobs:
            if job.poll() is None:
                job.kill()
                job.wait()


def _rate(result: dict | None, flops_per_image: float) -> str:
    if not result:
        return f"{'failed':>24s}"
    gflops = result["images_s"] * flops_per_image / 1e9
    return f"{result['images_s']:8.2f} img/s {gflops:6.1f} GFLOP/s"


def _verdict(ratio: float | None, bar: float) -> tuple[str, bool]:
    if ratio is None:
        return f"bar >= {bar:.2f}x: n/a", True
    ok = ratio >= bar
    return f"{ratio:5.2f}x   bar >= {bar:.2f}x: {'met' if ok else 'MISSED'}", ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker")
    ap.add_argument("--mode", default="train", choices=("train", "predict"))
    ap.add_argument("--policy", default="float32")
    ap.add_argument("--threads", type=int, default=0, help="(worker) 0: the default")
    ap.add_argument("--sync", action="store_true", help="(worker) wait for a go on stdin")
    ap.add_argument("--rows", default="1,2,3,4")
    ap.add_argument("--steps", type=int, default=5, help="timed steps (the median counts)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--small-batch", type=int, default=4, help="row 4's batch per process")
    ap.add_argument("--layers", type=int, default=50, help="18/34/50/101/152 (smoke tests)")
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--tf", default=TF_PYTHON, help="TensorFlow 2.21's interpreter")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args)), flush=True)
        return

    import torch
    from machine import cpu_line, gemm_peak_gflops

    from ndflow.core.build_info import cpu_model_and_flags
    print(cpu_line(), flush=True)
    bf16_units = bool(cpu_model_and_flags()[1] & BF16_FLAGS)
    peak32 = max(gemm_peak_gflops(torch.float32) for _ in range(2))
    peak16 = gemm_peak_gflops(torch.bfloat16) if bf16_units else None
    print(f"measured GEMM peak here: {peak32:.0f} GFLOP/s float32"
          + (f", {peak16:.0f} bfloat16" if peak16 else ""))
    tf_python = args.tf if args.tf and os.path.exists(args.tf) else None
    if not tf_python:
        print(f"no TensorFlow interpreter at {args.tf}: ndflow figures only")
    print(f"ResNet-{args.layers} v1.5, {args.image_size}x{args.image_size}; {args.warmup} "
          f"warm-up + {args.steps} timed steps, median step (not a figure to quote unless "
          f"--steps is large enough and the machine idle)", flush=True)

    rows = [int(r) for r in args.rows.split(",")]
    flops, failed = None, False

    def compare(label, mode, policy, bar):
        nonlocal flops, failed
        extra = _worker_args(args, mode, policy, args.batch)
        ours = run_worker(sys.executable, __file__, "ndflow", *extra)
        theirs = run_worker(tf_python, __file__, "tensorflow", *extra) if tf_python else None
        flops = flops or (ours or theirs or {}).get("flops")
        if ours and theirs and ours["flops"] != theirs["flops"]:
            print(f"  note: the FLOP counts differ (ndflow {ours['flops']:.4g}, TensorFlow "
                  f"{theirs['flops']:.4g})")
        per_image = (flops or 0) * (3 if mode == "train" else 1)
        ratio = ours["images_s"] / theirs["images_s"] if ours and theirs else None
        text, ok = _verdict(ratio, bar)
        failed |= not ok or not ours or (tf_python is not None and not theirs)
        warm = "  ".join(f"{n} warm-up {r['warmup_s']:.0f} s" for n, r in
                         (("ndflow", ours), ("TF", theirs)) if r)
        print(f"{label}\n  ndflow {_rate(ours, per_image)}   TensorFlow "
              f"{_rate(theirs, per_image)}   {text}\n  ({warm})", flush=True)

    if 1 in rows:
        compare(f"1. training, float32, batch {args.batch}", "train", "float32", 1.25)
    if 2 in rows:
        label = f"2. training, mixed_bfloat16 (--precision fp16), batch {args.batch}"
        if bf16_units:
            compare(label, "train", "mixed_bfloat16", 1.25)
        else:
            print(f"{label}\n  n/a: this CPU has no bf16 units (avx512_bf16 / amx_bf16)")
    if 3 in rows:
        compare(f"3. inference (tf.function, training=False), float32, batch "
                     f"{args.batch}", "predict", "float32", 1.0)
    if 4 in rows:
        label = (f"4. ndflow, 2 processes x 1 thread vs 1 process x 1 thread, training "
                 f"float32, batch {args.small_batch} each")
        alone = run_together(args, 1)
        pair = run_together(args, 2)
        flops = flops or (alone or pair or [{}])[0].get("flops")
        per_image = 3 * (flops or 0)
        one = alone[0]["images_s"] if alone else None
        two = sum(r["images_s"] for r in pair) if pair else None
        text, ok = _verdict(two / one if one and two else None, 1.6)
        failed |= not ok or not one or not two
        print(f"{label}\n  1 process {_rate(alone[0] if alone else None, per_image)}   "
              f"2 processes {_rate({'images_s': two} if two else None, per_image)} in all   "
              f"{text}", flush=True)
    if flops:
        print(f"FLOPs per image: {flops / 1e9:.2f} GFLOP forward ({flops / 2e9:.2f} GMAC), "
              f"~{3 * flops / 1e9:.1f} GFLOP a training step (3x forward)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

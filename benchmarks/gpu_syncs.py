"""Where the MNIST training step on a GPU waits for the device: every synchronizing CUDA call
per step (a value read back to Python, a copy from pageable host memory), with the ndflow
source lines that ask for it, for the Session step, the tf.function step, the loss-scale step,
auto-jit and the tf.function step with Adam.

At batch 64 the GPU's work is ~0.5 ms of a ~2 ms step: the step is bound by the host issuing
kernels, and each wait empties the queue the host had built up. PyTorch's sync debug mode
(`torch.cuda.set_sync_debug_mode`) reports each wait; this prints them grouped by call site.
Needs a CUDA GPU (benchmarks/device_check.sh runs it).

    python benchmarks/gpu_syncs.py [--steps 4]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import traceback
import warnings

import mnist_cnn
import torch
from machine import cpu_line

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _call_site(depth: int = 4) -> str:
    """The innermost ndflow frames of the current stack, innermost first."""
    frames = [f for f in traceback.extract_stack()
              if f.filename.startswith(os.path.join(_REPO, "ndflow"))]
    return " <- ".join(f"{os.path.relpath(f.filename, _REPO)}:{f.lineno}:{f.name}"
                       for f in reversed(frames[-depth:]))


def syncs_per_step(run, steps: int) -> collections.Counter:
    """{call site: synchronizing CUDA calls per step} over `steps` calls of `run`."""
    seen: collections.Counter = collections.Counter()

    def record(message, category, filename, lineno, file=None, line=None):
        seen[_call_site()] += 1

    torch.cuda.synchronize()
    with warnings.catch_warnings():   # (restores showwarning too)
        warnings.simplefilter("always")
        warnings.showwarning = record
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for _ in range(steps):
                run()
        finally:
            torch.cuda.set_sync_debug_mode(0)
    return collections.Counter({k: v / steps for k, v in seen.items()})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=4)
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("gpu_syncs: needs a CUDA GPU")
        return 1
    mnist_cnn.DEVICE = "gpu"
    x, y, params = mnist_cnn.make_data()
    steps = {"Session": lambda: mnist_cnn.ndflow_session(x, y, params),
             "tf.function": lambda: mnist_cnn.ndflow_step(x, y, params),
             "tf.function LossScaleOptimizer":
                 lambda: mnist_cnn.ndflow_step(x, y, params, loss_scale=True),
             "tf.function auto-jit": lambda: mnist_cnn.ndflow_step(x, y, params, jit="auto"),
             "tf.function Adam": lambda: mnist_cnn.ndflow_step(
                 x, y, params, optimizer=lambda: mnist_cnn.tf.keras.optimizers.Adam(1e-3))}
    print(cpu_line())
    print(f"GPU: {torch.cuda.get_device_name(0)} (torch {torch.__version__})")
    for name, make in steps.items():
        run = make()
        for _ in range(5):   # traced, planned, compiled
            run()
        seen = syncs_per_step(run, args.steps)
        print(f"{name}: {sum(seen.values()):.0f} synchronizing calls per step "
              "(the loss's fetch among them)")
        for site, n in seen.most_common():
            print(f"  {n:4.1f}  {site}")
        if hasattr(run, "close"):
            run.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Per-op cost of a deep, narrow model: one training step of a 31-layer Keras MLP.

    python benchmarks/deep_mlp.py [--rounds 3] [--steps 100] [--tf PYTHON]

31 Dense layers (30 of 64 units with relu, then 10 logits; 62 variables), batch 64, sparse
softmax cross-entropy, SGD with momentum, the step a `tf.function` (GradientTape +
apply_gradients), and the same with `jit_compile=True` against TensorFlow's XLA. The step
is ~47 MFLOP: at this CPU's GEMM rate well under a millisecond, so what it measures is the
fixed cost of each of its ~300 kernels (dispatch, checks, allocation) and of each variable's
update. The same step runs in TensorFlow's Keras 3 (the
same source, `import tensorflow as tf`) and as PyTorch eager (autograd, `torch.optim.SGD`
with momentum, foreach), each in a fresh process; rounds alternate between them and the
best of each is reported (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

LAYERS, WIDTH, CLASSES, BATCH = 31, 64, 10, 64


def _dims() -> list:
    return [WIDTH] * LAYERS + [CLASSES]


def step_flops() -> int:
    """Forward and backward GEMMs of the step (2 flops a multiply-add; dX, dW: twice the
    forward); the elementwise work is a rounding error next to them."""
    d = _dims()
    return 3 * 2 * BATCH * sum(a * b for a, b in zip(d[:-1], d[1:]))


def _data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((BATCH, WIDTH)).astype(np.float32),
            rng.integers(0, CLASSES, BATCH).astype(np.int64))


def _time_steps(run, steps: int, rounds: int = 5) -> float:
    """Best mean milliseconds a step over `rounds` runs of `steps` steps; `run()` runs one
    step and returns something whose `sync()` waits for it."""
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(steps):
            out = run()
        out.sync()
        best = min(best, (time.perf_counter() - t) / steps)
    return 1000 * best


class _Synced:
    def __init__(self, value):
        self.value = value

    def sync(self):
        np.asarray(self.value.numpy() if hasattr(self.value, "numpy") else self.value)


def keras_worker(module: str, steps: int, jit: bool = False) -> dict:
    tf = __import__(module)
    keras = tf.keras
    x, y = _data()
    layers = [keras.Input((WIDTH,))]
    layers += [keras.layers.Dense(WIDTH, activation="relu") for _ in range(LAYERS - 1)]
    model = keras.Sequential(layers + [keras.layers.Dense(CLASSES)])
    opt = keras.optimizers.SGD(0.01, momentum=0.9)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function(jit_compile=jit)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    xt, yt = tf.constant(x), tf.constant(y)
    t = time.perf_counter()
    step(xt, yt).numpy()
    first = time.perf_counter() - t
    for _ in range(10):
        step(xt, yt)
    out = {"version": tf.__version__, "first_step_s": first,
           "step_ms": _time_steps(lambda: _Synced(step(xt, yt)), steps)}
    if module == "ndflow":
        plan = step.get_concrete_function(xt, yt)._build_plan()
        out["kernels"] = plan.num_kernels
    return out


def torch_worker(steps: int) -> dict:
    import torch  # noqa: PLC0415 - only the PyTorch worker needs it at top level

    x, y = (torch.from_numpy(a) for a in _data())
    d = _dims()
    mods = []
    for a, b in zip(d[:-1], d[1:]):
        mods += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*mods[:-1])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return _Synced(loss.detach())

    for _ in range(10):
        step()
    return {"version": torch.__version__, "step_ms": _time_steps(step, steps)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        module, _, jit = args.worker.partition(":")
        out = torch_worker(args.steps) if module == "torch" else \
            keras_worker(module, args.steps, jit == "jit")
        print(json.dumps(out))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line, gemm_peak_gflops  # noqa: PLC0415
    from side_by_side import run_json_worker  # noqa: PLC0415 - benchmarks/ on the path

    print(cpu_line())
    workers = [("ndflow", sys.executable), ("ndflow:jit", sys.executable),
               ("torch", sys.executable)]
    if os.path.exists(args.tf):
        workers[2:2] = [("tensorflow", args.tf), ("tensorflow:jit", args.tf)]
    runs: dict = {name: [] for name, _ in workers}
    for _ in range(args.rounds):
        for name, python in workers:
            got = run_json_worker(python, __file__, ["--worker", name, "--steps", args.steps],
                                  name, timeout=900)
            if got:
                runs[name].append(got)
    if not runs["ndflow"]:
        sys.exit("the ndflow run failed")
    best = {k: min(v, key=lambda r: r["step_ms"]) for k, v in runs.items() if v}
    flops = step_flops()
    peak = gemm_peak_gflops()
    print(f"{LAYERS} Dense layers of {WIDTH} (62 variables), batch {BATCH}, SGD momentum; "
          f"{flops / 1e6:.1f} MFLOP a step = {flops / peak / 1e6:.3f} ms at this CPU's "
          f"{peak:.0f} GFLOP/s (1024^3 GEMM); best of {args.rounds} rounds x {args.steps} "
          f"steps")
    for mine, others in (("ndflow", (("tensorflow", "TF"), ("torch", "PyTorch eager"))),
                         ("ndflow:jit", (("tensorflow:jit", "TF jit_compile"),))):
        if mine not in best:
            continue
        ours = best[mine]
        label = "ndflow " + ours["version"] + (" jit_compile" if mine.endswith("jit") else "")
        print(f"  {label:34s} {ours['step_ms']:7.3f} ms/step  ({ours['kernels']} kernels, "
              f"first step {ours['first_step_s']:.2f} s)")
        for name, their_label in others:
            if name in best:
                theirs = best[name]
                print(f"  {their_label + ' ' + theirs['version']:34s} "
                      f"{theirs['step_ms']:7.3f} ms/step  ndflow / it "
                      f"{ours['step_ms'] / theirs['step_ms']:.2f}x"
                      + (f"  (first step {theirs['first_step_s']:.2f} s)"
                         if "first_step_s" in theirs else ""))
    for name in runs:
        print(f"  rounds {name}: " + ", ".join(f"{r['step_ms']:.3f}" for r in runs[name]))


if __name__ == "__main__":
    main()

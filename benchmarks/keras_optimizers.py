"""Keras optimizers' update step: ndflow vs TensorFlow's Keras 3, per optimizer.

    python benchmarks/keras_optimizers.py [--steps 40] [--rounds 2] [--tf PYTHON]

Each optimizer applies fixed gradients to an MLP's variables (784x512, 512, 512x512, 512,
512x10, 10: 0.67 M parameters) inside a `tf.function`, the state kept on the variables; the
figure is the median time of one `apply_gradients` over `steps` calls after 3 warm-up calls,
the best of `rounds` runs of each interpreter (alternating; the machine may be shared). The
same source runs in both (`--worker MODULE`: `import MODULE as tf`). The last rows, SGD with
momentum, Adam and RMSprop on 100 variables of 64 floats, are the per-variable cost a deep model's
many small weights and biases pay.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from side_by_side import TF_PYTHON, alternate

SHAPES = [(784, 512), (512,), (512, 512), (512,), (512, 10), (10,)]
MANY_SMALL = "SGD momentum, 100 x [64]"
MANY_SMALL_ADAM = "Adam, 100 x [64]"
MANY_SMALL_RMSPROP = "RMSprop, 100 x [64]"
OPTIMIZERS = ["SGD", "Adam", "AdamW", "Adadelta", "Adafactor", "Adagrad", "Adamax", "Ftrl",
              "Lamb", "Lion", "Nadam", "Muon", "RMSprop", "ScheduleFreeAdamW"]


def _make_step(tf, opt, grads, variables):
    @tf.function
    def step():
        opt.apply_gradients(zip(grads, variables))
    return step


def worker(module: str, steps: int) -> dict:
    tf = __import__(module)
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(np.float32) * 0.05 for s in SHAPES]
    grads = [tf.constant(rng.standard_normal(s).astype(np.float32) * 0.01) for s in SHAPES]
    out = {"version": tf.__version__}
    # Keras 3 on TF wants its own variables (a tf.Variable's "v0:0" is no valid scope name)
    make_variable = getattr(tf.keras, "Variable", None) or tf.Variable
    small = [rng.standard_normal(64).astype(np.float32) for _ in range(100)]
    cases = [(name, init, grads, {}) for name in OPTIMIZERS]
    small_grads = [tf.constant(v * 0.01) for v in small]
    cases.append((MANY_SMALL, small, small_grads, {"name": "SGD", "momentum": 0.9}))
    cases.append((MANY_SMALL_ADAM, small, small_grads, {"name": "Adam"}))
    cases.append((MANY_SMALL_RMSPROP, small, small_grads, {"name": "RMSprop"}))
    for name, values, gradients, kwargs in cases:
        variables = [make_variable(v, name=f"v{i}") for i, v in enumerate(values)]
        opt = getattr(tf.keras.optimizers, kwargs.pop("name", name))(learning_rate=0.001,
                                                                      **kwargs)
        opt.build(variables)   # eagerly: Keras cannot build inside a tf.function

        step = _make_step(tf, opt, gradients, variables)

        for _ in range(3):
            step()
        times = []
        for _ in range(steps):
            t = time.perf_counter()
            step()
            _ = variables[-1].numpy()   # the step has finished
            times.append(time.perf_counter() - t)
        out[name] = 1000 * float(np.median(times))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=TF_PYTHON)
    ap.add_argument("--worker", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps)))
        return
    from machine import cpu_line  # noqa: PLC0415 - imports torch: the parent only

    print(cpu_line())
    best_ours, best_theirs = alternate(__file__, args.rounds, "--steps", args.steps,
                                       tf_python=args.tf)
    tf_name = f"TF {best_theirs['version']}" if best_theirs else "TF"
    print(f"apply_gradients in a tf.function, {sum(int(np.prod(s)) for s in SHAPES):,} "
          f"float32 parameters in {len(SHAPES)} variables; median of {args.steps} steps, best "
          f"of {args.rounds} rounds")
    print(f"  {'optimizer':24s} {'ndflow ms':>10s} {tf_name + ' ms':>12s} {'ratio':>7s}")
    for name in OPTIMIZERS + [MANY_SMALL, MANY_SMALL_ADAM, MANY_SMALL_RMSPROP]:
        mine = best_ours[name]
        theirs_ms = best_theirs.get(name) if best_theirs else None
        ratio = f"{mine / theirs_ms:6.2f}x" if theirs_ms else "    n/a"
        theirs_text = f"{theirs_ms:12.3f}" if theirs_ms else f"{'n/a':>12s}"
        print(f"  {name:24s} {mine:10.3f} {theirs_text} {ratio}")


if __name__ == "__main__":
    main()

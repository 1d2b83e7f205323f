"""Profiler overhead on the MNIST training step (ndflow/models/image/mnist/model.py).

The train step (LeNet-5-like model, batch 64, GradientTape + SGD with momentum, one tf.function)
is timed in three modes, in alternating rounds within one process:

- off:    no profiler (the plan runs its plain generated code; Plan.run tests one global);
- on:     inside tf.profiler.experimental.start()/stop() (every kernel timed and recorded);
- before: Plan.run as it was before the profiler hook (no global test): "off" must not be
          measurably slower than this.

Bars: on/off <= 1.10, off/before ~ 1.00. TensorFlow's own profiler on the same step is timed
the same way in a TensorFlow process when /work/tfvenv/bin/python (or $TF_PYTHON) exists.

    python benchmarks/profiler_overhead.py [--steps 30] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BATCH = 64


def _tf_model(tf):
    """The same model as ndflow/models/image/mnist/model.py, for a TensorFlow process."""
    def var(shape, init=None):
        rng = tf.random.Generator.from_seed(66478)
        return tf.Variable(init if init is not None else rng.truncated_normal(shape) * 0.1)
    p = {"conv1_weights": var([5, 5, 1, 32]), "conv1_biases": var(None, tf.zeros([32])),
         "conv2_weights": var([5, 5, 32, 64]), "conv2_biases": var(None, tf.fill([64], 0.1)),
         "fc1_weights": var([7 * 7 * 64, 512]), "fc1_biases": var(None, tf.fill([512], 0.1)),
         "fc2_weights": var([512, 10]), "fc2_biases": var(None, tf.fill([10], 0.1))}

    def model(p, data, train=False):
        conv = tf.nn.conv2d(data, p["conv1_weights"], strides=[1, 1, 1, 1], padding="SAME")
        relu = tf.nn.relu(tf.nn.bias_add(conv, p["conv1_biases"]))
        pool = tf.nn.max_pool(relu, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
        conv = tf.nn.conv2d(pool, p["conv2_weights"], strides=[1, 1, 1, 1], padding="SAME")
        relu = tf.nn.relu(tf.nn.bias_add(conv, p["conv2_biases"]))
        pool = tf.nn.max_pool(relu, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
        hidden = tf.nn.relu(tf.matmul(tf.reshape(pool, [-1, 7 * 7 * 64]), p["fc1_weights"])
                            + p["fc1_biases"])
        if train:
            hidden = tf.nn.dropout(hidden, rate=0.5, seed=66478)
        return tf.matmul(hidden, p["fc2_weights"]) + p["fc2_biases"]

    def loss_fn(p, logits, labels):
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        reg = (tf.nn.l2_loss(p["fc1_weights"]) + tf.nn.l2_loss(p["fc1_biases"])
               + tf.nn.l2_loss(p["fc2_weights"]) + tf.nn.l2_loss(p["fc2_biases"]))
        return loss + 5e-4 * reg
    return p, model, loss_fn


def worker(module: str, steps: int, rounds: int) -> dict:
    import numpy as np
    if module == "ndflow":
        import ndflow as tf
        from ndflow.models.image.mnist import model as mnist
        from ndflow.runtime import plan as plan_module
        p = mnist.build_variables(tf.float32)
        model, loss_fn = mnist.model, mnist.regularized_loss
    else:
        import tensorflow as tf
        plan_module = None
        p, model, loss_fn = _tf_model(tf)
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)
    variables = list(p.values())

    @tf.function
    def train_step(data, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(p, model(p, data, train=True), labels)
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    rng = np.random.default_rng(0)
    data = tf.constant(rng.random((BATCH, 28, 28, 1), dtype=np.float32))
    labels = tf.constant(rng.integers(0, 10, BATCH).astype(np.int64))
    for _ in range(5):
        float(train_step(data, labels))

    def timed() -> float:
        t = time.perf_counter()
        for _ in range(steps):
            loss = train_step(data, labels)
        float(loss)
        return (time.perf_counter() - t) / steps * 1e3

    modes = {"off": [], "on": []}
    if plan_module is not None:
        modes["before"] = []
        hooked = plan_module.Plan.run

        def run_before(self, feed_values):  # Plan.run before the profiler hook (1f9df86)
            if self._measure_first_run:
                return self._measured_run(feed_values)
            return self._run(*feed_values)
    with tempfile.TemporaryDirectory() as logdir:
        for r in range(rounds):
            for mode in modes:
                if mode == "on":
                    tf.profiler.experimental.start(os.path.join(logdir, str(r)))
                    modes[mode].append(timed())
                    tf.profiler.experimental.stop()
                elif mode == "before":
                    plan_module.Plan.run = run_before
                    try:
                        modes[mode].append(timed())
                    finally:
                        plan_module.Plan.run = hooked
                else:
                    modes[mode].append(timed())
    result = {m: statistics.median(v) for m, v in modes.items()}
    if plan_module is not None:
        result["kernels"] = train_step.get_concrete_function(data, labels)._build_plan() \
            .num_kernels
        result["per_kernel_us"] = per_kernel_cost_us(tf)
    return result


def per_kernel_cost_us(tf, n_ops: int = 200, calls: int = 200) -> float:
    """What profiling adds per executed kernel: a chain of `n_ops` scalar adds (kernels too
    small to hide anything), best of 5 rounds, on minus off, per kernel. Less sensitive to a
    loaded machine than the MNIST step's ratio."""
    @tf.function
    def chain(x):
        for _ in range(n_ops):
            x = x + 1.0
        return x
    x = tf.constant(0.0)
    chain(x)
    logdir = tempfile.gettempdir()  # stop(save=False) writes nothing there

    def best(on: bool) -> float:
        times = []
        for _ in range(5):
            if on:
                tf.profiler.experimental.start(logdir)
            t = time.perf_counter()
            for _ in range(calls):
                chain(x)
            times.append(time.perf_counter() - t)
            if on:
                tf.profiler.experimental.stop(save=False)
        return min(times)
    off, on = best(False), best(True)
    return (on - off) / (calls * n_ops) * 1e6


def _run_worker(python: str, module: str, steps: int, rounds: int) -> dict | None:
    proc = subprocess.run([python, os.path.abspath(__file__), "--worker", module, "--steps",
                           str(steps), "--rounds", str(rounds)], capture_output=True, text=True,
                          cwd=tempfile.gettempdir() if module == "tensorflow" else None,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-2000:])
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30, help="steps per timed round")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds per mode")
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps, args.rounds)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    ours = worker("ndflow", args.steps, args.rounds)
    print(f"ndflow MNIST train step (batch {BATCH}), median of {args.rounds} rounds x "
          f"{args.steps} steps:")
    print(f"  profiler off    {ours['off']:8.2f} ms/step")
    print(f"  profiler on     {ours['on']:8.2f} ms/step   on/off     {ours['on'] / ours['off']:.3f}"
          f"  (bar <= 1.10)")
    print(f"  before the hook {ours['before']:8.2f} ms/step   off/before "
          f"{ours['off'] / ours['before']:.3f}  (bar: ~1.00)")
    cost = ours["per_kernel_us"]
    print(f"  profiling costs {cost:.2f} us per executed kernel; the step runs {ours['kernels']} "
          f"kernels: {cost * ours['kernels'] / 1e3:.3f} ms = "
          f"{100 * cost * ours['kernels'] / 1e3 / ours['off']:.2f}% of the off step")
    if os.path.exists(args.tf):
        theirs = _run_worker(args.tf, "tensorflow", args.steps, args.rounds)
        if theirs:
            print(f"TensorFlow, same step: off {theirs['off']:.2f} ms/step, profiler on "
                  f"{theirs['on']:.2f} ms/step (on/off {theirs['on'] / theirs['off']:.3f}); "
                  f"ndflow/TF off {ours['off'] / theirs['off']:.2f}x")
    else:
        print("  TensorFlow: not available")


if __name__ == "__main__":
    main()

"""Training-step time of the MNIST example's CNN: ndflow vs TensorFlow and PyTorch eager.

Times one step (forward, backward, momentum update) at batch 64 on the same data:
- ndflow Session (TF1 graph), ndflow tf.function, ndflow eager;
- TensorFlow graph mode (tf.function), when a TensorFlow interpreter is available
  (TF_PYTHON, default /work/tfvenv/bin/python; run as a subprocess on the same data, since
  ndflow never imports TensorFlow);
- PyTorch eager (torch.nn.functional + autograd + torch.optim.SGD);
- with --amp (default on): ndflow tf.function and TensorFlow with the bfloat16 mixed-precision
  graph rewrite (`auto_mixed_precision_onednn_bfloat16`), reported against float32 (the bar:
  ndflow AMP step <= 0.7x the ndflow float32 step);
- with --jit (default on): ndflow tf.function with auto-clustering (`tf.config.optimizer.
  set_jit(True)`) and with `jit_compile=True`, and TensorFlow with `jit_compile=True` (issue
  11's bar: ndflow's best configuration <= 0.8x TensorFlow graph mode and <= 0.8x PyTorch eager);
- with --loss-scale (default on): ndflow tf.function with the Keras `LossScaleOptimizer`
  (dynamic scaling, rewrite off) against the same step without it (bar: <= 1.03x).
Prints the median of at least 20 steps after warm-up for each, and ratios to TensorFlow. The
figures the bars compare in-process (ndflow's Session step, its tf.function step with
jit_compile, auto-jit and the loss-scale optimizer, and PyTorch eager) are timed in turn, in
blocks of up to 5 steps (in_turn.py; each step sets the global switches it was traced under, and a
function keeps its plan per setting).
With --device gpu, ndflow runs under `tf.device("/GPU:0")` and PyTorch on cuda:0 (each step
synchronized); the AMP rewrite is then the float16 one (`auto_mixed_precision`).

    python benchmarks/mnist_cnn.py [--steps 30] [--warmup 10] [--no-amp] [--device gpu]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from in_turn import StepServer, medians_in_turn
from keras_fit import train_flops  # the same CNN's FLOPs
from machine import cpu_line, floor_line  # benchmarks/ is the script's directory

import ndflow as tf
from ndflow.kernels import autotune
from ndflow.models.image.mnist.model import model, regularized_loss

BATCH = 64


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-0.5, 0.5, (BATCH, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, (BATCH,)).astype(np.int64)
    params = {
        "conv1_weights": rng.normal(0, 0.1, (5, 5, 1, 32)),
        "conv1_biases": np.zeros(32),
        "conv2_weights": rng.normal(0, 0.1, (5, 5, 32, 64)),
        "conv2_biases": np.full(64, 0.1),
        "fc1_weights": rng.normal(0, 0.1, (3136, 512)),
        "fc1_biases": np.full(512, 0.1),
        "fc2_weights": rng.normal(0, 0.1, (512, 10)),
        "fc2_biases": np.full(10, 0.1),
    }
    return x, y, {k: v.astype(np.float32) for k, v in params.items()}


DEVICE = "cpu"  # set by --device


def _sync() -> None:
    if DEVICE == "gpu":
        torch.cuda.synchronize()


def _tf_device() -> str:
    return "/GPU:0" if DEVICE == "gpu" else "/CPU:0"


def _amp_option() -> str:
    return "auto_mixed_precision" if DEVICE == "gpu" else "auto_mixed_precision_onednn_bfloat16"


def median_ms(step, steps: int, warmup: int) -> float:
    return paired_medians({"step": step}, steps, warmup)["step"]


def paired_medians(runs: dict, steps: int, warmup: int) -> dict:
    """Median ms of each callable, timed in turn in blocks of up to 5 steps (in_turn.py)."""
    return medians_in_turn(runs, steps, warmup, sync=_sync)


# -- ndflow ----------------------------------------------------------------------------------------

def _ndflow_loss(p, data, labels):
    """The example's own model and loss (ndflow/models/image/mnist/model.py)."""
    return regularized_loss(p, model(p, data, train=True), labels)


def ndflow_session(x, y, params):
    """One TF1 Session step as a callable; the session stays open while the callable lives
    (`run.close()` ends it)."""
    v1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default(), tf.device(_tf_device()):
        xp = v1.placeholder(tf.float32, [BATCH, 28, 28, 1])
        yp = v1.placeholder(tf.int64, [BATCH])
        p = {k: tf.Variable(v) for k, v in params.items()}
        loss = _ndflow_loss(p, xp, yp)
        train = v1.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
        init = v1.global_variables_initializer()
    sess = v1.Session(graph=g)
    sess.run(init)
    feed = {xp: x, yp: y}

    def run():
        tf.config.optimizer.set_experimental_options({_amp_option(): False})
        tf.config.optimizer.set_jit(False)
        return sess.run(train, feed)
    run.close = sess.close
    return run


def ndflow_function(x, y, params, steps, warmup, **options):
    return median_ms(ndflow_step(x, y, params, **options), steps, warmup)


def ndflow_step(x, y, params, eager=False, amp=False, jit=None, loss_scale=False,
                optimizer=None):
    """One training step as a callable. `jit`: None, "auto" (set_jit(True): auto-clustering)
    or "compile" (jit_compile=True). `optimizer`: a callable making the Keras optimizer
    (default: SGD with momentum 0.9)."""
    tf.config.optimizer.set_experimental_options({_amp_option(): amp})
    with tf.device(_tf_device()):
        p = {k: tf.Variable(v) for k, v in params.items()}
        xt, yt = tf.constant(x), tf.constant(y)
    variables = list(p.values())
    opt = optimizer() if optimizer else tf.keras.optimizers.SGD(0.01, momentum=0.9)
    if loss_scale:
        opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)

    def step(data, labels):
        with tf.GradientTape() as tape:
            loss = _ndflow_loss(p, data, labels)
            scaled = opt.get_scaled_loss(loss) if loss_scale else loss
        grads = tape.gradient(scaled, variables)
        if loss_scale:
            grads = opt.get_unscaled_gradients(grads)
        opt.apply_gradients(zip(grads, variables))
        return loss

    tf.config.optimizer.set_jit(jit == "auto")
    fn = step if eager else tf.function(step, jit_compile=True if jit == "compile" else None)

    def run():
        # the process-wide switches this step was traced under (a function keeps its plan
        # per setting, so steps of different settings can take turns)
        tf.config.optimizer.set_experimental_options({_amp_option(): amp})
        tf.config.optimizer.set_jit(jit == "auto")
        with tf.device(_tf_device()):
            return fn(xt, yt).numpy()
    return run


# -- PyTorch eager ---------------------------------------------------------------------------------

def torch_step(x, y, params, amp=False):
    """PyTorch eager; `amp`: the forward under `torch.autocast` (bfloat16 on the CPU, float16
    on a GPU), PyTorch's own mixed precision, to compare with the AMP rewrites."""
    dev = "cuda" if DEVICE == "gpu" else "cpu"
    amp_dtype = torch.float16 if DEVICE == "gpu" else torch.bfloat16
    p = {k: torch.tensor(v, device=dev, requires_grad=True) for k, v in params.items()}
    w1 = p["conv1_weights"].detach().permute(3, 2, 0, 1).contiguous().requires_grad_()
    w2 = p["conv2_weights"].detach().permute(3, 2, 0, 1).contiguous().requires_grad_()
    ps = [w1, p["conv1_biases"], w2, p["conv2_biases"], p["fc1_weights"], p["fc1_biases"],
          p["fc2_weights"], p["fc2_biases"]]
    opt = torch.optim.SGD(ps, lr=0.01, momentum=0.9)
    xt = torch.tensor(x, device=dev).permute(0, 3, 1, 2).contiguous()
    yt = torch.tensor(y, device=dev)

    def step():
        opt.zero_grad()
        with torch.autocast(dev, dtype=amp_dtype, enabled=amp):
            loss = forward()
        loss.backward()
        opt.step()

    def forward():
        h = F.max_pool2d(F.relu(F.conv2d(xt, w1, p["conv1_biases"], padding=2)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, w2, p["conv2_biases"], padding=2)), 2)
        h = F.relu(h.reshape(BATCH, -1) @ p["fc1_weights"] + p["fc1_biases"])
        h = F.dropout(h, 0.5)
        logits = h @ p["fc2_weights"] + p["fc2_biases"]
        return F.cross_entropy(logits, yt) + 5e-4 * 0.5 * sum(
            (p[k] ** 2).sum() for k in ("fc1_weights", "fc1_biases", "fc2_weights", "fc2_biases"))

    return step


# -- TensorFlow (subprocess) -----------------------------------------------------------------------

_TF_STEP = r"""
import json, sys, time
import numpy as np
import tensorflow as tf
d = np.load(sys.argv[1]); steps, warmup = int(sys.argv[2]), int(sys.argv[3])
mode = sys.argv[4] if len(sys.argv) > 4 else "f32"
if mode == "amp":
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision_onednn_bfloat16": True})
x, y = tf.constant(d["x"]), tf.constant(d["y"])
p = {k[2:]: tf.Variable(d[k]) for k in d.files if k.startswith("p_")}
variables = list(p.values())
opt = tf.keras.optimizers.SGD(0.01, momentum=0.9)
@tf.function(jit_compile=True if mode == "xla" else None)
def train_step(data, labels):
    with tf.GradientTape() as tape:
        conv = tf.nn.conv2d(data, p["conv1_weights"], [1, 1, 1, 1], "SAME")
        h = tf.nn.relu(tf.nn.bias_add(conv, p["conv1_biases"]))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        conv = tf.nn.conv2d(h, p["conv2_weights"], [1, 1, 1, 1], "SAME")
        h = tf.nn.relu(tf.nn.bias_add(conv, p["conv2_biases"]))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h = tf.nn.relu(tf.matmul(tf.reshape(h, [64, 3136]), p["fc1_weights"]) + p["fc1_biases"])
        h = tf.nn.dropout(h, rate=0.5, seed=1)
        logits = tf.matmul(h, p["fc2_weights"]) + p["fc2_biases"]
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        loss += 5e-4 * sum(tf.nn.l2_loss(p[k]) for k in
                           ("fc1_weights", "fc1_biases", "fc2_weights", "fc2_biases"))
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss
def step():
    train_step(x, y).numpy()
for _ in range(warmup): step()
ready_info = {"version": tf.__version__}
"""
_TF_SCRIPT = _TF_STEP + r"""
ts = []
for _ in range(steps):
    t = time.perf_counter(); step(); ts.append(time.perf_counter() - t)
print(json.dumps({"tf_graph_ms": 1000 * float(np.median(ts)), "version": tf.__version__}))
"""


def _tf_python():
    path = os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python")
    return path if os.path.exists(path) else None


def tensorflow_server(x, y, params, warmup, tmp: str):
    """TensorFlow's graph step as a StepServer (in_turn.py), taking its turns among
    ndflow's and PyTorch's steps; None (and why) when it cannot start."""
    tf_python = _tf_python()
    if tf_python is None:
        return None, "not installed"
    path = os.path.join(tmp, "data.npz")
    np.savez(path, x=x, y=y, **{"p_" + k: v for k, v in params.items()})
    try:
        server = StepServer(tf_python, _TF_STEP, [path, 0, warmup])
        return server, server.info["version"]
    except RuntimeError as e:
        return None, str(e).strip().splitlines()[-1] if str(e).strip() else "failed"


def tensorflow_graph(x, y, params, steps, warmup, mode="f32"):
    """`mode`: "f32", "amp" (the bf16 rewrite) or "xla" (jit_compile=True): timed on their
    own, in a subprocess."""
    tf_python = _tf_python()
    if tf_python is None:
        return None, "not installed"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        np.savez(path, x=x, y=y, **{"p_" + k: v for k, v in params.items()})
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        out = subprocess.run([tf_python, "-c", _TF_SCRIPT, path, str(steps), str(warmup),
                              mode],
                             capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return res["tf_graph_ms"], res["version"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--amp", action=argparse.BooleanOptionalAction, default=True,
                    help="also time the mixed-precision graph rewrite")
    ap.add_argument("--jit", action=argparse.BooleanOptionalAction, default=True,
                    help="also time auto-clustering and jit_compile=True")
    ap.add_argument("--loss-scale", action=argparse.BooleanOptionalAction, default=True,
                    help="also time the step with a dynamic LossScaleOptimizer")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    args = ap.parse_args(argv)
    global DEVICE
    DEVICE = args.device
    amp_name = "AMP fp16" if DEVICE == "gpu" else "AMP bf16"
    x, y, params = make_data()
    results = {}
    tmp = tempfile.TemporaryDirectory()
    server, tf_info = (tensorflow_server(x, y, params, args.warmup, tmp.name)
                       if DEVICE == "cpu" else (None, "not run on the GPU"))
    # the figures the bars compare, timed in turn (their ratios are what counts), TensorFlow's
    # graph step among them from its own process
    paired = {"ndflow Session (graph)": ndflow_session(x, y, params),
              "ndflow tf.function": ndflow_step(x, y, params),
              "PyTorch eager": torch_step(x, y, params)}
    tf_name = f"TensorFlow {tf_info} graph"
    if server is not None:
        paired[tf_name] = server
    if args.loss_scale:
        paired["ndflow tf.function LossScaleOptimizer"] = ndflow_step(x, y, params,
                                                                      loss_scale=True)
    if args.jit:
        paired["ndflow tf.function jit_compile"] = ndflow_step(x, y, params, jit="compile")
        paired["ndflow tf.function auto-jit"] = ndflow_step(x, y, params, jit="auto")
    results.update(paired_medians(paired, args.steps, args.warmup))
    tf.config.optimizer.set_jit(False)
    paired["ndflow Session (graph)"].close()
    if server is not None:
        server.close()
    tmp.cleanup()
    tf_ms = results.pop(tf_name, None)
    del paired
    if args.amp:
        amp_runs = {f"ndflow tf.function {amp_name}": ndflow_step(x, y, params, amp=True),
                    f"PyTorch eager autocast {amp_name[4:]}": torch_step(x, y, params, amp=True)}
        results.update(paired_medians(amp_runs, args.steps, args.warmup))
        del amp_runs
        tf.config.optimizer.set_experimental_options({_amp_option(): False})
    results["ndflow eager"] = ndflow_function(x, y, params, args.steps, args.warmup, eager=True)
    if tf_ms is not None:
        results[tf_name] = tf_ms
        if args.amp:
            tf_amp_ms, _ = tensorflow_graph(x, y, params, args.steps, args.warmup, mode="amp")
            if tf_amp_ms is not None:
                results[f"TensorFlow {tf_info} AMP bf16"] = tf_amp_ms
        if args.jit:
            tf_xla_ms, _ = tensorflow_graph(x, y, params, args.steps, args.warmup, mode="xla")
            if tf_xla_ms is not None:
                results[f"TensorFlow {tf_info} jit_compile"] = tf_xla_ms
    print(cpu_line())
    if DEVICE == "gpu":
        print(f"GPU: {torch.cuda.get_device_name(0)} (torch {torch.__version__})")
    print(f"MNIST CNN training step, batch {BATCH}, median of {args.steps} steps "
          f"after {args.warmup} warm-up")
    for name, ms in results.items():
        ratio = f"  {ms / tf_ms:5.2f}x TF graph" if tf_ms else ""
        print(f"  {name:40s} {ms:8.2f} ms{ratio}")
    if tf_ms is None:
        print(f"  TensorFlow: {tf_info}")
    if args.amp:
        amp_ratio = results[f"ndflow tf.function {amp_name}"] / results["ndflow tf.function"]
        print(f"  ndflow {amp_name} / ndflow float32 (tf.function): {amp_ratio:.2f}x "
              f"(bar <= 0.70x)")
    if args.loss_scale:
        ls_ratio = results["ndflow tf.function LossScaleOptimizer"] / results["ndflow tf.function"]
        print(f"  ndflow LossScaleOptimizer / ndflow float32 (tf.function): {ls_ratio:.3f}x "
              f"(bar <= 1.03x)")
    torch_ms = results["PyTorch eager"]
    ndflow_best = min(v for k, v in results.items() if k.startswith("ndflow") and "AMP" not in k
                      and "LossScale" not in k)
    if tf_ms:
        print(f"  ndflow best float32 / TF graph: {ndflow_best / tf_ms:.2f}x (bar <= 0.80x)")
    print(f"  ndflow best float32 / PyTorch eager: {ndflow_best / torch_ms:.2f}x (bar <= 0.80x)")
    print(f"  ndflow Session / PyTorch eager: {results['ndflow Session (graph)'] / torch_ms:.2f}x")
    if args.amp:   # like for like: each library's own mixed precision
        ours = results[f"ndflow tf.function {amp_name}"]
        for name, ms in results.items():
            if name != f"ndflow tf.function {amp_name}" and ("AMP" in name or "autocast" in name):
                print(f"  ndflow {amp_name} / {name}: {ours / ms:.2f}x")
    if DEVICE == "cpu":
        print(floor_line(train_flops(BATCH)) + " (direct convolutions; an FFT one needs fewer)")
        print(f"  a 0.80x bar on TF graph asks for {0.8 * tf_ms:.2f} ms" if tf_ms else "")
        chosen = sorted(autotune.choices().items(), key=str)
        print("  ndflow's convolution algorithms (autotuned): " + ", ".join(
            f"{kind} {x[1:3]}x{w[3]} {algorithm}" for (kind, x, w, *_), algorithm in chosen
            if kind != "gemm"))
        print("  ndflow's GEMM libraries (autotuned): " + ", ".join(
            f"{'x'.join(map(str, a))} @ {w[0]}: {algorithm}" for (kind, a, _, w, *_), algorithm
            in chosen if kind == "gemm"))
    return results


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

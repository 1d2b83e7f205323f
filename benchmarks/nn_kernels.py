"""NN kernel times on the MNIST CNN's shapes (batch 64): ndflow's ATen kernels vs TensorFlow.

    python benchmarks/nn_kernels.py [--tf /work/tfvenv/bin/python] [--reps 30]

ndflow kernels are instantiated through the kernel registry with static shapes, exactly as an
execution plan does, and called directly. TensorFlow (a subprocess; ndflow never imports it)
runs each raw op K times per tf.function call on K distinct inputs, so its per-call dispatch
is amortized. Both report the best (min over reps) milliseconds per op, robust to a
shared machine, and GFLOP/s for the convolutions.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory
from side_by_side import run_json  # noqa: E402 - benchmarks/ is the script's directory

import ndflow  # noqa: E402, F401 - registers ops and kernels
from ndflow.core import dtypes  # noqa: E402
from ndflow.core.shapes import TensorShape  # noqa: E402
from ndflow.kernels import registry  # noqa: E402
from ndflow.ops import nn_activation, nn_conv, nn_loss, nn_pool

K = 8
S1, S2, K2 = [1, 1, 1, 1], [1, 2, 2, 1], [1, 2, 2, 1]
CONV = {"strides": S1, "padding": "SAME", "explicit_paddings": [], "data_format": "NHWC",
        "dilations": [1, 1, 1, 1], "use_cudnn_on_gpu": True, "T": dtypes.float32}
POOL = {"ksize": K2, "strides": S2, "padding": "SAME", "explicit_paddings": [],
        "data_format": "NHWC", "T": dtypes.float32}
# name: (op, attrs, input shapes (None = int32 sizes input), output shape, GFLOP)
CASES = {
    "conv1 Conv2D": (nn_conv.Conv2D, CONV, [(64, 28, 28, 1), (5, 5, 1, 32)], (64, 28, 28, 32),
                     2 * 64 * 28 * 28 * 32 * 25 * 1 / 1e9),
    "conv1 BackpropFilter": (nn_conv.Conv2DBackpropFilter, CONV,
                             [(64, 28, 28, 1), None, (64, 28, 28, 32)], (5, 5, 1, 32),
                             2 * 64 * 28 * 28 * 32 * 25 / 1e9),
    "conv2 Conv2D": (nn_conv.Conv2D, CONV, [(64, 14, 14, 32), (5, 5, 32, 64)], (64, 14, 14, 64),
                     2 * 64 * 14 * 14 * 64 * 25 * 32 / 1e9),
    "conv2 BackpropInput": (nn_conv.Conv2DBackpropInput, CONV,
                            [None, (5, 5, 32, 64), (64, 14, 14, 64)], (64, 14, 14, 32),
                            2 * 64 * 14 * 14 * 64 * 25 * 32 / 1e9),
    "conv2 BackpropFilter": (nn_conv.Conv2DBackpropFilter, CONV,
                             [(64, 14, 14, 32), None, (64, 14, 14, 64)], (5, 5, 32, 64),
                             2 * 64 * 14 * 14 * 64 * 25 * 32 / 1e9),
    "BiasAdd 64x28x28x32": (nn_conv.BiasAdd, {"data_format": "NHWC", "T": dtypes.float32},
                            [(64, 28, 28, 32), (32,)], (64, 28, 28, 32), 0),
    "BiasAddGrad 64x28x28x32": (nn_conv.BiasAddGrad, {"data_format": "NHWC", "T": dtypes.float32},
                                [(64, 28, 28, 32)], (32,), 0),
    "Relu 64x28x28x32": (nn_activation.Relu, {"T": dtypes.float32}, [(64, 28, 28, 32)],
                         (64, 28, 28, 32), 0),
    "ReluGrad 64x28x28x32": (nn_activation.ReluGrad, {"T": dtypes.float32},
                             [(64, 28, 28, 32), (64, 28, 28, 32)], (64, 28, 28, 32), 0),
    "MaxPool 64x28x28x32": (nn_pool.MaxPool, POOL, [(64, 28, 28, 32)], (64, 14, 14, 32), 0),
    "MaxPoolGrad 64x28x28x32": (nn_pool.MaxPoolGrad, POOL,
                                [(64, 28, 28, 32), (64, 14, 14, 32), (64, 14, 14, 32)],
                                (64, 28, 28, 32), 0),
    "MaxPool 64x14x14x64": (nn_pool.MaxPool, POOL, [(64, 14, 14, 64)], (64, 7, 7, 64), 0),
    "MaxPoolGrad 64x14x14x64": (nn_pool.MaxPoolGrad, POOL,
                                [(64, 14, 14, 64), (64, 7, 7, 64), (64, 7, 7, 64)],
                                (64, 14, 14, 64), 0),
    "SparseXent 64x10": (nn_loss.SparseSoftmaxCrossEntropyWithLogits,
                         {"T": dtypes.float32, "Tlabels": dtypes.int32}, [(64, 10), "labels"],
                         (64,), 0),
    "L2Loss 3136x512": (nn_loss.L2Loss, {"T": dtypes.float32}, [(3136, 512)], (), 0),
}

_TF_SCRIPT = r"""
import json, sys, time
import numpy as np
import tensorflow as tf
reps, K = int(sys.argv[1]), int(sys.argv[2])
cases = json.loads(sys.argv[3])
rng = np.random.default_rng(0)
R = tf.raw_ops
S1, S2 = [1, 1, 1, 1], [1, 2, 2, 1]
ops = {
 "conv1 Conv2D": lambda a: R.Conv2D(input=a[0], filter=a[1], strides=S1, padding="SAME"),
 "conv1 BackpropFilter": lambda a: R.Conv2DBackpropFilter(input=a[0], filter_sizes=[5,5,1,32],
     out_backprop=a[2], strides=S1, padding="SAME"),
 "conv2 Conv2D": lambda a: R.Conv2D(input=a[0], filter=a[1], strides=S1, padding="SAME"),
 "conv2 BackpropInput": lambda a: R.Conv2DBackpropInput(input_sizes=[64,14,14,32],
     filter=a[1], out_backprop=a[2], strides=S1, padding="SAME"),
 "conv2 BackpropFilter": lambda a: R.Conv2DBackpropFilter(input=a[0],
     filter_sizes=[5,5,32,64], out_backprop=a[2], strides=S1, padding="SAME"),
 "BiasAdd 64x28x28x32": lambda a: R.BiasAdd(value=a[0], bias=a[1]),
 "BiasAddGrad 64x28x28x32": lambda a: R.BiasAddGrad(out_backprop=a[0]),
 "Relu 64x28x28x32": lambda a: R.Relu(features=a[0]),
 "ReluGrad 64x28x28x32": lambda a: R.ReluGrad(gradients=a[0], features=a[1]),
 "MaxPool 64x28x28x32": lambda a: R.MaxPool(input=a[0], ksize=S2, strides=S2, padding="SAME"),
 "MaxPoolGrad 64x28x28x32": lambda a: R.MaxPoolGrad(orig_input=a[0], orig_output=R.MaxPool(
     input=a[0], ksize=S2, strides=S2, padding="SAME"), grad=a[2], ksize=S2, strides=S2,
     padding="SAME"),
 "MaxPool 64x14x14x64": lambda a: R.MaxPool(input=a[0], ksize=S2, strides=S2, padding="SAME"),
 "MaxPoolGrad 64x14x14x64": lambda a: R.MaxPoolGrad(orig_input=a[0], orig_output=R.MaxPool(
     input=a[0], ksize=S2, strides=S2, padding="SAME"), grad=a[2], ksize=S2, strides=S2,
     padding="SAME"),
 "SparseXent 64x10": lambda a: R.SparseSoftmaxCrossEntropyWithLogits(features=a[0],
     labels=a[1])[0],
 "L2Loss 3136x512": lambda a: R.L2Loss(t=a[0]),
}
out = {}
for name, shapes in cases.items():
    sets = []
    for _ in range(K):
        args = []
        for s in shapes:
            if s is None: args.append(None)
            elif s == "labels": args.append(tf.constant(rng.integers(0, 10, 64).astype(np.int32)))
            else: args.append(tf.constant(rng.standard_normal(s).astype(np.float32)))
        sets.append(args)
    fn = ops[name]
    f = tf.function(lambda sets: [fn(a) for a in sets])
    for _ in range(5): f(sets)
    times = []
    for _ in range(reps):
        t = time.perf_counter(); r = f(sets); _ = r[-1].numpy()
        times.append(time.perf_counter() - t)
    extra = 0.0
    if name.startswith("MaxPoolGrad"):  # the forward MaxPool that feeds orig_output
        g = tf.function(lambda sets: [R.MaxPool(input=a[0], ksize=S2, strides=S2,
                                                padding="SAME") for a in sets])
        for _ in range(5): g(sets)
        ts = []
        for _ in range(reps):
            t = time.perf_counter(); r = g(sets); _ = r[-1].numpy()
            ts.append(time.perf_counter() - t)
        extra = float(np.min(ts))
    out[name] = (float(np.min(times)) - extra) / K * 1e3
print(json.dumps(out))
"""


def _tensor(shape, rng):
    if shape == "labels":
        return torch.from_numpy(rng.integers(0, 10, 64).astype(np.int32))
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


def measure_ndflow(reps: int) -> dict:
    rng = np.random.default_rng(0)
    out = {}
    for name, (op, attrs, shapes, out_shape, _) in CASES.items():
        args = []
        in_shapes, in_dtypes = [], []
        for s in shapes:
            if s is None:
                args.append(torch.tensor(out_shape, dtype=torch.int32))
                in_shapes.append(TensorShape([4]))
                in_dtypes.append(dtypes.int32)
            else:
                t = _tensor(s, rng)
                args.append(t)
                in_shapes.append(TensorShape(list(t.shape)))
                in_dtypes.append(dtypes.int32 if s == "labels" else dtypes.float32)
        n_out = len(op.outputs)
        node = registry.NodeInfo(name, op, attrs, in_dtypes, in_shapes, [dtypes.float32] * n_out,
                                 [TensorShape(list(out_shape))] * n_out, torch.device("cpu"))
        fn = registry.lookup(op)(node)
        for _ in range(5):
            fn(*args)
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            for _ in range(K):
                fn(*args)
            times.append((time.perf_counter() - t) / K)
        out[name] = float(np.min(times)) * 1e3
    return out


def measure_tf(python: str, reps: int) -> dict | None:
    if not python or not os.path.exists(python):
        return None
    shapes = {k: v[2] for k, v in CASES.items()}
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return run_json([python, "-c", _TF_SCRIPT, str(reps), str(K), json.dumps(shapes)],
                    "TensorFlow", env=env)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    nd = measure_ndflow(a.reps)
    tfm = measure_tf(a.tf, a.reps)
    print(cpu_line())
    print(f"{'op (MNIST CNN shapes, batch 64)':34s} {'ndflow ms':>10s} {'TF ms':>8s} "
          f"{'TF/ndflow':>9s} {'GFLOP':>7s} {'ndflow GFLOP/s':>14s}")
    for name, (_, _, _, _, gflop) in CASES.items():
        t = tfm.get(name) if tfm else None
        ratio = f"{t / nd[name]:9.2f}" if t else f"{'-':>9s}"
        tf_s = f"{t:8.3f}" if t else f"{'-':>8s}"
        rate = f"{gflop / nd[name] * 1e3:14.0f}" if gflop else ""
        gf = f"{gflop:7.3f}" if gflop else f"{'':7s}"
        print(f"{name:34s} {nd[name]:10.3f} {tf_s} {ratio} {gf} {rate}")


if __name__ == "__main__":
    main()

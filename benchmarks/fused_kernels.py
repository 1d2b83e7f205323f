"""Generated fused kernels (ndflow.jit.codegen, numba) against ATen op by op.

Three regions, each planned by `plan_fusions` and compiled with `compile_fusion`:
- a 3-op elementwise chain `relu(x * 2 + y)` on 4M float32;
- LayerNorm written as ops (mean, x - mean, mean of squares, rsqrt, scale, shift), [256, 1024];
- GELU in its tanh form written as ops, [256, 4096].
ATen op by op runs the ops' registered ndflow kernels (what graph mode runs unclustered). The
median of `--reps` runs is printed, with the compile time of the region's kernels.

    python benchmarks/fused_kernels.py [--reps 50] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ndflow as tf  # noqa: E402
from benchmarks.machine import cpu_line  # noqa: E402
from ndflow.core import dtypes  # noqa: E402
from ndflow.jit.codegen import compile_fusion  # noqa: E402
from ndflow.jit.fusion import FusionGroup, plan_fusions  # noqa: E402
from ndflow.kernels import registry  # noqa: E402
from ndflow.ops.apply import apply_op  # noqa: E402
from ndflow.ops.op_def import REGISTRY  # noqa: E402

F32 = dtypes.float32
CPU = torch.device("cpu")


def raw(name, *inputs, **attrs):
    return apply_op(REGISTRY[name], list(inputs), attrs).outputs[0]


def chain(x, y):
    return raw("Relu", raw("AddV2", raw("Mul", x, tf.constant(2.0)), y))


def layer_norm(x, gamma, beta):
    ax = tf.constant([1])
    mean = raw("Mean", x, ax, keep_dims=True)
    d = raw("Sub", x, mean)
    var = raw("Mean", raw("Square", d), ax, keep_dims=True)
    y = raw("Mul", d, raw("Rsqrt", raw("AddV2", var, tf.constant(1e-5))))
    return raw("AddV2", raw("Mul", y, gamma), beta)


def gelu_tanh(x):
    c = tf.constant
    inner = raw("Mul", c(0.7978845608), raw("AddV2", x, raw("Mul", c(0.044715),
                                                             raw("Mul", x, raw("Square", x)))))
    return raw("Mul", raw("Mul", c(0.5), x), raw("AddV2", c(1.0), raw("Tanh", inner)))


def region(fn, shapes):
    g = tf.Graph()
    with g.as_default():
        phs = [tf.compat.v1.placeholder(F32, s) for s in shapes]
        out = fn(*phs)
    ops = [op for op in g.get_operations() if op.type != "Placeholder"]
    return phs, out, ops


def unfused_runner(ops, phs):
    steps = []
    for op in ops:
        if op.type == "Const":
            steps.append((op, None))
            continue
        node = registry.NodeInfo.for_op(op, CPU)
        steps.append((op, registry.kernel_for(node)(node)))

    def run(feeds):
        vals = dict(zip(phs, feeds))
        for op, fn in steps:
            if fn is None:
                vals[op.outputs[0]] = torch.tensor(np.asarray(op.attrs["value"]))
            else:
                vals[op.outputs[0]] = fn(*[vals[t] for t in op.inputs])
        return vals
    return run


def fused_runner(ops, phs, out, cache_dir):
    plan = plan_fusions(ops, [out])
    compiled, t0 = [], time.perf_counter()
    shapes = {p: tuple(p.shape.as_list()) for p in phs}
    for unit in plan:
        if isinstance(unit, FusionGroup):
            specs = [(t.dtype, shapes.get(t) or tuple(t.shape.as_list())) for t in unit.inputs]
            compiled.append((unit, compile_fusion(unit, specs, CPU, cache_dir)))
        else:
            node = registry.NodeInfo.for_op(unit, CPU)
            compiled.append((unit, registry.kernel_for(node)(node)))
    compile_s = time.perf_counter() - t0

    def run(feeds):
        vals = dict(zip(phs, feeds))
        for unit, fn in compiled:
            if isinstance(unit, FusionGroup):
                for t, v in zip(unit.outputs, fn(*[vals[t] for t in unit.inputs])):
                    vals[t] = v
            else:
                vals[unit.outputs[0]] = fn(*[vals[t] for t in unit.inputs])
        return vals
    groups = sum(isinstance(u, FusionGroup) for u in plan)
    return run, compile_s, groups


def timed(fn, feeds, reps):
    for _ in range(3):
        fn(feeds)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn(feeds)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(cpu_line())
    cache_dir = tempfile.mkdtemp(prefix="ndflow-bench-kernels-")
    cases = [("3-op chain relu(x*2+y), 4M f32", chain, [[4 << 20], [4 << 20]]),
             ("LayerNorm as ops [256,1024]", layer_norm, [[256, 1024], [1024], [1024]]),
             ("GELU-tanh as ops [256,4096]", gelu_tanh, [[256, 4096]])]
    rng = np.random.default_rng(0)
    for name, fn, shapes in cases:
        phs, out, ops = region(fn, shapes)
        feeds = [torch.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]
        unfused = unfused_runner(ops, phs)
        fused, compile_s, groups = fused_runner(ops, phs, out, cache_dir)
        want, got = unfused(feeds)[out], fused(feeds)[out]
        err = float((want - got).abs().max())
        t_aten, t_fused = timed(unfused, feeds, args.reps), timed(fused, feeds, args.reps)
        n_ops = sum(op.type != "Const" for op in ops)
        print(f"{name}: ATen {n_ops} ops {t_aten * 1e3:.3f} ms, fused {groups} kernels "
              f"{t_fused * 1e3:.3f} ms -> {t_fused / t_aten:.2f}x (compile {compile_s:.2f} s, "
              f"max |diff| {err:.1e})")


if __name__ == "__main__":
    main()

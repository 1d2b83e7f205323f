"""Small cluster function graphs for the compile-side JIT tests, with their fallback."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import torch

import ndflow as tf
from ndflow.runtime.func_graph import FuncGraph
from ndflow.runtime.plan import Plan

_names = itertools.count()


def unique_cluster_name() -> str:
    """A cluster name no other test uses (the profiler keeps stats per name per process)."""
    return f"test_cluster_{next(_names)}"


@dataclass(frozen=True)
class Flags:
    """The TF_XLA_FLAGS fields the compile side reads, with TensorFlow's defaults."""

    tf_xla_enable_lazy_compilation: bool = True
    tf_xla_always_defer_compilation: bool = False
    tf_xla_async_compilation: bool = False
    tf_xla_persistent_cache_directory: str = ""
    tf_xla_persistent_cache_prefix: str = "xla_compile_cache"
    tf_xla_threshold_for_megamorphic: int = 0


def build(fn, specs, name: str | None = None) -> FuncGraph:
    """A FuncGraph whose inputs are placeholders of `specs` [(dtype, shape)] and whose outputs
    are `fn(*placeholders)` (a tensor or a list)."""
    fg = FuncGraph(name or unique_cluster_name())
    with fg.as_default():
        phs = [fg.add_placeholder(dt, shape, f"arg{i}") for i, (dt, shape) in enumerate(specs)]
        out = fn(*phs)
    fg.arg_inputs = phs
    fg.outputs = list(out) if isinstance(out, (list, tuple)) else [out]
    return fg


def mlp_block(x, w, b):
    """MatMul + BiasAdd + Relu (+ an elementwise tail and a reduction)."""
    y = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b))
    return [y, tf.reduce_sum(y * 2.0 + 1.0, axis=1)]


def elementwise_chain(x, y):
    z = tf.tanh(x * y + 1.0) - tf.exp(-tf.abs(x)) / (1.0 + y * y)
    return [tf.maximum(z, 0.1) * 3.0]


def reductions(x):
    m = tf.reduce_mean(x, axis=-1, keepdims=True)
    v = tf.reduce_mean(tf.square(x - m), axis=-1, keepdims=True)
    return [(x - m) * tf.math.rsqrt(v + 1e-5), tf.reduce_max(x, axis=0), tf.reduce_sum(x)]


def scatter_segments(x, ids, rows):
    """The library ops of embedding gradients and scatters: segment sums and maxima of rows,
    a ScatterNd into a new tensor and updates of an existing one."""
    summed = tf.math.unsorted_segment_sum(x * 2.0, ids, 3)
    peak = tf.math.unsorted_segment_max(x, ids, 3)
    spread = tf.scatter_nd(rows, x[:2], [5, 4])
    updated = tf.tensor_scatter_nd_add(tf.zeros([5, 4]) + 1.0, rows, x[1:3])
    return [summed + peak, spread, tf.tensor_scatter_nd_update(updated, rows, x[:2] * 3.0)]


class CountingFallback:
    """The uncompiled function (a runtime Plan of the cluster), counting its calls."""

    def __init__(self, fg):
        self.fg = fg
        self._plan = None
        self.calls = 0

    @property
    def plan(self) -> Plan:
        if self._plan is None:
            self._plan = Plan(self.fg, self.fg.inputs, self.fg.outputs, [], None)
        return self._plan

    def __call__(self, args):
        self.calls += 1
        return self.plan.run(args)


def randn(*shape, dtype=torch.float32, seed=0):
    g = np.random.default_rng(seed + sum(shape))
    return torch.from_numpy(g.standard_normal(shape).astype(np.float32)).to(dtype)

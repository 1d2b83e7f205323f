"""Randomized graphs (hypothesis): auto-clustering and encapsulation never change what a graph
computes. Graphs mix compilable ops with Asinh, which ndflow's JIT tables leave out, so
clusters are cut in random places; clusters run their plain fallback here (the compiler's
own equivalence tests live with it)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ndflow as tf
from ndflow.core import optimizer_options
from ndflow.runtime import xla_cluster_kernel

UNARY = {"relu": (tf.nn.relu, lambda a: np.maximum(a, 0)),
         "tanh": (tf.tanh, np.tanh),
         "asinh": (tf.math.asinh, np.arcsinh),          # not compilable: splits clusters
         "exp": (lambda t: tf.exp(t * 0.1), lambda a: np.exp(a * np.float32(0.1)))}
BINARY = {"add": (tf.add, np.add), "mul": (tf.multiply, np.multiply),
          "sub": (tf.subtract, np.subtract), "max": (tf.maximum, np.maximum)}

node = st.one_of(
    st.tuples(st.sampled_from(sorted(UNARY)), st.integers(0, 50)),
    st.tuples(st.sampled_from(sorted(BINARY)), st.integers(0, 50), st.integers(0, 50)))


def _build(nodes, lib: int, x, n_out: int):
    """Values of the random program over inputs `x` (lib 0: ndflow ops, 1: NumPy)."""
    values = list(x)
    for spec in nodes:
        args = [values[i % len(values)] for i in spec[1:]]
        table = UNARY if len(args) == 1 else BINARY
        values.append(table[spec[0]][lib](*args))
    return values[-n_out:]


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(nodes=st.lists(node, min_size=3, max_size=16), n_out=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_clustered_random_graphs_compute_what_they_did(nodes, n_out, seed):
    rng = np.random.default_rng(seed)
    x = [rng.standard_normal(5).astype(np.float32) for _ in range(2)]
    saved = xla_cluster_kernel.DeviceCompiler
    xla_cluster_kernel.DeviceCompiler = None
    optimizer_options.set_jit(True)
    try:
        f = tf.function(lambda a, b: _build(nodes, 0, [a, b], n_out))
        got = [t.numpy() for t in f(tf.constant(x[0]), tf.constant(x[1]))]
        optimized = f.get_concrete_function(tf.constant(x[0]), tf.constant(x[1])) \
            .optimized_graph()
    finally:
        optimizer_options.set_jit(False)
        xla_cluster_kernel.DeviceCompiler = saved
    want = _build(nodes, 1, x, n_out)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    for op in optimized.get_operations():  # every cluster is a call; none is left marked
        assert "_XlaCluster" not in op.attrs
        if op.type == "_XlaClusterCall":
            assert all("_XlaAlreadyClustered" in o.attrs
                       for o in op.attrs["function"].get_operations()
                       if o.type != "Placeholder")

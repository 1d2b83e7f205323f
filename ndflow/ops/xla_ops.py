"""`_XlaClusterCall`: one auto-clustered region of a graph, run by ndflow's JIT.

    _XlaClusterCall(args: Tin) -> output: Tout
        function     the cluster as a function graph (inputs: its placeholders; outputs)
        cluster_name cluster_<n>, as TF names clusters
        must_compile tf.function(jit_compile=True): compile or fail, no fallback

ndflow-internal (TF builds _XlaCompile/_XlaRun pairs instead): the encapsulation pass
(ndflow/passes/encapsulate_clusters.py) emits it on the optimized copy of a graph, after
autodiff, so it needs no gradient. Its kernel (ndflow/runtime/xla_cluster_kernel.py) compiles
the function per input signature and falls back to running it as a plain graph.
"""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops.op_def import op_def


def _cluster_shapes(ctx) -> list:
    fg = ctx.attrs.get("function")
    outputs = getattr(fg, "outputs", None)
    n = len(ctx.attrs.get("Tout", []))
    if outputs is None or len(outputs) != n:
        return [TensorShape(None)] * n
    return [t.shape for t in outputs]


XlaClusterCall = op_def(
    "_XlaClusterCall", inputs=["args: Tin"], outputs=["output: Tout"],
    attrs=["Tin: list(type)", "Tout: list(type)", "function: func",
           "cluster_name: string", "must_compile: bool = false"],
    shape=_cluster_shapes, functional=True, gradient_undefined=True,
    doc="output = function(args), compiled by the JIT (with a fallback unless must_compile)")

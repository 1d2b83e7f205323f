"""The kernel of `_XlaClusterCall` (one auto-clustered region, ndflow/ops/xla_ops.py).

Kernels of layer 2 cannot run graphs, so the runtime registers this one, as it does If/While:
the cluster's function graph is the fallback, compiled (on first need) into a sub-`Plan`
through the one compile path with the enclosing plan's pass configuration and runtime
context; the JIT's `DeviceCompiler` (ndflow/jit/device_compiler.py) decides per call whether
to run a compiled executable or the fallback (TF's lazy/strict/async policy, xla.md 2.2-2.4):

    outputs = DeviceCompiler(cluster_name, fg, device, flags, must_compile).run(args, fallback)

The cluster's ops carry `_XlaAlreadyClustered`, so compiling the fallback never clusters them
again.
"""

from __future__ import annotations

import threading

from ndflow.jit.flags import xla_flags
from ndflow.kernels import registry
from ndflow.ops.xla_ops import XlaClusterCall
from ndflow.runtime.control_flow_kernels import compile_function

try:  # the compile side (ndflow/jit/device_compiler.py) lands separately
    from ndflow.jit.device_compiler import DeviceCompiler
except ImportError:  # until then every cluster runs its fallback
    DeviceCompiler = None


class _Fallback:
    """The cluster function as a plain graph, compiled into a Plan on first use."""

    def __init__(self, node):
        self._node = node
        self._plan = None
        self._lock = threading.Lock()

    def __call__(self, args: list) -> list:
        if self._plan is None:
            with self._lock:
                if self._plan is None:
                    node = self._node
                    self._plan = compile_function(node.attrs["function"], node.ctx,
                                                  node.pass_config)
        return self._plan.run(list(args))


def _pack(outs: list, n: int):
    if n == 1:
        return outs[0]
    return None if n == 0 else tuple(outs)


@registry.kernel(XlaClusterCall)
def _xla_cluster_kernel(node):
    fallback = _Fallback(node)
    n = len(node.output_dtypes)
    if DeviceCompiler is None:
        def run(*args):
            return _pack(fallback(args), n)
        return run
    compiler = DeviceCompiler(node.attrs["cluster_name"], node.attrs["function"], node.device,
                              xla_flags(), bool(node.attrs.get("must_compile", False)))

    def run_compiled(*args):
        return _pack(compiler.run(list(args), fallback), n)
    return run_compiled

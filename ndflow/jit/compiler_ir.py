"""`tf.function(jit_compile=True).experimental_get_compiler_ir(*args)(stage=...)`: the IR of
the function compiled for those arguments, without running it.

TensorFlow returns XLA's HLO; ndflow compiles no HLO and returns its own stages (jit/dump.py):
`hlo` the cluster's graph specialized to the signature (GraphDef text), `optimized_hlo` the
generated function and fused kernels, `optimized_hlo_dot` the graph with its fused kernels in
DOT, and the `*_serialized` stages those texts as UTF-8 bytes (TensorFlow gives a serialized
HloModuleProto there). Stage names and errors are TensorFlow's: an unknown stage, a function
not marked `jit_compile=True`, an input of unknown shape are ValueErrors.
"""

from __future__ import annotations

from ndflow.core import devices
from ndflow.jit import dump
from ndflow.jit.executable import compile_cluster

STAGES = ("hlo", "hlo_serialized", "optimized_hlo", "optimized_hlo_serialized",
          "optimized_hlo_dot")
_TEXT = {"hlo": dump.before_optimizations, "optimized_hlo": dump.after_optimizations,
         "optimized_hlo_dot": dump.dot}


def _compiled(graph, device_name):
    """An executable per `_XlaClusterCall` of `graph`, compiled for its static input shapes."""
    out = []
    for op in graph.get_operations():
        if op.type != "_XlaClusterCall":
            continue
        specs = []
        for t in op.inputs:
            if not t.shape.is_fully_defined():
                raise ValueError(f"Only support static input shape but got inputs = {t}")
            specs.append((t.dtype, tuple(t.shape.as_list())))
        device = devices.to_torch_device(device_name or op.device or None)
        out.append(compile_cluster(op.attrs["function"], specs, device,
                                   name=op.attrs["cluster_name"]))
    return out


def generator(concrete_function):
    """TF's `compiler_ir_generator(stage='hlo', device_name=None, platform_name=None)` for a
    concrete function traced with `jit_compile=True`."""
    made: dict = {}

    def compiler_ir_generator(stage="hlo", device_name=None, platform_name=None):
        if stage not in STAGES:
            raise ValueError(f"Invalid stage selected: '{stage}'. Valid values are: "
                             f"{', '.join(repr(s) for s in STAGES)}")
        inputs = concrete_function.inputs
        if not all(t.shape.is_fully_defined() for t in inputs):
            raise ValueError(f"Only support static input shape but got inputs = {inputs!r}")
        # TF's platform_name ("CPU", "GPU") stands for that platform's first device
        device = device_name or (f"/device:{platform_name}:0" if platform_name else None)
        if device not in made:
            made[device] = _compiled(concrete_function.optimized_graph(), device)
        text = _TEXT[stage.replace("_serialized", "")]
        ir = "\n".join(text(exe) for exe in made[device])
        return ir.encode() if stage.endswith("_serialized") else ir

    return compiler_ir_generator

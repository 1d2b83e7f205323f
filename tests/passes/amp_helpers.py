"""Helpers for the auto-mixed-precision tests: building graphs by op type, stand-in ops,
running the pass in a given mode, and reading every node's type attrs.

Stand-in OpDefs (with do-nothing kernels, so `SupportsF16` sees a kernel) for TensorFlow ops
ndflow does not have: `SparseMatMul` (unlisted; where ndflow lacks it), `Inv`, `FusedBatchNorm`,
`FusedBatchNormV2`, `FusedBatchNormGrad`, `FusedBatchNormGradV2` (TF's v1/v2 signatures),
and `NdflowTestCustomOp` (an unknown custom op).
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.graph import Graph
from ndflow.core.shapes import TensorShape
from ndflow.kernels.registry import kernel
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import constant, placeholder
from ndflow.ops.op_def import REGISTRY, is_registered, lookup, op_def
from ndflow.passes.amp.auto_mixed_precision import auto_mixed_precision
from ndflow.passes.amp.lists import Mode
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext

F, H, B = dtypes.float32, dtypes.float16, dtypes.bfloat16
GPU_V100 = {"architecture": "7", "cuda": 9010}   # TF's virtual test GPU (no cudnn key)


def _same(ctx):
    return [ctx.shapes[0]]


def _stub(node):
    return lambda *xs: xs[0]


def _register_stand_ins() -> None:
    if "NdflowTestCustomOp" in REGISTRY:
        return
    defs = [] if is_registered("SparseMatMul") else [   # (ndflow has it: tf.sparse_matmul)
        op_def("SparseMatMul", inputs=["a: Ta", "b: Tb"], outputs=["product: float"],
               attrs=["transpose_a: bool = false", "transpose_b: bool = false",
                      "a_is_sparse: bool = false", "b_is_sparse: bool = false",
                      "Ta: {float, bfloat16} = DT_FLOAT", "Tb: {float, bfloat16} = DT_FLOAT"],
               shape=lambda ctx: [TensorShape([ctx.shapes[0][0], ctx.shapes[1][1]])])]
    defs += [
        op_def("Inv", inputs=["x: T"], outputs=["y: T"],
               attrs=["T: {half, bfloat16, float, double}"], shape=_same),
        op_def("NdflowTestCustomOp", inputs=["x: T"], outputs=["y: T"],
               attrs=["T: {half, bfloat16, float, double}"], shape=_same),
    ]
    bn_attrs = ["epsilon: float = 0.0001", "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
                "is_training: bool = true"]
    bn_out = ["y: T", "batch_mean: U", "batch_variance: U", "reserve_space_1: U",
              "reserve_space_2: U"]
    bn_grad_out = ["x_backprop: T", "scale_backprop: U", "offset_backprop: U",
                   "reserve_space_3: U", "reserve_space_4: U"]

    def bn_shape(ctx):
        c = TensorShape([ctx.shapes[0][-1]])
        return [ctx.shapes[0], c, c, c, c]
    v1_in = ["x: T", "scale: T", "offset: T", "mean: T", "variance: T"]
    v1_out = [s.replace(": U", ": T") for s in bn_out]
    defs.append(op_def("FusedBatchNorm", inputs=v1_in, outputs=v1_out,
                       attrs=["T: {float}", *bn_attrs], shape=bn_shape))
    defs.append(op_def("FusedBatchNormV2",
                       inputs=["x: T", "scale: U", "offset: U", "mean: U", "variance: U"],
                       outputs=bn_out, attrs=["T: {half, bfloat16, float}", "U: {float}",
                                              *bn_attrs], shape=bn_shape))
    g_in = ["y_backprop: T", "x: T", "scale: T", "reserve_space_1: T", "reserve_space_2: T"]
    defs.append(op_def("FusedBatchNormGrad", inputs=g_in,
                       outputs=[s.replace(": U", ": T") for s in bn_grad_out],
                       attrs=["T: {float}", *bn_attrs], shape=bn_shape))
    defs.append(op_def("FusedBatchNormGradV2",
                       inputs=["y_backprop: T", "x: T", "scale: float", "reserve_space_1: U",
                               "reserve_space_2: U"],
                       outputs=bn_grad_out, attrs=["T: {half, bfloat16, float}", "U: {float}",
                                                   *bn_attrs], shape=bn_shape))
    for d in defs:
        kernel(d)(_stub)


_register_stand_ins()


def op(type_: str, *inputs, name: str, **attrs):
    """Adds an op by TF type name to the default graph; returns its first output."""
    return apply_op(lookup(type_), list(inputs), attrs or None, name=name).outputs[0]


def const(name: str, value=1.0 / 32, shape=(32, 32), dtype=np.float32):
    return constant(np.full(shape, value, dtype), name=name)


def ph(name: str, shape=(32, 32), dtype=F):
    return placeholder(dtype, list(shape), name=name)


def run_amp(graph: Graph, fetches, mode: Mode = Mode.CUDA, gpu=GPU_V100, feeds=()) -> Graph:
    """The pass in `mode` (CUDA on TF's virtual V100-like test GPU by default)."""
    cfg = PassConfig(auto_mixed_precision_modes=(mode,), auto_mixed_precision_gpu=gpu)
    ctx = PassContext(fetches=[f if ":" in f else f + ":0" for f in fetches],
                      feeds=list(feeds), config=cfg)
    return auto_mixed_precision(graph, ctx)


def type_attrs(graph: Graph, name: str) -> dict:
    """{attr name: dtype} of every type (or type-list) attribute of node `name`."""
    o = graph.get_operation_by_name(name)
    return {k: v for k, v in o.attrs.items() if isinstance(v, dtypes.DType)
            or (isinstance(v, list) and v and isinstance(v[0], dtypes.DType))}


def casts(graph: Graph) -> list[str]:
    return [o.name for o in graph.get_operations() if o.name.endswith("AutoMixedPrecision")]

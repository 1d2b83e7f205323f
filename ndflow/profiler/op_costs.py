"""Per-node cost from shapes: FLOPs, bytes moved, the dims Tensor Cores care about, and the
op's category (what the recommendations reason about).

FLOPs count a multiply-add as two, as TensorFlow's profiler (`RegisterStatistics("flops")`)
and NVIDIA's DLProf do: MatMul 2*M*N*K, Conv2D 2*|output|*kh*kw*Cin, their backprops the same
product over the forward's shapes; elementwise ops one per output element; reductions one per
input element. Bytes are every input and output read or written once.
"""

from __future__ import annotations

import math

from ndflow.ops.op_def import POINTWISE, REDUCTION, tagged

# op types whose kernels do one matrix product / convolution (the Tensor Core / AMX candidates)
MATMUL_TYPES = frozenset({"MatMul", "_FusedMatMul", "_MatMulAddScaled", "BatchMatMul",
                          "BatchMatMulV2", "BatchMatMulV3", "Einsum"})
CONV_TYPES = frozenset({"Conv2D", "_FusedConv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                        "Conv3D", "_FusedConv3D", "DepthwiseConv2dNative",
                        "DepthwiseConv2dNativeBackpropInput",
                        "DepthwiseConv2dNativeBackpropFilter"})
FUSED_TYPES = frozenset({"_FusedMatMul", "_FusedConv2D", "_FusedConv3D", "_FusedBatchNormEx",
                         "_XlaClusterCall", "_MatMulAddScaled"})
# elementwise: the pointwise ops (their OpDef's tag) but those that forward their input, and
# the bias adds, ClipByValue and the v1 Select, which touch each element once; reductions:
# the reduction ops and L2Loss
_POINTWISE, _REDUCTIONS = tagged(POINTWISE), tagged(REDUCTION)
_ALSO_ELEMENTWISE = frozenset({"BiasAdd", "BiasAddGrad", "BiasAddV1", "ClipByValue", "Select"})
_FORWARDING = frozenset({"Identity", "StopGradient"})
_NO_ARITHMETIC = frozenset({"Cast", "ZerosLike", "OnesLike"})


def is_elementwise(op_type: str) -> bool:
    return (op_type in _POINTWISE and op_type not in _FORWARDING) or op_type in _ALSO_ELEMENTWISE


def is_reduction(op_type: str) -> bool:
    return op_type in _REDUCTIONS or op_type == "L2Loss"


INPUT_TYPES = frozenset({"IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional",
                         "OptionalGetValue", "_IteratorHasNext",
                         "MultiDeviceIteratorGetNextFromShard"})
VARIABLE_TYPES = frozenset({"ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp",
                            "AssignSubVariableOp", "VarHandleOp"})  # and ResourceApply*
_SOFTMAX_TYPES = frozenset({"Softmax", "LogSoftmax", "SoftmaxCrossEntropyWithLogits",
                            "SparseSoftmaxCrossEntropyWithLogits"})
_POOL_TYPES = frozenset({"MaxPool", "AvgPool", "MaxPoolGrad", "AvgPoolGrad", "MaxPoolV2",
                         "_MaxPoolWithIndices", "_MaxPoolGradWithIndices"})

_ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4,
             "int16": 2, "int8": 1, "uint8": 1, "bool": 1, "complex64": 8, "complex128": 16}


def category(op_type: str) -> str:
    if op_type in MATMUL_TYPES:
        return "matmul"
    if op_type in CONV_TYPES:
        return "convolution"
    if op_type in FUSED_TYPES:
        return "fused"
    if is_elementwise(op_type) or op_type in _SOFTMAX_TYPES:
        return "elementwise"
    if is_reduction(op_type):
        return "reduction"
    if op_type in INPUT_TYPES:
        return "input"
    if op_type in VARIABLE_TYPES or op_type.startswith("ResourceApply"):
        return "variable"
    return "other"


def _numel(shape) -> int:
    return math.prod(shape) if shape is not None else 0


def matmul_dims(op_type: str, ins: list, attrs: dict) -> dict | None:
    """{'M', 'N', 'K'} of a matrix product (the batch is not a GEMM dim), else None."""
    if op_type not in MATMUL_TYPES or op_type == "Einsum" or len(ins) < 2:
        return None
    a, b = ins[0], ins[1]
    if a is None or b is None or len(a) < 2 or len(b) < 2:
        return None
    ta = attrs.get("transpose_a", attrs.get("adj_x", False))
    tb = attrs.get("transpose_b", attrs.get("adj_y", False))
    m, k = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    n = b[-2] if tb else b[-1]
    return {"M": m, "N": n, "K": k}


def conv_dims(op_type: str, ins: list, outs: list) -> dict | None:
    """{'C': input channels, 'K': output channels, 'kh', 'kw'} of a 2-D convolution."""
    if op_type not in CONV_TYPES:
        return None
    if op_type == "Conv2DBackpropFilter":
        f = outs[0] if outs else None
    else:
        f = ins[1] if len(ins) > 1 else None
    if f is None or len(f) < 4:
        return None
    return {"C": f[-2], "K": f[-1], "kh": f[0], "kw": f[1]}


def flops(op_type: str, ins: list, outs: list, attrs: dict) -> int:
    """Floating-point operations of one execution (0 where the op does no arithmetic)."""
    out = outs[0] if outs else None
    mm = matmul_dims(op_type, ins, attrs)
    if mm is not None:
        batch = _numel(out[:-2]) if out is not None else 1
        extra = _numel(out) * (len(ins) - 2) if op_type == "_FusedMatMul" else 0
        return 2 * batch * mm["M"] * mm["N"] * mm["K"] + extra
    cd = conv_dims(op_type, ins, outs)
    if cd is not None:
        per = cd["kh"] * cd["kw"] * (1 if op_type.startswith("Depthwise") else cd["C"])
        if op_type == "Conv2DBackpropFilter" or op_type == "Conv2DBackpropInput" or \
                op_type.startswith("DepthwiseConv2dNativeBackprop"):
            grad = ins[2] if len(ins) > 2 else None  # out_backprop: the forward's output
            return 2 * _numel(grad) * per
        extra = _numel(out) * (len(ins) - 2) if op_type == "_FusedConv2D" else 0
        return 2 * _numel(out) * per + extra
    if op_type in _SOFTMAX_TYPES:
        return 5 * _numel(ins[0] if ins else None)
    if op_type in _POOL_TYPES:
        k = attrs.get("ksize") or [1, 1, 1, 1]
        return _numel(out) * math.prod(k) if isinstance(k, (list, tuple)) else _numel(out)
    if op_type in ("FusedBatchNorm", "FusedBatchNormV3", "_FusedBatchNormEx",
                   "FusedBatchNormGradV3"):
        return 5 * _numel(ins[0] if ins else None)
    if is_reduction(op_type):
        return _numel(ins[0] if ins else None)
    if is_elementwise(op_type) and op_type not in _NO_ARITHMETIC:
        return _numel(out)
    return 0


def nbytes(shapes: list, dtypes: list) -> int:
    return sum(_numel(s) * _ITEMSIZE.get(d, 4) for s, d in zip(shapes, dtypes) if s is not None)


def tensor_core_dims(op_type: str, ins: list, outs: list, attrs: dict) -> dict | None:
    """The dims Tensor Cores (and AMX tiles) want as multiples of 8: a product's M, N, K, a
    convolution's input and output channels; None for other ops."""
    mm = matmul_dims(op_type, ins, attrs)
    if mm is not None:
        return mm
    cd = conv_dims(op_type, ins, outs)
    if cd is not None:
        return {"C": cd["C"], "K": cd["K"]}
    return None

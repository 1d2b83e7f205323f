"""The auto-mixed-precision op lists (allow / infer / deny / clear) as data.

As TensorFlow's auto_mixed_precision_lists.h (newest version): a CUDA float16 variant whose
allow list depends on the CUDA and cuDNN versions, the oneDNN bfloat16 CPU variant, and the
oneDNN FP16_CPU variant. Ops ndflow does not have are listed anyway (they have no effect).

    lists = amp_lists(Mode.BF16)            # env edits and LEVEL applied, conflicts checked
    lists.allow, lists.infer, lists.deny, lists.clear   # frozensets of op type names

The environment is re-read on every call (TF rebuilds the lists on every optimizer run),
through ndflow/core/config.py: the `TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_<LIST>_ADD` /
`_REMOVE` edits, and `..._LEVEL`: TENSOR_CORES_ONLY empties infer/deny/clear,
TREAT_INFER_AS_DENY merges infer into deny (both float16 modes only), UNSAFE_FORCE_ALL is
handled by the painter (an error in the bfloat16 and FP16_CPU modes).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ndflow.core import config, logging


class Mode(enum.Enum):
    """Which variant of the rewrite runs (TF's AutoMixedPrecisionMode)."""

    CUDA = "CUDA"          # float16 on GPU nodes
    BF16 = "BF16"          # bfloat16 on CPU nodes (oneDNN)
    FP16_CPU = "FP16_CPU"  # float16 on CPU nodes (oneDNN AMX-FP16)
    CPU = "CPU"            # float16 lists on CPU nodes, EMULATE_FP16 (testing)


class AmpListError(ValueError):
    """The lists are unusable (TF: InvalidArgument from ValidateLists or the LEVEL check)."""


_ALLOW_CORE = ("Conv2D", "Conv2DBackpropFilter", "Conv2DBackpropInput", "Einsum", "MatMul")
_ALLOW_CUDA_ONLY = (
    "BlockLSTM", "BlockLSTMV2", "BlockLSTMGrad", "BlockLSTMGradV2", "CudnnRNN",
    "CudnnRNNBackprop", "CudnnRNNBackpropV2", "CudnnRNNBackpropV3", "CudnnRNNV2",
    "CudnnRNNV3", "FusedConv2DBiasActivation", "FusedSparseConvGpuV2", "GRUBlockCell",
    "GRUBlockCellGrad", "LSTMBlockCell", "LSTMBlockCellGrad", "Mha", "MhaV2", "Tmlp",
    "TmlpV2", "TmlpV3", "Pmlp", "FastUnsortedSegmentMax",
)
_ALLOW_CUDA_9010 = ("BatchMatMul", "BatchMatMulV2")
_ALLOW_CUDNN_7602 = ("Conv3D", "Conv3DBackpropFilter", "Conv3DBackpropFilterV2",
                     "Conv3DBackpropInput", "Conv3DBackpropInputV2")
_ALLOW_CUDNN_8000 = ("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropFilter",
                     "DepthwiseConv2dNativeBackpropInput")

INFER_F16 = frozenset((
    "Add", "AddN", "AddV2", "AvgPool", "AvgPool3D", "AvgPool3DGrad", "AvgPoolGrad", "BiasAdd",
    "BiasAddGrad", "BiasAddV1", "Elu", "EluGrad", "Erf", "Erfc", "FloorDiv", "FusedBatchNormV2",
    "FusedBatchNormGradV2", "FusedBatchNormV3", "FusedBatchNormGradV3", "_FusedBatchNormEx",
    "Inv", "LeakyRelu", "LeakyReluGrad", "Log", "Log1p", "LogSoftmax", "Mul", "Prod", "RealDiv",
    "Reciprocal", "Selu", "SeluGrad", "Sigmoid", "SigmoidGrad", "Softmax", "Softplus",
    "SoftplusGrad", "Softsign", "SoftsignGrad", "Sqrt", "Sub", "Tanh", "TanhGrad",
))
DENY_F16 = frozenset((
    "Exp", "Expm1", "L2Loss", "Mean", "Pow", "SaveV2", "SoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogits", "Sum",
))
_TENSOR_LIST_CLEAR = (
    "TensorListConcat", "TensorListConcatLists", "TensorListConcatV2", "TensorListGather",
    "TensorListGetItem", "TensorListPopBack", "TensorListPushBack", "TensorListPushBackBatch",
    "TensorListFromTensor", "TensorListScatter", "TensorListScatterV2",
    "TensorListScatterIntoExistingList", "TensorListSetItem", "TensorListSplit",
    "TensorListStack",
)
CLEAR_F16 = frozenset((
    "Abs", "ArgMax", "ArgMin", "BatchToSpace", "BatchToSpaceND", "BroadcastTo", "Ceil",
    "CheckNumerics", "ClipByValue", "Concat", "ConcatV2", "DepthToSpace", "DynamicPartition",
    "DynamicStitch", "Enter", "EnsureShape", "Equal", "Exit", "ExpandDims", "Fill", "Floor",
    "Gather", "GatherNd", "GatherV2", "Greater", "GreaterEqual", "Identity", "IdentityN",
    "IsFinite", "IsInf", "IsNan", "Less", "LessEqual", "Max", "MaxPool", "MaxPool3D",
    "MaxPool3DGrad", "MaxPool3DGradGrad", "MaxPoolGrad", "MaxPoolGradGrad",
    "MaxPoolGradGradV2", "MaxPoolGradV2", "MaxPoolV2", "Maximum", "Merge", "Min", "Minimum",
    "MirrorPad", "MirrorPadGrad", "Neg", "NextIteration", "NotEqual", "OneHot", "OnesLike",
    "Pack", "Pad", "PadV2", "PreventGradient", "Rank", "Relu", "Relu6", "Relu6Grad",
    "ReluGrad", "Reshape", "ResizeNearestNeighbor", "ResizeNearestNeighborGrad", "Reverse",
    "ReverseSequence", "ReverseV2", "Round", "Select", "SelectV2", "Shape", "ShapeN", "Sign",
    "Size", "Slice", "Snapshot", "SpaceToBatch", "SpaceToBatchND", "SpaceToDepth", "Split",
    "SplitV", "Squeeze", "StopGradient", "StridedSlice", "StridedSliceGrad", "Switch", "Tile",
    "TopK", "TopKV2", "Transpose", "Unpack", "Where", "ZerosLike",
) + _TENSOR_LIST_CLEAR)

ALLOW_BF16 = frozenset((
    "Conv2D", "Conv2DBackpropFilter", "Conv2DBackpropInput", "Conv3D",
    "Conv3DBackpropFilterV2", "Conv3DBackpropInputV2", "DepthwiseConv2dNative",
    "DepthwiseConv2dNativeBackpropFilter", "DepthwiseConv2dNativeBackpropInput", "MatMul",
    "FusedPadConv2D", "BatchMatMul", "BatchMatMulV2", "Einsum",
))
INFER_BF16 = INFER_F16 | {"Rsqrt", "Square", "SquaredDifference", "Mean", "Sum"}
DENY_BF16 = DENY_F16 - {"Mean", "Sum"}
CLEAR_BF16 = (CLEAR_F16 - {"MaxPool3DGradGrad", "OneHot", "Size"}) | {
    "ResizeBilinear", "ScatterNd", "While", "StatelessWhile"}
INFER_FP16_CPU = INFER_F16 | {"Rsqrt", "Square", "SquaredDifference"}

# The CPU emulation mode mirrors a GPU with these versions (TF hard-codes them).
CPU_MODE_CUDA_VERSION = 10000
CPU_MODE_CUDNN_VERSION = 8000



def allow_f16(cuda_version: int, cudnn_version: int, use_cuda: bool = True) -> frozenset:
    """The float16 allow list for the given CUDA / cuDNN versions (e.g. 9010, 7602).
    `use_cuda=False` is the oneDNN FP16_CPU variant: no CUDA-only ops, every gated group."""
    ops = list(_ALLOW_CORE)
    if use_cuda:
        ops += _ALLOW_CUDA_ONLY
    if cuda_version >= 9010 or not use_cuda:
        ops += _ALLOW_CUDA_9010
    if cudnn_version >= 7602 or not use_cuda:
        ops += _ALLOW_CUDNN_7602
    if cudnn_version >= 8000 or not use_cuda:
        ops += _ALLOW_CUDNN_8000
    return frozenset(ops)


@dataclass(frozen=True)
class AmpLists:
    allow: frozenset
    infer: frozenset
    deny: frozenset
    clear: frozenset
    level: str = ""

    @property
    def force_all(self) -> bool:
        return self.level == "UNSAFE_FORCE_ALL"


def base_lists(mode: Mode, cuda_version: int = 0, cudnn_version: int = 0) -> AmpLists:
    """The built-in lists of `mode` (no environment edits)."""
    if mode is Mode.BF16:
        return AmpLists(ALLOW_BF16, INFER_BF16, DENY_BF16, CLEAR_BF16)
    if mode is Mode.FP16_CPU:
        return AmpLists(allow_f16(0, 0, use_cuda=False), INFER_FP16_CPU, DENY_F16, CLEAR_F16)
    if mode is Mode.CPU:
        cuda_version, cudnn_version = CPU_MODE_CUDA_VERSION, CPU_MODE_CUDNN_VERSION
    return AmpLists(allow_f16(cuda_version, cudnn_version), INFER_F16, DENY_F16, CLEAR_F16)


def validate(lists: AmpLists) -> None:
    """TF's ValidateLists: an op on two lists logs `Op present in multiple lists: X` (ERROR)
    for each and raises AmpListError('Op lists have conflicting entries')."""
    seen: dict[str, int] = {}
    for ops in (lists.allow, lists.deny, lists.infer, lists.clear):
        for op in ops:
            seen[op] = seen.get(op, 0) + 1
    duplicates = sorted(op for op, n in seen.items() if n > 1)
    for op in duplicates:
        logging.error(f"Op present in multiple lists: {op}")
    if duplicates:
        raise AmpListError("Op lists have conflicting entries")


def amp_lists(mode: Mode, cuda_version: int = 0, cudnn_version: int = 0) -> AmpLists:
    """The lists the pass uses for `mode`: built-in lists, LEVEL, environment edits,
    validated (AmpListError on a conflict or a forbidden LEVEL)."""
    unknown = config.unknown_auto_mixed_precision_level()
    if unknown is not None:
        logging.warning(f"Unknown {config.TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL} "
                        f"{unknown!r}; using the default level (expected one of "
                        "TENSOR_CORES_ONLY, TREAT_INFER_AS_DENY, UNSAFE_FORCE_ALL)")
    lvl = config.auto_mixed_precision_level()
    if lvl == "UNSAFE_FORCE_ALL" and mode in (Mode.BF16, Mode.FP16_CPU):
        raise AmpListError("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL cannot be set to "
                           "UNSAFE_FORCE_ALL when oneDNN is used")
    base = base_lists(mode, cuda_version, cudnn_version)
    allow, infer, deny, clear = base.allow, base.infer, base.deny, base.clear
    # The level edits belong to the float16 lists (TF's AutoMixedPrecisionListsFp16).
    if lvl == "TENSOR_CORES_ONLY" and mode is not Mode.BF16:
        infer = deny = clear = frozenset()
    elif lvl == "TREAT_INFER_AS_DENY" and mode is not Mode.BF16:
        deny, infer = deny | infer, frozenset()
    edit = config.apply_amp_list_overrides
    lists = AmpLists(edit("ALLOWLIST", allow), edit("INFERLIST", infer),
                     edit("DENYLIST", deny), edit("CLEARLIST", clear), lvl)
    validate(lists)
    return lists

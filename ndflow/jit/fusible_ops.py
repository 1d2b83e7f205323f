"""The JIT's op tables: what auto-clustering may put into a cluster.

- `CATEGORIES`: TensorFlow's XLA-Lite table (`--tf_xla_auto_jit=fusible`,
  `--tf_xla_ops_to_cluster=PW,RED,...`), category name -> op types, as recent TensorFlow has it;
  `FUSIBLE` is their union.
- `LIBRARY_OPS`: ops a compiled cluster runs as library calls (matmul, convolution, pooling,
  gathers, ...): compilable, never fused into generated loops (XLA's "expensive" ops).
- `COMPILABLE_OPS` = FUSIBLE | LIBRARY_OPS less the refused and variable ops: ndflow's "has an
  XLA kernel". An op outside it is never clustered (TF's RecursiveCompilabilityChecker "no XLA
  kernel" rule).
- `NEVER_CLUSTER`: ops TF refuses even where a kernel exists (stateful RNG, Assert,
  CheckNumerics, Stack/TensorArray, slow/inaccurate linalg, Unique, collectives).

`allowed_ops(spec)` turns a `--tf_xla_ops_to_cluster` value into the set of op types, raising
InvalidArgumentError for a name that is neither a category nor a compilable op (as TF does).
The compile side (ndflow.jit device compiler and codegen) reads these tables too.
"""

from __future__ import annotations

from ndflow.core.errors import InvalidArgumentError

_PW = """
ComplexAbs Angle Conj Abs Acos Acosh Asin Atan Atanh Ceil Cos Cosh Sin Exp Expm1 Floor IsFinite
IsInf IsNan Inv Reciprocal Log Log1p Invert LogicalNot Ndtri Neg Rint Round Rsqrt Sigmoid Sign
Sinh Softplus Softsign Sqrt Square Tan Tanh Real Imag Erf Erfc Erfinv Lgamma Digamma
Add AddV2 Sub Mul Div Atan2 Complex DivNoNan MulNoNan FloorDiv Xlogy Xlog1py Xdivy FloorMod
BitwiseAnd BitwiseOr BitwiseXor LeftShift RightShift LogicalAnd LogicalOr Mod Maximum Minimum
RealDiv ReciprocalGrad RsqrtGrad SqrtGrad TruncateDiv TruncateMod Equal NotEqual Greater
GreaterEqual Less LessEqual SigmoidGrad SoftplusGrad SoftsignGrad TanhGrad Pow
SquaredDifference ApproximateEqual
AddN Bitcast Cast ClipByValue Const Empty Identity IdentityN Relu Relu6 ReluGrad Relu6Grad
LeakyReluGrad Elu EluGrad Selu SeluGrad Select SelectV2 Transpose ConjugateTranspose
_UnaryOpsComposition CollectiveReduceV2 CollectiveAssignGroupV2 PlaceholderWithDefault
PreventGradient StopGradient Snapshot _EagerConst
"""
_RED = "All Any Min Max Mean Prod Sum"
_PWRED = "ArgMax ArgMin DiagPart Softmax SparseSoftmaxCrossEntropyWithLogits LogSoftmax"
_MISC = """
ApproxTopK BroadcastTo ExpandDims Fill NoOp Range Rank Reshape Shape ShapeN Size Squeeze
Transpose ZerosLike OnesLike BiasAdd BroadcastArgs BroadcastGradientArgs OneHot Concat ConcatV2
ConcatOffset Const MirrorPad MirrorPadGrad Pack Pad PadV2 Reverse ReverseV2 ReverseSequence
Slice Split SplitV StridedSlice StridedSliceGrad ResourceStridedSliceAssign Tile
InvertPermutation Unpack DeviceIndex TensorStridedSliceUpdate XlaConcatND XlaSplitND
"""

CATEGORIES: dict[str, frozenset[str]] = {
    "PW": frozenset(_PW.split()),
    "RED": frozenset(_RED.split()),
    "PWRED": frozenset(_PWRED.split()),
    # TF lists the PWRED ops here too (a copy-paste upstream; pooling is absent): kept as is.
    "REDUCEWINDOW": frozenset(_PWRED.split()),
    "REDUCEWINDOWPW": frozenset("BiasAddGrad LRN LRNGrad".split()),
    "BN": frozenset("FusedBatchNorm FusedBatchNormV2 FusedBatchNormV3 _FusedBatchNormEx "
                    "FusedBatchNormGrad FusedBatchNormGradV2 FusedBatchNormGradV3".split()),
    "Conv": frozenset({"_FusedConv2D"}),
    "SORT": frozenset({"TopKV2"}),
    "MISC": frozenset(_MISC.split()),
}
FUSIBLE: frozenset[str] = frozenset().union(*CATEGORIES.values())

# Compilable, run as library kernels inside a compiled cluster (never fused into loops);
# the `_` ones are ndflow's own fused/indexed kernels that its passes emit.
LIBRARY_OPS: frozenset[str] = frozenset("""
MatMul BatchMatMul BatchMatMulV2 BatchMatMulV3 _FusedMatMul Einsum
Conv2D Conv2DBackpropInput Conv2DBackpropFilter DepthwiseConv2dNative
DepthwiseConv2dNativeBackpropInput DepthwiseConv2dNativeBackpropFilter
MaxPool MaxPoolV2 AvgPool MaxPoolGrad AvgPoolGrad
Gather GatherV2 GatherNd ResourceGather Cumsum Cumprod
SoftmaxCrossEntropyWithLogits BiasAddV1 L2Loss LeakyRelu Where
_MaxPoolWithIndices _MaxPoolGradWithIndices _MatMulAddScaled _DropoutSelect
_ScaledDotProductAttention _ScaledDotProductAttentionGrad
UnsortedSegmentSum UnsortedSegmentMax UnsortedSegmentMin UnsortedSegmentProd ScatterNd
TensorScatterUpdate TensorScatterAdd TensorScatterSub TensorScatterMin TensorScatterMax
""".split())

# Refused whatever the tables say (TF: stateful RNG, ControlTrigger, Assert/CheckNumerics,
# Stack/TensorArray, slow/inaccurate decompositions, string consts, Unique, collectives).
NEVER_CLUSTER: frozenset[str] = frozenset("""
RandomUniform RandomShuffle RandomUniformInt RandomStandardNormal TruncatedNormal Multinomial
ControlTrigger Assert CheckNumerics CheckNumericsV2 SelfAdjointEigV2 Svd Qr Unique
CollectiveReduceV2 CollectiveAssignGroupV2 Print PrintV2
StackV2 StackPushV2 StackPopV2 StackCloseV2 TensorArrayV3 TensorArrayReadV3 TensorArrayWriteV3
TensorArrayGatherV3 TensorArrayScatterV3 TensorArrayConcatV3 TensorArraySplitV3
TensorArraySizeV3 TensorArrayCloseV3 TensorArrayGradV3
""".split())

# Variable reads and writes: XLA reads every variable at cluster entry and writes at exit.
RESOURCE_READS: frozenset[str] = frozenset({"ReadVariableOp", "ResourceGather",
                                            "VariableShape"})
RESOURCE_WRITES: frozenset[str] = frozenset({"AssignVariableOp"})
RESOURCE_READ_WRITES: frozenset[str] = frozenset({
    "AssignAddVariableOp", "AssignSubVariableOp", "ResourceScatterAdd", "ResourceScatterUpdate",
    "ResourceStridedSliceAssign", "ResourceApplyGradientDescent", "ResourceApplyMomentum",
    "ResourceApplyKerasMomentum", "ResourceApplyAdam", "ResourceApplyAdagrad",
    "ResourceApplyRMSProp", "ResourceApplyAdadelta", "ResourceApplyFtrl"})

# Stateless random numbers (XLA compiles them; in a cluster each is a library call drawing
# the same numbers as outside it).
STATELESS_RNG: frozenset[str] = frozenset("""
StatelessRandomUniform StatelessRandomNormal StatelessTruncatedNormal StatelessRandomUniformInt
StatelessRandomUniformFullInt StatelessRandomUniformV2 StatelessRandomNormalV2
StatelessTruncatedNormalV2 StatelessRandomUniformIntV2 StatelessRandomUniformFullIntV2
StatelessRandomGetKeyCounter StatelessRandomGetAlg StatelessRandomGetKeyCounterAlg
""".split())

# Variables are clustered as XLA clusters them (reads, writes and optimizer updates; the
# resource-safety rules of mark_for_compilation keep every read before a write): in a
# compiled cluster each is a library call, its kernel's copy-on-write included, so the
# gradient math around the updates is fused without a cluster boundary at every variable.
COMPILABLE_OPS: frozenset[str] = ((FUSIBLE | LIBRARY_OPS | RESOURCE_READS | RESOURCE_WRITES
                                   | RESOURCE_READ_WRITES | STATELESS_RNG) - NEVER_CLUSTER)

# Ops whose output is a small summary of their input's shape (phase 0 of clustering).
SHAPE_CONSUMERS: frozenset[str] = frozenset({"Shape", "Rank", "Size"})

# `--tf_xla_cluster_exclude_ops` accepts only these (TF: anything else is InvalidArgument).
EXCLUDABLE_OPS: frozenset[str] = frozenset({"Where"})


def allowed_ops(spec: str, compilable: frozenset[str] | None = None) -> frozenset[str] | None:
    """The op types a `--tf_xla_ops_to_cluster` value allows (None: no allowlist)."""
    if not spec:
        return None
    compilable = FUSIBLE | LIBRARY_OPS if compilable is None else compilable  # XLA's op names
    result: set[str] = set()
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item == "FUSIBLE":
            result |= FUSIBLE
        elif item in CATEGORIES:
            result |= CATEGORIES[item]
        elif item in compilable:
            result.add(item)
        else:
            raise InvalidArgumentError(  # TF's message; here "XLA" is ndflow's JIT tables
                None, None, f"The operation '{item}' passed to --tf_xla_ops_to_cluster is not "
                "supported by XLA.")
    return frozenset(result)


def excluded_ops(spec: str) -> frozenset[str]:
    """`--tf_xla_cluster_exclude_ops`: only Where may be excluded, as in TensorFlow."""
    result = set()
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item not in EXCLUDABLE_OPS:
            raise InvalidArgumentError(  # TF's message: only Where may be excluded
                None, None, f"The operation '{item}' passed to --tf_xla_cluster_exclude_ops is "
                "not supported by XLA.")
        result.add(item)
    return frozenset(result)

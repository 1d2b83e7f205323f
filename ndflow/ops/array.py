"""Array ops: the public face of the family (TF's array_ops), re-exported from its parts.

- `array_core`: Const, Placeholder(WithDefault), Identity(N), StopGradient, NoOp, EnsureShape,
  Shape(N), Size, Rank, Reshape, ExpandDims, Squeeze, Pack, Unpack, ZerosLike, OnesLike;
- `array_transpose`: Transpose, InvertPermutation;
- `array_slicing`: Slice, StridedSlice(+Grad) and `Tensor.__getitem__`, ConcatV2, ConcatOffset;
- `array_fill`: Fill (`zeros`, `ones`), Range, Tile, BroadcastTo, Pad, PadV2, MirrorPad(+Grad);
- `array_gather`: GatherV2, UnsortedSegmentSum, OneHot, Where.
"""

from __future__ import annotations

from ndflow.ops.array_core import (
    Const,
    EnsureShape,
    ExpandDims,
    Identity,
    IdentityN,
    NoOp,
    OnesLike,
    Pack,
    Placeholder,
    PlaceholderWithDefault,
    Rank,
    Reshape,
    Shape,
    ShapeN,
    Size,
    Squeeze,
    StopGradient,
    Unpack,
    ZerosLike,
    constant,
    ensure_shape,
    expand_dims,
    group,
    identity,
    identity_n,
    no_op,
    ones_like,
    partial_shape,
    placeholder,
    placeholder_with_default,
    rank,
    reshape,
    shape,
    shape_n,
    size,
    squeeze,
    stack,
    stop_gradient,
    unstack,
    zeros_like,
)
from ndflow.ops.array_fill import (
    BroadcastTo,
    Fill,
    MirrorPad,
    MirrorPadGrad,
    Pad,
    PadV2,
    Range,
    Tile,
    broadcast_to,
    fill,
    ones,
    pad,
    range,
    tile,
    zeros,
)
from ndflow.ops.array_gather import (
    GatherV2,
    OneHot,
    UnsortedSegmentSum,
    Where,
    gather,
    one_hot,
    unsorted_segment_sum,
    where,
)
from ndflow.ops.array_slicing import (
    ConcatOffset,
    ConcatV2,
    Slice,
    StridedSlice,
    StridedSliceGrad,
    concat,
    slice,
    slice_helper,
    strided_slice,
)
from ndflow.ops.array_transpose import InvertPermutation, Transpose, invert_permutation, transpose

__all__ = [
    "BroadcastTo", "ConcatOffset", "ConcatV2", "Const", "EnsureShape",
    "ExpandDims", "Fill", "GatherV2", "Identity", "IdentityN", "InvertPermutation", "MirrorPad",
    "MirrorPadGrad", "NoOp", "OneHot", "OnesLike", "Pack", "Pad", "PadV2", "Placeholder",
    "PlaceholderWithDefault", "Range", "Rank", "Reshape", "Shape", "ShapeN", "Size", "Slice",
    "Squeeze", "StopGradient", "StridedSlice", "StridedSliceGrad", "Tile", "Transpose",
    "Unpack", "UnsortedSegmentSum", "ZerosLike", "broadcast_to",
    "concat", "constant", "ensure_shape", "expand_dims", "fill", "gather", "group", "identity",
    "identity_n", "invert_permutation", "no_op", "one_hot", "ones", "ones_like", "pad",
    "partial_shape", "placeholder", "placeholder_with_default", "range", "rank", "reshape",
    "shape", "shape_n", "size", "slice", "slice_helper", "squeeze", "stack", "stop_gradient",
    "strided_slice", "tile", "transpose", "unsorted_segment_sum", "unstack", "where", "Where",
    "zeros", "zeros_like",
]

"""Reductions over a SparseTensor's explicit entries (TensorFlow's sparse_ops.py):
SparseReduceSum/Max (dense result) and their *Sparse variants, SparseSoftmax,
SparseSparseMaximum/Minimum, and the SparseSegmentSum/Mean/SqrtN family (rows of a dense
tensor picked by `indices`, reduced by sorted `segment_ids`). Implicit zeros take no part: the
max of a row holding only -1 is -1; a row with no entries gives 0. Kernels:
kernels/sparse_reductions.py; gradients: sparse_ops_grad.py."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import where as select
from ndflow.ops.array_core import expand_dims, reshape, shape
from ndflow.ops.array_fill import ones_like, zeros
from ndflow.ops.array_gather import gather, unsorted_segment_sum
from ndflow.ops.array_nd import gather_nd
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.array_slicing import concat
from ndflow.ops.comparison import equal
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.math import sqrt
from ndflow.ops.op_def import op_def
from ndflow.ops.reduction import reduce_any
from ndflow.ops.sparse_tensor import SparseTensor

_REAL = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, half}"
_IN = ["input_indices: int64", "input_values: T", "input_shape: int64", "reduction_axes: int32"]


def _reduce_op(name: str, sparse: bool, grad: bool):
    outputs = (["output_indices: int64", "output_values: T", "output_shape: int64"] if sparse
               else ["output: T"])
    shape_fn = (lambda ctx: [TensorShape([None, None]), TensorShape([None]),
                             TensorShape([None])]) if sparse else None
    return op_def(name, inputs=_IN, outputs=outputs, attrs=["keep_dims: bool = false", _REAL],
                  shape=shape_fn, gradient_undefined=not grad)


SparseReduceSum = _reduce_op("SparseReduceSum", False, True)
SparseReduceSumSparse = _reduce_op("SparseReduceSumSparse", True, False)
SparseReduceMax = _reduce_op("SparseReduceMax", False, False)
SparseReduceMaxSparse = _reduce_op("SparseReduceMaxSparse", True, False)

SparseSoftmax = op_def(
    "SparseSoftmax", inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64"],
    outputs=["output: T"], attrs=["T: {half, float, double}"],
    shape=lambda ctx: [ctx.shapes[1]])


def _pairwise(name):
    return op_def(
        name, inputs=["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64",
                      "b_values: T", "b_shape: int64"],
        outputs=["output_indices: int64", "output_values: T"], attrs=[_REAL],
        shape=lambda ctx: [TensorShape([None, None]), TensorShape([None])])


SparseSparseMaximum = _pairwise("SparseSparseMaximum")
SparseSparseMinimum = _pairwise("SparseSparseMinimum")

_SEG_ATTRS = ["Tidx: {int32, int64} = DT_INT32", "Tsegmentids: {int32, int64} = DT_INT32",
              "sparse_gradient: bool = false"]


def _segment_op(name: str, types: str, num_segments: bool):
    inputs = ["data: T", "indices: Tidx", "segment_ids: Tsegmentids"]
    attrs = [types] + _SEG_ATTRS
    if num_segments:
        inputs.append("num_segments: Tnumsegments")
        attrs.append("Tnumsegments: {int32, int64} = DT_INT32")
    return op_def(name, inputs=inputs, outputs=["output: T"], attrs=attrs, shape=_segment_shape)


def _segment_shape(ctx):
    if not ctx.shapes[0].rank:
        return [TensorShape(None)]
    rows = ctx.value(3) if len(ctx.shapes) > 3 else None
    return [TensorShape([None if rows is None else int(rows)] + ctx.shapes[0].as_list()[1:])]


_FLOATS = "T: {bfloat16, half, float, double}"
SparseSegmentSum = _segment_op("SparseSegmentSum", _REAL, False)
SparseSegmentSumWithNumSegments = _segment_op("SparseSegmentSumWithNumSegments", _REAL, True)
SparseSegmentMean = _segment_op("SparseSegmentMean", _FLOATS, False)
SparseSegmentMeanWithNumSegments = _segment_op("SparseSegmentMeanWithNumSegments", _FLOATS, True)
SparseSegmentSqrtN = _segment_op("SparseSegmentSqrtN", _FLOATS, False)
SparseSegmentSqrtNWithNumSegments = _segment_op("SparseSegmentSqrtNWithNumSegments", _FLOATS,
                                                True)


def _grad_v2_op(name: str):
    """TF's SparseSegment{Sum,Mean,SqrtN}GradV2: the gradient of a `sparse_gradient` segment
    reduction as IndexedSlices parts, one summed row per distinct index (sorted)."""
    return op_def(name, inputs=["grad: T", "indices: Tidx", "segment_ids: Tsegmentids",
                                "dense_output_dim0: int32"],
                  outputs=["output: T", "sorted_unique_indices: Tidx"],
                  attrs=[_FLOATS] + _SEG_ATTRS[:2], shape=_grad_v2_shape,
                  gradient_undefined=True)


def _grad_v2_shape(ctx):
    inner = ctx.shapes[0].as_list()[1:] if ctx.shapes[0].rank else None
    return [TensorShape(None if inner is None else [None] + inner), TensorShape([None])]


SparseSegmentSumGradV2 = _grad_v2_op("SparseSegmentSumGradV2")
SparseSegmentMeanGradV2 = _grad_v2_op("SparseSegmentMeanGradV2")
SparseSegmentSqrtNGradV2 = _grad_v2_op("SparseSegmentSqrtNGradV2")
GRAD_V2 = {"sum": SparseSegmentSumGradV2, "mean": SparseSegmentMeanGradV2,
           "sqrt_n": SparseSegmentSqrtNGradV2}


def kept_dims_shape(dense_shape, axes):
    """dense_shape with the reduced axes set to 1 (TF's math_ops.reduced_shape)."""
    rank = shape(dense_shape)[0]
    axes = reshape(convert_to_tensor(axes, dtypes.int32), [1, -1])
    positions = expand_dims(tf_range(rank), 1)
    hit = reduce_any(equal(positions, (axes + rank) % rank), axis=1)
    return select(hit, ones_like(dense_shape), dense_shape)


def row_sums(indices, values, dense_shape):
    """For each entry, the sum of `values` over the entries of its row (the last dim)."""
    summed = apply_op(SparseReduceSum, [indices, values, dense_shape,
                                        convert_to_tensor([-1], dtypes.int32)],
                      {"keep_dims": True}).outputs[0]
    first_column = concat([indices[:, :-1], zeros(shape(indices[:, -1:]), dtypes.int64)], 1)
    return gather_nd(summed, first_column)


def _axes(sp: SparseTensor, axis):
    if axis is None:
        rank = sp.dense_shape.shape.as_list()[0]
        if rank is None:
            return tf_range(shape(sp.dense_shape)[0])
        return convert_to_tensor(list(range(rank)), dtypes.int32)
    return convert_to_tensor(axis, dtypes.int32)


def _reduce(dense_op, sparse_op, sp_input, axis, keepdims, output_is_sparse, name):
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}.")
    inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape, _axes(sp_input, axis)]
    attrs = {"keep_dims": bool(keepdims)}
    if output_is_sparse:
        return SparseTensor(*apply_op(sparse_op, inputs, attrs, name=name).outputs)
    return apply_op(dense_op, inputs, attrs, name=name).outputs[0]


@tf_export("sparse.reduce_sum", v1=[])
def reduce_sum(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The sum of the explicit entries along `axis` (all axes when None)."""
    return _reduce(SparseReduceSum, SparseReduceSumSparse, sp_input, axis, keepdims,
                   output_is_sparse, name)


@tf_export("sparse.reduce_max", v1=[])
def reduce_max(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The maximum of the explicit entries along `axis`; 0 where there is none."""
    return _reduce(SparseReduceMax, SparseReduceMaxSparse, sp_input, axis, keepdims,
                   output_is_sparse, name)


@tf_export("sparse.softmax", v1=["sparse.softmax", "sparse_softmax"])
def softmax(sp_input, name=None):
    """Softmax over each row's explicit entries along the last dimension."""
    with name_scope(name, "SparseSoftmax"):
        out = apply_op(SparseSoftmax, [sp_input.indices, sp_input.values,
                                       sp_input.dense_shape]).outputs[0]
        return SparseTensor(sp_input.indices, out, sp_input.dense_shape)


def _pairwise_public(op, what):
    def fn(sp_a, sp_b, name=None):
        with name_scope(name, op.name):
            idx, val = apply_op(op, [sp_a.indices, sp_a.values, sp_a.dense_shape, sp_b.indices,
                                     sp_b.values, sp_b.dense_shape]).outputs
            return SparseTensor(idx, val, sp_a.dense_shape)
    fn.__doc__ = f"The element-wise {what} of two SparseTensors (absent entries count as 0)."
    fn.__name__ = fn.__qualname__ = what
    return fn


maximum = tf_export("sparse.maximum", v1=["sparse.maximum", "sparse_maximum"])(
    _pairwise_public(SparseSparseMaximum, "maximum"))
minimum = tf_export("sparse.minimum", v1=["sparse.minimum", "sparse_minimum"])(
    _pairwise_public(SparseSparseMinimum, "minimum"))


def _segment_public(plain, counted, what):
    def fn(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False):
        data = convert_to_tensor(data)
        inputs = [data, convert_to_tensor(indices, dtype_hint=dtypes.int32),
                  convert_to_tensor(segment_ids, dtype_hint=dtypes.int32)]
        attrs = {"sparse_gradient": bool(sparse_gradient)}
        if num_segments is None:
            return apply_op(plain, inputs, attrs, name=name).outputs[0]
        inputs.append(convert_to_tensor(num_segments, dtype_hint=dtypes.int32))
        return apply_op(counted, inputs, attrs, name=name).outputs[0]
    fn.__doc__ = (f"The {what} of the rows `data[indices]` per sorted segment id (`num_segments`"
                  " rows when given).")
    fn.__name__ = fn.__qualname__ = f"segment_{what}"
    return fn


segment_sum = tf_export("sparse.segment_sum", v1=[])(
    _segment_public(SparseSegmentSum, SparseSegmentSumWithNumSegments, "sum"))
segment_mean = tf_export("sparse.segment_mean", v1=[])(
    _segment_public(SparseSegmentMean, SparseSegmentMeanWithNumSegments, "mean"))
segment_sqrt_n = tf_export("sparse.segment_sqrt_n", v1=[])(
    _segment_public(SparseSegmentSqrtN, SparseSegmentSqrtNWithNumSegments, "sqrt_n"))


def segment_grad(kind: str, op, grad):
    """d(data) of a SparseSegment* op: each picked row gets its segment's gradient, scaled by
    1/count (mean) or 1/sqrt(count) (sqrt_n); with `sparse_gradient`, IndexedSlices of the
    distinct rows (TF's _SparseSegmentReduceGradV2)."""
    data, indices, segment_ids = op.inputs[0], op.inputs[1], op.inputs[2]
    if op.get_attr("sparse_gradient"):
        data_shape = shape(data)
        values, unique = apply_op(GRAD_V2[kind], [grad, indices, segment_ids,
                                                  data_shape[0]]).outputs
        return [IndexedSlices(values, unique, data_shape)] + [None] * (len(op.inputs) - 1)
    rows = gather(grad, segment_ids)
    if kind != "sum":
        n = shape(grad)[0]
        counts = unsorted_segment_sum(ones_like(segment_ids, dtype=grad.dtype), segment_ids, n)
        counts = select(equal(counts, zeros(shape(counts), grad.dtype)),
                        ones_like(counts), counts)
        scale = counts if kind == "mean" else sqrt(counts)
        weights = gather(1 / scale, segment_ids)
        rows = rows * reshape(weights, concat([shape(weights), ones_like(shape(grad))[1:]], 0))
    data_grad = unsorted_segment_sum(rows, indices, shape(data)[0])
    return [data_grad] + [None] * (len(op.inputs) - 1)

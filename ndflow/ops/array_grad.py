"""Gradients of the array family (TF's array_grad.py): identities, reshapes, packing,
slicing, concatenation, splitting, transposes, fills, tiling, broadcasting, padding and
gathering.

Imported after every op family (ndflow/ops/__init__.py), so a gradient uses any op directly.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.ops import (
    array_core,
    array_fill,
    array_gather,
    array_nd,
    array_reorder,
    array_slicing,
    array_split,
    array_transpose,
)
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.arithmetic import floormod, maximum, multiply, negative, subtract
from ndflow.ops.array_core import rank, reshape, shape, shape_n, stack, unstack
from ndflow.ops.array_fill import broadcast_gradient_args, zeros_like
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_slicing import concat, strided_slice
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, greater_equal
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.reduction import reduce_prod, reduce_sum


def _identity_grad(op, grad):
    return [grad]


for _op in (array_core.Identity, array_core.PlaceholderWithDefault, array_core.EnsureShape):
    _op.def_grad(_identity_grad)


@array_core.IdentityN.def_grad
def _identity_n_grad(op, *grads):
    return list(grads)


# -- reshapes ------------------------------------------------------------------------------------


def _reshape_to_input(op, grad):
    return [reshape(grad, shape(op.inputs[0])), None]


array_core.Reshape.def_grad(_reshape_to_input)
array_core.ExpandDims.def_grad(_reshape_to_input)


@array_core.Squeeze.def_grad
def _squeeze_grad(op, grad):
    return [reshape(grad, shape(op.inputs[0]))]


# -- Pack / Unpack -------------------------------------------------------------------------------


@array_core.Pack.def_grad
def _pack_grad(op, grad):
    return unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


def zero_filled(grads, outputs) -> list:
    """The output gradients with zeros where an output got none."""
    return [g if g is not None else zeros_like(t) for g, t in zip(grads, outputs)]


@array_core.Unpack.def_grad
def _unpack_grad(op, *grads):
    return [stack(zero_filled(grads, op.outputs), axis=op.get_attr("axis"))]


# -- slicing, concatenation, splitting -----------------------------------------------------------


@array_slicing.StridedSlice.def_grad
def _strided_slice_grad(op, grad):
    _, begin, end, strides = op.inputs
    x_shape = shape(op.inputs[0], out_type=begin.dtype)
    return [apply_op(array_slicing.StridedSliceGrad, [x_shape, begin, end, strides, grad],
                     array_slicing.strided_slice_masks(op.attrs)).outputs[0], None, None, None]


@array_slicing.StridedSliceGrad.def_grad
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    return [None, None, None, None,
            strided_slice(grad, begin, end, strides,
                          **array_slicing.strided_slice_masks(op.attrs))]


@array_slicing.Slice.def_grad
def _slice_grad(op, grad):
    x, begin, _ = op.inputs
    b = constant_value(begin)
    xs, ys = x.shape, op.outputs[0].shape
    if b is not None and xs.is_fully_defined() and ys.is_fully_defined():
        pads = [[int(bi), d - int(bi) - s] for bi, d, s in zip(b, xs.as_list(), ys.as_list())]
        paddings = convert_to_tensor(np.array(pads, begin.dtype.np_dtype))
    else:
        r = x.shape.rank
        col = [r, 1] if r is not None else stack([rank(x), 1])
        before = reshape(begin, col)
        after = reshape(subtract(subtract(shape(x, out_type=begin.dtype),
                                          shape(op.outputs[0], out_type=begin.dtype)), begin),
                        col)
        paddings = concat([before, after], 1)
    return [array_fill.pad(grad, paddings), None, None]


@array_slicing.ConcatV2.def_grad
def _concat_grad(op, grad):
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    axis = constant_value(axis_t)
    shapes = [v.shape for v in values]
    if axis is not None and all(s.is_fully_defined() for s in shapes):
        sizes = [s.as_list() for s in shapes]
        axis = int(axis) % len(sizes[0])
        return [array_slicing.slice(grad, off, size) for off, size in
                zip(array_slicing.concat_offsets(axis, sizes), sizes)] + [None]
    if axis is not None:
        r = values[0].shape.rank
        dim = convert_to_tensor(int(axis) % r if r is not None else int(axis), dtypes.int32)
    else:
        dim = floormod(axis_t, rank(values[0]))
    sizes = shape_n(values)
    offsets = apply_op(array_slicing.ConcatOffset, [dim, sizes]).outputs
    return [array_slicing.slice(grad, b, s) for b, s in zip(offsets, sizes)] + [None]


@array_split.Split.def_grad
def _split_grad(op, *grads):
    return [None, concat(zero_filled(grads, op.outputs), op.inputs[0])]


@array_split.SplitV.def_grad
def _split_v_grad(op, *grads):
    return [concat(zero_filled(grads, op.outputs), op.inputs[2]), None, None]


def _inverse_permutation(perm):
    p = constant_value(perm)
    return (np.argsort(p).astype(np.int32) if p is not None
            else array_transpose.invert_permutation(perm))


@array_transpose.Transpose.def_grad
def _transpose_grad(op, grad):
    return [array_transpose.transpose(grad, _inverse_permutation(op.inputs[1])), None]


@array_transpose.ConjugateTranspose.def_grad
def _conjugate_transpose_grad(op, grad):
    return [array_transpose.transpose(grad, _inverse_permutation(op.inputs[1]),
                                      conjugate=True), None]


# -- Fill, Tile, BroadcastTo, Pad ----------------------------------------------------------------


@array_fill.Fill.def_grad
def _fill_grad(op, grad):
    return [None, reduce_sum(grad)]


@array_fill.Tile.def_grad
def _tile_grad(op, grad):
    x, multiples = op.inputs
    x_shape = shape(x, out_type=multiples.dtype)
    m, xs = constant_value(multiples), constant_value(x_shape)
    if m is not None and xs is not None:
        split = np.stack([m, xs], axis=1).reshape(-1)
        axes = np.arange(0, split.size, 2, dtype=np.int32)
    else:
        split = reshape(array_transpose.transpose(stack([multiples, x_shape])), [-1])
        axes = range_(0, array_core.size(split), 2)
    out = reduce_sum(reshape(grad, split), axes)
    if not context.executing_eagerly():
        out.set_shape(x.shape)
    return [out, None]


@array_fill.BroadcastTo.def_grad
def _broadcast_to_grad(op, grad):
    x, target = op.inputs
    x_shape = shape(x, out_type=target.dtype)
    _, axes = broadcast_gradient_args(target, x_shape)
    summed = reduce_sum(grad, axes, keepdims=True)
    return [reshape(summed, x_shape), None]


def _pad_grad(op, grad):
    x, paddings = op.inputs[:2]
    p = constant_value(paddings)
    if p is not None:
        begin = np.asarray(p)[:, 0].astype(paddings.dtype.np_dtype)
    else:
        r = x.shape.rank
        rows = r if r is not None else rank(x)
        before = array_slicing.slice(paddings, [0, 0], stack([rows, 1]))
        begin = reshape(before, [-1])
    x_grad = array_slicing.slice(grad, begin, shape(x, out_type=paddings.dtype))
    return [x_grad, None] + [None] * (len(op.inputs) - 2)


array_fill.Pad.def_grad(_pad_grad)
array_fill.PadV2.def_grad(_pad_grad)


@array_fill.MirrorPad.def_grad
def _mirror_pad_grad(op, grad):
    return [apply_op(array_fill.MirrorPadGrad, [grad, op.inputs[1]],
                     {"mode": op.get_attr("mode")}).outputs[0], None]


@array_fill.MirrorPadGrad.def_grad
def _mirror_pad_grad_grad(op, grad):
    return [apply_op(array_fill.MirrorPad, [grad, op.inputs[1]],
                     {"mode": op.get_attr("mode")}).outputs[0], None]


# -- gathering -----------------------------------------------------------------------------------


def _dims_or_tensor(t, lo: int, hi: int | None):
    """shape(t)[lo:hi] as a Python list when static, else as an int32 tensor."""
    s = t.shape
    if s.rank is not None:
        part = s.as_list()[lo:hi]
        if None not in part:
            return part
    end = [0] if hi is None else [hi]
    return strided_slice(shape(t), [lo], end, [1], end_mask=1 if hi is None else 0)


@array_gather.GatherV2.def_grad
def _gather_grad(op, grad):
    params, indices, axis_t = op.inputs
    axis = constant_value(axis_t)
    r = params.shape.rank
    if axis is None or r is None:
        raise NotImplementedError("Gradient of GatherV2 needs a constant axis and known rank")
    axis = int(axis) % r
    batch_dims = op.get_attr("batch_dims") or 0
    if batch_dims:
        return [_batch_gather_grad(params, indices, grad, axis, batch_dims), None, None]
    p_shape = shape(params)
    n = params.shape[axis]
    num = n if n is not None else strided_slice(p_shape, [axis], [axis + 1], [1],
                                                shrink_axis_mask=1)
    outer, inner = _dims_or_tensor(params, 0, axis), _dims_or_tensor(params, axis + 1, None)
    if isinstance(outer, list) and isinstance(inner, list):
        values_shape = outer + [-1] + inner
    else:
        values_shape = concat([outer, [-1], inner], 0)
    values = reshape(grad, values_shape)
    flat_indices = reshape(indices, [-1])
    segment_sum = array_gather.unsorted_segment_sum
    if axis == 0:  # TF's _GatherV2Grad: the rows, kept sparse
        return [IndexedSlices(values, flat_indices, p_shape), None, None]
    perm = [axis] + list(range(axis)) + list(range(axis + 1, r))
    summed = segment_sum(array_transpose.transpose(values, perm), flat_indices, num)
    return [array_transpose.transpose(summed, np.argsort(perm).astype(np.int32)), None, None]


def _batch_gather_grad(params, indices, grad, axis: int, batch_dims: int):
    """d params of a gather with `batch_dims`: `grad`'s rows added into zeros shaped like
    params, each at (its batch element, its index). The gathered axis is moved right after
    the batch dims, the batch dims flattened into one (so each index gets its batch element's
    offset), one UnsortedSegmentSum, and the moves undone (dense, as TF's)."""
    r = params.shape.rank
    ir = indices.shape.rank
    if ir is None:
        raise NotImplementedError("Gradient of GatherV2 with batch_dims needs indices of "
                                  "known rank")
    batch_dims %= ir
    p_shape = shape(params, out_type=indices.dtype)
    perm = list(range(batch_dims)) + [axis] + [d for d in range(batch_dims, r) if d != axis]
    moved_shape = array_gather.gather(p_shape, perm)     # [batch..., N, rest...]
    batch = reduce_prod(moved_shape[:batch_dims])
    num = moved_shape[batch_dims]
    rest = moved_shape[batch_dims + 1:]
    # grad is [batch..., outer..., indices..., inner...]: outer/inner are params' dims
    # before/after `axis` beyond the batch dims; bring the indices' dims right after batch
    outer = axis - batch_dims
    g_rank = batch_dims + outer + (ir - batch_dims) + (r - axis - 1)
    idx_dims = list(range(batch_dims + outer, batch_dims + outer + ir - batch_dims))
    g_perm = list(range(batch_dims)) + idx_dims + [d for d in range(batch_dims, g_rank)
                                                  if d not in idx_dims]
    values = reshape(array_transpose.transpose(grad, g_perm),
                     concat([[-1], rest], 0))
    per_batch = reshape(indices, concat([[batch], [-1]], 0))
    offsets = reshape(range_(batch, dtype=indices.dtype) * num, [-1, 1])
    flat = reshape(per_batch + offsets, [-1])
    summed = array_gather.unsorted_segment_sum(values, flat, batch * num)
    moved = reshape(summed, moved_shape)
    return array_transpose.transpose(moved, np.argsort(perm).astype(np.int32))


@array_gather.UnsortedSegmentSum.def_grad
def _segment_sum_grad(op, grad):
    ids = op.inputs[1]
    zero = convert_to_tensor(0, ids.dtype)
    gathered = array_gather.gather(grad, maximum(ids, zero))
    keep = cast(greater_equal(ids, zero), grad.dtype)
    extra_dims = (grad.shape.rank or 1) - 1
    if extra_dims:
        keep = reshape(keep, concat([shape(ids), np.ones(extra_dims, np.int32)], 0))
    return [multiply(gathered, keep), None, None]


# -- reordering --------------------------------------------------------------------------------

@array_reorder.ReverseV2.def_grad
def _reverse_grad(op, grad):
    return [array_reorder.reverse(grad, op.inputs[1]), None]


@array_reorder.ReverseSequence.def_grad
def _reverse_sequence_grad(op, grad):
    return [array_reorder.reverse_sequence(grad, op.inputs[1], op.get_attr("seq_dim"),
                                           op.get_attr("batch_dim")), None]


@array_reorder.Roll.def_grad
def _roll_grad(op, grad):
    return [array_reorder.roll(grad, negative(op.inputs[1]), op.inputs[2]), None, None]


# -- n-d indexing ------------------------------------------------------------------------------

@array_nd.GatherNd.def_grad
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    return [array_nd.scatter_nd(indices, grad, shape(params, out_type=indices.dtype)), None]


@array_nd.ScatterNd.def_grad
def _scatter_nd_grad(op, grad):
    return [None, array_nd.gather_nd(grad, op.inputs[0]), None]


@array_nd.TensorScatterUpdate.def_grad
def _tensor_scatter_update_grad(op, grad):
    indices, updates = op.inputs[1], op.inputs[2]
    return [array_nd.tensor_scatter_nd_update(grad, indices, zeros_like(updates)), None,
            array_nd.gather_nd(grad, indices)]


@array_nd.TensorScatterAdd.def_grad
def _tensor_scatter_add_grad(op, grad):
    return [grad, None, array_nd.gather_nd(grad, op.inputs[1])]


@array_nd.TensorScatterSub.def_grad
def _tensor_scatter_sub_grad(op, grad):
    return [grad, None, negative(array_nd.gather_nd(grad, op.inputs[1]))]


def _tensor_scatter_min_or_max_grad(op, grad):
    # TF's: the gradient is shared equally between the tensor's element and the updates that
    # tied for the result.
    x, indices, y = op.inputs
    out = op.outputs[0]
    x_hit = cast(equal(x, out), grad.dtype)
    y_hit = cast(equal(y, array_nd.gather_nd(out, indices)), grad.dtype)
    hits = x_hit + array_nd.scatter_nd(indices, y_hit, shape(x, out_type=indices.dtype))
    return [grad * x_hit / hits, None,
            array_nd.gather_nd(grad / hits, indices) * y_hit]


array_nd.TensorScatterMin.def_grad(_tensor_scatter_min_or_max_grad)
array_nd.TensorScatterMax.def_grad(_tensor_scatter_min_or_max_grad)

"""`tf.gather` with `batch_dims`: a gather per batch entry, built as TensorFlow's
`_batch_gather` builds it (indices offset by each batch entry's first row in the flattened
params, one plain gather, a reshape), so its gradient is the plain gather's."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor
from ndflow.ops import gather_batch_docs
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.arithmetic import add, multiply
from ndflow.ops.array_core import int_tensor, reshape, shape
from ndflow.ops.array_gather import gather as plain_gather
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_transpose import transpose
from ndflow.ops.reduction import reduce_prod


def _is_zero(axis) -> bool:
    value = constant_value(axis) if isinstance(axis, Tensor) else axis
    return value is not None and int(value) == 0


@tf_export("gather")
def gather(params, indices, validate_indices=None, axis=None, batch_dims: int = 0,
           name: str | None = None) -> Tensor:
    """`tf.gather`: slices of `params` along `axis` at `indices`; with `batch_dims`, the
    first `batch_dims` dimensions of both are batch dimensions gathered entry by entry."""
    if not batch_dims:
        if hasattr(params, "sparse_read") and (axis is None or _is_zero(axis)):
            return params.sparse_read(indices, name=name)  # a variable: read only the rows
        return plain_gather(params, indices, validate_indices, axis, 0, name)
    params = convert_to_tensor(params)
    indices = int_tensor(indices)
    if indices.shape.rank is None or params.shape.rank is None:
        raise ValueError("tf.gather with batch_dims needs params and indices of known rank")
    if batch_dims < 0:
        batch_dims += indices.shape.rank
    if axis is None:
        axis = batch_dims
    axis = int(axis) + (params.shape.rank if int(axis) < 0 else 0)
    if batch_dims > axis:
        raise ValueError(f"batch_dims ({batch_dims}) must be less than or equal to axis "
                         f"({axis}).")
    if batch_dims > indices.shape.rank:
        raise ValueError(f"batch_dims ({batch_dims}) must be less than or equal to rank"
                         f"(indices) ({indices.shape.rank}).")
    return _gather_along(params, indices, batch_dims, axis)


def _gather_along(params, indices, batch_dims: int, axis: int) -> Tensor:
    p_rank, i_rank = params.shape.rank, indices.shape.rank
    if axis == batch_dims:
        return _gather_after_batch(params, indices, batch_dims)
    # Bring `axis` next to the batch dimensions, gather, and put the dimensions that were
    # between them back in front of the gathered ones.
    moved = [d for d in range(batch_dims, p_rank) if d != axis]
    result = _gather_after_batch(transpose(params, list(range(batch_dims)) + [axis] + moved),
                                 indices, batch_dims)
    n_ind, n_between = i_rank - batch_dims, axis - batch_dims
    between = list(range(batch_dims + n_ind, batch_dims + n_ind + n_between))
    rest = list(range(batch_dims + n_ind + n_between, result.shape.rank))
    return transpose(result, list(range(batch_dims)) + between +
                     list(range(batch_dims, batch_dims + n_ind)) + rest)


def _gather_after_batch(params, indices, batch_dims: int) -> Tensor:
    p_shape = shape(params, out_type=indices.dtype)
    offsets = indices
    stride = convert_to_tensor(1, dtype=indices.dtype)
    for dim in range(batch_dims, 0, -1):  # the flat row where each batch entry starts
        stride = multiply(stride, p_shape[dim])
        start = multiply(range_(0, p_shape[dim - 1], dtype=indices.dtype), stride)
        offsets = add(offsets, reshape(start, [1] * (dim - 1) + [-1] +
                                       [1] * (indices.shape.rank - dim)))
    outer = params.shape.as_list()[batch_dims + 1:]
    if None in outer:
        outer = p_shape[batch_dims + 1:]
    rows = reduce_prod(p_shape[:batch_dims + 1])
    flat = reshape(params, concat([reshape(rows, [1]), outer], 0))
    out = plain_gather(flat, reshape(offsets, [-1]))
    static = indices.shape.as_list() + params.shape.as_list()[batch_dims + 1:]
    if None not in static:
        return reshape(out, static)
    return reshape(out, concat([shape(indices, out_type=indices.dtype), outer], 0))


attach(globals(), gather_batch_docs.DOCS)

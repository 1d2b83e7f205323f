"""N-d indexing ops: GatherNd (`tf.gather_nd`), ScatterNd (`tf.scatter_nd`) and the
TensorScatter family (`tf.tensor_scatter_nd_update/add/sub/min/max`). An index is the last
axis of `indices`: K coordinates into the first K dimensions of the indexed tensor."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_fill, array_nd_docs, array_range, array_slicing, reduction
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import int_input, int_tensor, static_value
from ndflow.ops.op_def import op_def

_INDEX = "Tindices: {int16, int32, int64}"
_BAD_INDICES = "bad_indices_policy: string = ''"


def _slices_shape(indices: TensorShape, indexed: TensorShape) -> TensorShape:
    """indices.shape[:-1] + indexed.shape[K:] for K = indices.shape[-1]."""
    if indices.rank is None or indexed.rank is None or indices.dims[-1] is None:
        return TensorShape(None)
    k = indices.dims[-1]
    if k > indexed.rank:
        raise ValueError(f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                         f"{fmt(indices)} and params shape: {fmt(indexed)}")
    return TensorShape(indices.dims[:-1] + indexed.dims[k:])


def _gather_nd_shape(ctx):
    params, indices = ctx.shapes
    return [_slices_shape(indices, params)]


GatherNd = op_def("GatherNd", inputs=["params: Tparams", "indices: Tindices"],
                  outputs=["output: Tparams"], attrs=["Tparams: type", _INDEX, _BAD_INDICES],
                  shape=_gather_nd_shape)


def _check_updates(indices: TensorShape, updates: TensorShape, out: TensorShape):
    want = _slices_shape(indices, out)
    if not want.is_compatible_with(updates):
        raise ValueError(f"Dimensions [{indices.rank - 1 if indices.rank else 0},...) of "
                         f"updates {updates} must match the indexed slices {want}")


def _scatter_nd_shape(ctx):
    indices, updates, shape = ctx.shapes
    value = static_value(ctx, 2)
    if value is not None:
        out = TensorShape([int(d) for d in value])
    elif shape.rank == 1 and shape.dims[0] is not None:
        out = TensorShape([None] * shape.dims[0])
    else:
        out = TensorShape(None)
    _check_updates(indices, updates, out)
    return [out]


ScatterNd = op_def("ScatterNd", inputs=["indices: Tindices", "updates: T", "shape: Tindices"],
                   outputs=["output: T"], attrs=["T: type", _INDEX, _BAD_INDICES],
                   shape=_scatter_nd_shape)


def _tensor_scatter_shape(ctx):
    tensor, indices, updates = ctx.shapes
    _check_updates(indices, updates, tensor)
    return [tensor]


def _tensor_scatter(name: str):
    return op_def(name, inputs=["tensor: T", "indices: Tindices", "updates: T"],
                  outputs=["output: T"], attrs=["T: type", _INDEX, _BAD_INDICES],
                  shape=_tensor_scatter_shape)


TensorScatterUpdate = _tensor_scatter("TensorScatterUpdate")
TensorScatterAdd = _tensor_scatter("TensorScatterAdd")
TensorScatterSub = _tensor_scatter("TensorScatterSub")
TensorScatterMin = _tensor_scatter("TensorScatterMin")
TensorScatterMax = _tensor_scatter("TensorScatterMax")


@tf_export("gather_nd", v1=[])
def gather_nd(params, indices, batch_dims: int = 0, name: str | None = None,
              bad_indices_policy: str = "") -> Tensor:
    """`tf.gather_nd`: the slices of `params` at the K-coordinate `indices`; with
    `batch_dims`, each index reads within its own batch element (the leading dims)."""
    static = static_value(batch_dims) if isinstance(batch_dims, Tensor) else batch_dims
    if static is not None and int(static) != 0:
        return _batch_gather_nd(params, indices, int(static), bad_indices_policy, name)
    return apply_op(GatherNd, [convert_to_tensor(params), int_input(indices)],
                    {"bad_indices_policy": bad_indices_policy}, name=name).outputs[0]


def _batch_gather_nd(params, indices, batch_dims: int, bad_indices_policy: str, name):
    """gather_nd within each batch element: the batch dims flattened into one, whose index
    leads every coordinate, then one GatherNd (TF's batch_gather_nd, its checks)."""
    with name_scope(name, "BatchGatherND"):
        indices = int_tensor(indices)
        params = convert_to_tensor(params)
        if batch_dims < 0:
            raise ValueError("tf.gather_nd does not allow negative batch_dims.")
        for what, t in (("indices", indices), ("params", params)):
            if t.shape.rank is not None and batch_dims >= t.shape.rank:
                raise ValueError(f"Argument `batch_dims` = {batch_dims} must be less than "
                                 f"rank(`{what}`) = {t.shape.rank}")
        params_shape = array_core.shape(params, out_type=indices.dtype)
        indices_shape = array_core.shape(indices, out_type=indices.dtype)
        batch_shape = params_shape[:batch_dims]
        batch = reduction.reduce_prod(batch_shape)
        flat_params = array_core.reshape(
            params, array_slicing.concat([[batch], params_shape[batch_dims:]], 0))
        flat_indices = array_core.reshape(
            indices, array_slicing.concat([[batch], indices_shape[batch_dims:]], 0))
        # each coordinate's batch element, as a leading coordinate
        positions = array_core.reshape(
            array_range.range(batch, dtype=indices.dtype),
            array_slicing.concat([[-1], array_fill.ones(
                array_core.rank(flat_indices) - 1, dtype=indices.dtype)], 0))
        leading = array_fill.broadcast_to(positions, array_slicing.concat(
            [array_core.shape(flat_indices, out_type=indices.dtype)[:-1], [1]], 0))
        out = apply_op(GatherNd, [flat_params, array_slicing.concat([leading, flat_indices],
                                                                    -1)],
                       {"bad_indices_policy": bad_indices_policy}).outputs[0]
        return array_core.reshape(out, array_slicing.concat(
            [batch_shape, array_core.shape(out, out_type=indices.dtype)[1:]], 0))


@tf_export(v1=["gather_nd", "manip.gather_nd"])
def gather_nd_v1(params, indices, name: str | None = None, batch_dims: int = 0,
                 bad_indices_policy: str = "") -> Tensor:
    """Gathers slices of `params` addressed by index tuples (TF1 argument order).

    Args:
      params: the tensor to gather from.
      indices: int32/int64 tensor whose last axis holds index tuples into the first
        `indices.shape[-1]` axes of `params` (after the batch axes).
      name: optional name for the operation.
      batch_dims: the number of leading batch axes shared by `params` and `indices`.
      bad_indices_policy: "", "DEFAULT" or "ERROR": an out-of-range index is an error;
        "IGNORE": an out-of-range index reads zeros (empty strings).

    Returns:
      A tensor of shape `indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:]`.

    Raises:
      InvalidArgumentError: for an out-of-range index, unless the policy is "IGNORE".

    Example:
      >>> tf.compat.v1.gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]]).numpy()
      array([3, 2], dtype=int32)
    """
    return gather_nd(params, indices, batch_dims, name, bad_indices_policy)


@tf_export("scatter_nd", v1=["scatter_nd", "manip.scatter_nd"])
def scatter_nd(indices, updates, shape, bad_indices_policy: str = "",
               name: str | None = None) -> Tensor:
    """`tf.scatter_nd`: zeros of `shape` with `updates` added at `indices` (duplicates
    sum)."""
    indices = int_tensor(indices)
    return apply_op(ScatterNd, [indices, convert_to_tensor(updates),
                                int_tensor(shape, dtype_hint=indices.dtype)],
                    {"bad_indices_policy": bad_indices_policy}, name=name).outputs[0]


def _apply_tensor_scatter(op, tensor, indices, updates, bad_indices_policy: str, name):
    tensor = convert_to_tensor(tensor)
    return apply_op(op, [tensor, int_input(indices),
                         convert_to_tensor(updates, dtype=tensor.dtype)],
                    {"bad_indices_policy": bad_indices_policy}, name=name).outputs[0]


def _public_tensor_scatter(op, doc: str):
    """The public function of a TensorScatter op taking `bad_indices_policy` (all but
    TensorScatterUpdate, as in TF 2.21)."""
    def tensor_scatter(tensor, indices, updates, bad_indices_policy: str = "",
                       name: str | None = None) -> Tensor:
        return _apply_tensor_scatter(op, tensor, indices, updates, bad_indices_policy, name)
    tensor_scatter.__doc__ = doc
    return tensor_scatter


@tf_export("tensor_scatter_nd_update", v1=["tensor_scatter_nd_update", "tensor_scatter_update"])
def tensor_scatter_nd_update(tensor, indices, updates, name: str | None = None) -> Tensor:
    """`tf.tensor_scatter_nd_update`: a copy of `tensor` with `updates` written at
    `indices`."""
    return _apply_tensor_scatter(TensorScatterUpdate, tensor, indices, updates, "", name)



tensor_scatter_nd_add = tf_export("tensor_scatter_nd_add",
                                  v1=["tensor_scatter_nd_add", "tensor_scatter_add"])(
    _public_tensor_scatter(TensorScatterAdd, "`tf.tensor_scatter_nd_add`: `updates` added "
                           "at `indices` (duplicates sum)."))
tensor_scatter_nd_sub = tf_export("tensor_scatter_nd_sub",
                                  v1=["tensor_scatter_nd_sub", "tensor_scatter_sub"])(
    _public_tensor_scatter(TensorScatterSub, "`tf.tensor_scatter_nd_sub`: `updates` "
                           "subtracted at `indices`."))
tensor_scatter_nd_min = tf_export("tensor_scatter_nd_min")(
    _public_tensor_scatter(TensorScatterMin, "`tf.tensor_scatter_nd_min`: the minimum of "
                           "the tensor and `updates` at `indices`."))
tensor_scatter_nd_max = tf_export("tensor_scatter_nd_max")(
    _public_tensor_scatter(TensorScatterMax, "`tf.tensor_scatter_nd_max`: the maximum of "
                           "the tensor and `updates` at `indices`."))


attach(globals(), array_nd_docs.DOCS)

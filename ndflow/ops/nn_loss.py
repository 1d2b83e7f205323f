"""Losses: SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits, L2Loss."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.doc_tables import attach
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import TensorShape, broadcast_shapes
from ndflow.core.tensor import Tensor
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_slicing,
    array_transpose,
    comparison,
    math,
    nn_loss_docs,
)
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.nn_common import FLOAT_T
from ndflow.ops.op_def import op_def


def _xent_shape(ctx):
    f, lab = ctx.shapes
    for s in (f, lab):
        if s.rank is not None and s.rank != 2:
            raise ValueError(f"Shape must be rank 2 but is rank {s.rank}")
    f = f if f.rank is not None else TensorShape([None, None])
    lab = lab if lab.rank is not None else TensorShape([None, None])
    try:
        both = broadcast_shapes(f, lab)
    except ValueError:
        raise ValueError(f"logits and labels must be broadcastable: logits_size="
                         f"[{f[0]},{f[1]}] labels_size=[{lab[0]},{lab[1]}]") from None
    return [TensorShape([both[0]]), both]


def _sparse_xent_shape(ctx):
    f, lab = ctx.shapes
    if f.rank is not None and f.rank != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {f.rank}")
    if lab.rank is not None and lab.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {lab.rank}")
    f = f if f.rank is not None else TensorShape([None, None])
    b = f[0] if f[0] is not None else (lab[0] if lab.rank is not None else None)
    if f[0] is not None and lab.rank is not None and lab[0] is not None and f[0] != lab[0]:
        raise ValueError(f"Dimensions must be equal, but are {f[0]} and {lab[0]}")
    return [TensorShape([b]), TensorShape([b, f[1]])]


SoftmaxCrossEntropyWithLogits = op_def(
    "SoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: T"],
    outputs=["loss: T", "backprop: T"], attrs=[FLOAT_T], shape=_xent_shape)
SparseSoftmaxCrossEntropyWithLogits = op_def(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: Tlabels"],
    outputs=["loss: T", "backprop: T"],
    attrs=[FLOAT_T, "Tlabels: {int32, int64} = DT_INT64"], shape=_sparse_xent_shape)
L2Loss = op_def("L2Loss", inputs=["t: T"], outputs=["output: T"], attrs=[FLOAT_T],
                shape=lambda ctx: [TensorShape([])])


@tf_export("nn.l2_loss")
def l2_loss(t, name: str | None = None) -> Tensor:
    """`tf.nn.l2_loss`: sum(t ** 2) / 2."""
    return apply_op(L2Loss, [t], name=name).outputs[0]


def _flatten_outer_dims(x, rank: int):
    if rank == 2:
        return x
    last = x.shape[-1]
    if last is not None:
        return array_core.reshape(x, [-1, last])
    return array_core.reshape(x, array_slicing.concat(
        [[-1], array_slicing.slice(array_core.shape(x), [rank - 1], [1])], 0))


@tf_export("nn.softmax_cross_entropy_with_logits", v1=[])
def softmax_cross_entropy_with_logits(labels, logits, axis: int = -1,
                                      name: str | None = None) -> Tensor:
    """`tf.nn.softmax_cross_entropy_with_logits` (TF2; gradients flow into labels too)."""
    labels = convert_to_tensor(labels, name="labels")
    logits = convert_to_tensor(logits, name="logits")
    convert = logits.dtype in (dtypes.float16, dtypes.bfloat16)
    precise = cast(logits, dtypes.float32) if convert else logits
    labels = cast(labels, precise.dtype) if labels.dtype is not precise.dtype \
        else labels
    rank = logits.shape.rank
    if rank is None:
        raise NotImplementedError("softmax_cross_entropy_with_logits needs a known rank")
    if rank == 0:
        raise ValueError(f"Logits cannot be scalars - received shape {logits.shape}.")
    if not -rank <= axis < rank:
        raise InvalidArgumentError(None, None, f"`axis` = {axis} is out of range [{-rank}, "
                                   f"{rank}) for logits of shape {logits.shape}")
    if axis % rank != rank - 1:
        # TF's _move_dim_to_end: the other dimensions keep their order
        perm = [d for d in range(rank) if d != axis % rank] + [axis % rank]
        precise = array_transpose.transpose(precise, perm)
        labels = array_transpose.transpose(labels, perm)
    out_shape = precise.shape.as_list()[:-1] if rank != 2 else None
    if out_shape is not None and not all(d is not None for d in out_shape):
        out_shape = array_slicing.slice(array_core.shape(precise), [0], [rank - 1])
    if rank == 1:
        precise = array_core.expand_dims(precise, 0)
        labels = array_core.expand_dims(labels, 0)
    elif rank > 2:
        precise = _flatten_outer_dims(precise, rank)
        labels = _flatten_outer_dims(labels, rank)
    cost = apply_op(SoftmaxCrossEntropyWithLogits, [precise, labels],
                    name=name if rank == 2 else None).outputs[0]
    if rank != 2:
        cost = array_core.reshape(cost, out_shape, name=name)
    return cast(cost, logits.dtype) if convert else cost


@tf_export(v1=["nn.softmax_cross_entropy_with_logits_v2"])
def softmax_cross_entropy_with_logits_v2(labels, logits, axis: int | None = None,
                                         name: str | None = None, dim=None) -> Tensor:
    """`tf.compat.v1.nn.softmax_cross_entropy_with_logits_v2` (TF2's function; `dim` is the
    deprecated alias of `axis`)."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    return softmax_cross_entropy_with_logits(labels, logits, -1 if axis is None else axis, name)


@tf_export(v1=["nn.softmax_cross_entropy_with_logits"])
def softmax_cross_entropy_with_logits_v1(_sentinel=None, labels=None, logits=None,
                                         dim: int = -1, name: str | None = None,
                                         axis: int | None = None) -> Tensor:
    """`tf.compat.v1.nn.softmax_cross_entropy_with_logits`: no gradient into labels."""
    labels = array_core.stop_gradient(convert_to_tensor(labels), name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits(labels, logits,
                                             axis if axis is not None else dim, name)


@tf_export("nn.sparse_softmax_cross_entropy_with_logits", v1=[])
def sparse_softmax_cross_entropy_with_logits(labels, logits, name: str | None = None) -> Tensor:
    """`tf.nn.sparse_softmax_cross_entropy_with_logits`: labels int32/int64 class indices."""
    labels = convert_to_tensor(labels, name="labels")
    logits = convert_to_tensor(logits, name="logits")
    convert = logits.dtype is dtypes.float16
    precise = cast(logits, dtypes.float32) if convert else logits
    lr, gr = labels.shape.rank, logits.shape.rank
    if gr == 0:
        raise ValueError(f"Logits cannot be scalars - received shape {logits.shape}.")
    if lr is not None and gr is not None and lr != gr - 1:
        raise ValueError(f"Rank mismatch: Rank of labels (received {lr}) should equal rank of "
                         f"logits minus 1 (received {gr}).")
    if gr == 2:
        cost = apply_op(SparseSoftmaxCrossEntropyWithLogits, [precise, labels],
                        name=name).outputs[0]
    else:
        if gr is None:
            raise NotImplementedError("sparse_softmax_cross_entropy_with_logits needs a known "
                                      "logits rank")
        flat_logits = _flatten_outer_dims(precise, gr)
        flat_labels = array_core.reshape(labels, [-1])
        cost = apply_op(SparseSoftmaxCrossEntropyWithLogits, [flat_logits, flat_labels]
                        ).outputs[0]
        dims = labels.shape
        cost = array_core.reshape(cost, dims.as_list() if dims.is_fully_defined() else
                                 array_core.shape(labels), name=name)
    return cast(cost, dtypes.float16) if convert else cost


@tf_export(v1=["nn.sparse_softmax_cross_entropy_with_logits"])
def sparse_softmax_cross_entropy_with_logits_v1(_sentinel=None, labels=None, logits=None,
                                                name: str | None = None) -> Tensor:
    """`tf.compat.v1.nn.sparse_softmax_cross_entropy_with_logits` (keyword arguments)."""
    return sparse_softmax_cross_entropy_with_logits(labels, logits, name)


@tf_export("nn.sigmoid_cross_entropy_with_logits")
def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name: str | None = None) -> Tensor:
    """`tf.nn.sigmoid_cross_entropy_with_logits`: max(x, 0) - x * z + log(1 + exp(-|x|))."""
    logits = convert_to_tensor(logits, name="logits")
    labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
    if not logits.shape.is_compatible_with(labels.shape):
        raise ValueError(f"`logits` and `labels` must have the same shape, received "
                         f"({logits.shape} vs {labels.shape}).")
    zeros = array_fill.zeros_like(logits)
    cond = comparison.greater_equal(logits, zeros)
    relu_logits = arithmetic.where(cond, logits, zeros)
    neg_abs_logits = arithmetic.where(cond, -logits, logits)
    return arithmetic.add(relu_logits - logits * labels,
                        math.log1p(math.exp(neg_abs_logits)), name=name)


attach(globals(), nn_loss_docs.DOCS)

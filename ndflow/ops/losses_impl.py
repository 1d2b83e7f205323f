"""`tf.compat.v1.losses`: TensorFlow 1's weighted losses, built from existing ops.

Every loss computes per-element losses in float32 (the cross entropies in the logits' dtype),
then `compute_weighted_loss` multiplies them by `weights` (a scalar, or a tensor of the same
rank whose every dimension is 1 or the loss's) and reduces them as `reduction` says — by
default the weighted sum divided by the number of non-zero weights. While a graph is built the
result is added to `loss_collection` (`tf.GraphKeys.LOSSES`); eagerly nothing is collected.
Gradients come from the ops the losses are made of.

Weights are checked statically, as TensorFlow does when the shapes are known (ValueError);
where a shape is only known at run time TensorFlow adds an Assert op, which ndflow does not
have: there incompatible weights fail in the multiplication instead, and weights that
broadcast with a lower rank are accepted.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.doc_tables import attach
from ndflow.core.graph import GraphKeys
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_fill, array_slicing, losses_impl_docs
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import (
    add,
    add_n,
    div_no_nan,
    log,
    maximum,
    minimum,
    multiply,
    squared_difference,
    subtract,
    where_v1,
)
from ndflow.ops.array_range import range as _range
from ndflow.ops.cast import cast
from ndflow.ops.comparison import composite_name, equal
from ndflow.ops.math import abs as _abs
from ndflow.ops.math import square
from ndflow.ops.nn_activation import relu
from ndflow.ops.nn_loss import (
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
)
from ndflow.ops.reduction import reduce_sum


@tf_export(v1=["losses.Reduction"])
class Reduction:
    """Types of loss reduction: `NONE` (the weighted losses, unreduced), `SUM`, `MEAN` (the
    sum over the sum of the weights), `SUM_OVER_BATCH_SIZE` (over the number of losses) and
    `SUM_BY_NONZERO_WEIGHTS` = `SUM_OVER_NONZERO_WEIGHTS` (over the non-zero weights)."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key) -> None:
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of "
                             f"{cls.all()}.")


# -- the collections (TF's losses/util.py) ---------------------------------------------------

@tf_export(v1=["losses.add_loss"])
def add_loss(loss, loss_collection=GraphKeys.LOSSES) -> None:
    """Adds `loss` to `loss_collection` of the default graph (nothing when eager)."""
    if loss_collection and not context.executing_eagerly():
        context.add_to_collection(loss_collection, loss)


@tf_export(v1=["losses.get_losses"])
def get_losses(scope=None, loss_collection=GraphKeys.LOSSES) -> list:
    """The losses in `loss_collection`, those whose names match `scope` when given."""
    return context.get_collection(loss_collection, scope)


@tf_export(v1=["losses.get_regularization_losses"])
def get_regularization_losses(scope=None) -> list:
    """The tensors in `tf.GraphKeys.REGULARIZATION_LOSSES` (filtered by `scope`)."""
    return context.get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


@tf_export(v1=["losses.get_regularization_loss"])
def get_regularization_loss(scope=None, name="total_regularization_loss") -> Tensor:
    """The sum of the regularization losses; a 0.0 constant when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return add_n(losses, name=name)
    return array_core.constant(0.0)


@tf_export(v1=["losses.get_total_loss"])
def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None) -> Tensor:
    """The sum of the collected losses and (by default) the regularization losses."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("Inputs must be an iterable of at least one Tensor/IndexedSlices "
                         "with the same dtype and shape.")
    return add_n(losses, name=name)


# -- weights (TF's weights_broadcast_ops) ----------------------------------------------------

_BROADCAST_ERROR = "weights can not be broadcast to values."


def _shown(t: Tensor):
    return t.numpy() if context.executing_eagerly() else t


def assert_broadcastable(weights: Tensor, values: Tensor) -> None:
    """ValueError unless `weights` is a scalar or has the rank of `values` and each of its
    dimensions is 1 or the one of `values` (where the shapes are known statically)."""
    ws, vs = weights.shape, values.shape
    if ws.rank is None or vs.rank is None or ws.rank == 0:
        return
    if ws.rank != vs.rank:
        raise ValueError(f"{_BROADCAST_ERROR} values.rank={vs.rank}. weights.rank={ws.rank}. "
                         f"values.shape={vs}. weights.shape={ws}. Received "
                         f"weights={_shown(weights)}, values={_shown(values)}")
    if ws.is_fully_defined() and vs.is_fully_defined():
        for i, (w, v) in enumerate(zip(ws.as_list(), vs.as_list())):
            if w not in (1, v):
                raise ValueError(f"{_BROADCAST_ERROR} Mismatch at dim {i}. values.shape="
                                 f"{np.array(vs.as_list())}, weights.shape="
                                 f"{np.array(ws.as_list())}. Received weights="
                                 f"{_shown(weights)}, values={_shown(values)}")


def broadcast_weights(weights, values: Tensor) -> Tensor:
    """`weights` (checked by `assert_broadcastable`) broadcast to the shape of `values`."""
    with composite_name(None, "broadcast_weights") as final:
        weights = convert_to_tensor(weights, dtype=values.dtype, name="weights")
        ws, vs = weights.shape, values.shape
        if ws.is_fully_defined() and vs.is_fully_defined() and ws.is_compatible_with(vs):
            return weights
        assert_broadcastable(weights, values)
        ones = array_fill.ones_like(values)
    return multiply(weights, ones, name=final)


def _num_elements(losses: Tensor) -> Tensor:
    return cast(array_core.size(losses, name="num_elements"), losses.dtype)


def _num_present(losses: Tensor, weights: Tensor, per_batch: bool = False) -> Tensor:
    """The number of losses with a non-zero weight (per batch entry, keeping the dims, with
    `per_batch`). Eagerly a non-zero scalar weight counts every element of `losses`, even
    `per_batch`, as in TensorFlow."""
    if context.executing_eagerly() and weights.shape.rank == 0 \
            and not weights.numpy() == 0:
        return _num_elements(losses)
    with composite_name(None, "num_present") as final:
        weights = cast(weights, dtypes.float32)
        present = where_v1(equal(weights, 0.0), array_fill.zeros_like(weights),
                           array_fill.ones_like(weights))
        present = broadcast_weights(present, losses)
        axis = _range(1, array_core.rank(present)) if per_batch else None
    return reduce_sum(present, axis=axis, keepdims=per_batch, name=final)


def _safe_mean(losses: Tensor, num_present: Tensor) -> Tensor:
    return div_no_nan(reduce_sum(losses), num_present, name="value")


# -- compute_weighted_loss -------------------------------------------------------------------

@tf_export(v1=["losses.compute_weighted_loss"])
def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """`losses * weights` reduced as `reduction` says, in the dtype of `losses` (computed in
    float32); added to `loss_collection` in graph mode."""
    Reduction.validate(reduction)
    with scopes.name_scope(scope, "weighted_loss"):
        context.get_default_graph()._last_loss_reduction = reduction
        losses = convert_to_tensor(losses)
        weights = convert_to_tensor(weights, dtype_hint=dtypes.float32)
        assert_broadcastable(weights, losses)
        input_dtype = losses.dtype
        losses = cast(losses, dtypes.float32)
        weights = cast(weights, dtypes.float32)
        weighted_losses = multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted_losses
        else:
            loss = reduce_sum(weighted_losses)
            if reduction == Reduction.MEAN:
                loss = _safe_mean(loss, reduce_sum(array_fill.ones_like(losses) * weights))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_mean(loss, _num_present(losses, weights))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_mean(loss, _num_elements(losses))
        loss = cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


# -- the losses ------------------------------------------------------------------------------

def _check_given(**args) -> None:
    for name, value in args.items():
        if value is None:
            raise ValueError(f"Argument `{name}` must not be None.")


def _float32_loss(default_scope: str, per_element, labels, predictions, weights, scope,
                  loss_collection, reduction) -> Tensor:
    """`compute_weighted_loss` of `per_element(labels, predictions)`, both cast to float32
    (ValueError when their static shapes are incompatible), in scope `default_scope`."""
    with scopes.name_scope(scope, default_scope) as scope:
        predictions = cast(predictions, dtypes.float32)
        labels = cast(labels, dtypes.float32)
        predictions.shape.assert_is_compatible_with(labels.shape)
        return compute_weighted_loss(per_element(labels, predictions), weights, scope,
                                     loss_collection, reduction)


@tf_export(v1=["losses.absolute_difference"])
def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted |predictions - labels|."""
    _check_given(labels=labels, predictions=predictions)
    return _float32_loss("absolute_difference", lambda lab, pred: _abs(subtract(pred, lab)),
                         labels, predictions, weights, scope, loss_collection, reduction)


@tf_export(v1=["losses.cosine_distance"])
def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None) -> Tensor:
    """Weighted 1 - sum(predictions * labels, axis) (both assumed unit-normalized); the
    losses keep `axis` as a dimension of size 1. `dim` is the deprecated name of `axis`."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _check_given(labels=labels, predictions=predictions)

    def losses(lab, pred):
        return 1 - reduce_sum(multiply(pred, lab), axis=(axis,), keepdims=True)
    return _float32_loss("cosine_distance_loss", losses, labels, predictions, weights, scope,
                         loss_collection, reduction)


@tf_export(v1=["losses.hinge_loss"])
def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted max(0, 1 - (2 * labels - 1) * logits), labels in {0, 1}."""
    _check_given(labels=labels, logits=logits)

    def losses(lab, z):
        all_ones = array_fill.ones_like(lab)
        return relu(subtract(all_ones, multiply(subtract(2 * lab, all_ones), z)))
    return _float32_loss("hinge_loss", losses, labels, logits, weights, scope, loss_collection,
                         reduction)


@tf_export(v1=["losses.huber_loss"])
def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted Huber loss of x = predictions - labels: 0.5 x^2 where |x| <= delta, else
    0.5 delta^2 + delta (|x| - delta)."""
    _check_given(labels=labels, predictions=predictions)

    def losses(lab, pred):
        abs_error = _abs(subtract(pred, lab))
        quadratic = minimum(abs_error, delta)
        linear = subtract(abs_error, quadratic)
        half = convert_to_tensor(0.5, dtype=quadratic.dtype)
        return add(multiply(half, multiply(quadratic, quadratic)), multiply(delta, linear))
    return _float32_loss("huber_loss", losses, labels, predictions, weights, scope,
                         loss_collection, reduction)


@tf_export(v1=["losses.log_loss"])
def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted -labels log(predictions + eps) - (1 - labels) log(1 - predictions + eps)."""
    _check_given(labels=labels, predictions=predictions)

    def losses(lab, pred):
        return -multiply(lab, log(pred + epsilon)) - multiply(1 - lab, log(1 - pred + epsilon))
    return _float32_loss("log_loss", losses, labels, predictions, weights, scope,
                         loss_collection, reduction)


@tf_export(v1=["losses.mean_pairwise_squared_error"])
def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES) -> Tensor:
    """Per batch entry, the mean over all pairs of its elements of
    ((p_i - p_j) - (l_i - l_j))^2, weighted and summed over the batch (a scalar)."""
    _check_given(labels=labels, predictions=predictions)
    with scopes.name_scope(scope, "mean_pairwise_squared_error"):
        weights = cast(weights, dtypes.float32)
        labels = cast(labels, dtypes.float32)
        assert_broadcastable(weights, labels)
        predictions = cast(predictions, dtypes.float32)
        predictions.shape.assert_is_compatible_with(labels.shape)
        diffs = subtract(predictions, labels)
        axis = _range(1, array_core.rank(diffs))
        sum_squares_diff_per_batch = reduce_sum(square(diffs), axis=axis, keepdims=True)
        num_present_per_batch = _num_present(diffs, weights, per_batch=True)
        term1 = 2.0 * div_no_nan(sum_squares_diff_per_batch,
                                 maximum(num_present_per_batch - 1, 0), name="value")
        sum_diff = reduce_sum(diffs, axis=axis, keepdims=True)
        term2 = 2.0 * div_no_nan(
            square(sum_diff),
            maximum(multiply(num_present_per_batch, num_present_per_batch - 1), 0),
            name="value")
        loss = reduce_sum(multiply(term1 - term2, weights))
        mean_loss = where_v1(reduce_sum(num_present_per_batch) > 0, loss,
                             array_fill.zeros_like(loss), name="value")
        add_loss(mean_loss, loss_collection)
        return mean_loss


@tf_export(v1=["losses.mean_squared_error"])
def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted (predictions - labels)^2."""
    _check_given(labels=labels, predictions=predictions)
    return _float32_loss("mean_squared_error",
                         lambda lab, pred: squared_difference(pred, lab), labels, predictions,
                         weights, scope, loss_collection, reduction)


def _in_logits_dtype(labels, logits) -> tuple:
    """Labels cast to the logits' dtype; ValueError when the static shapes are incompatible."""
    logits = convert_to_tensor(logits)
    labels = cast(labels, logits.dtype)
    logits.shape.assert_is_compatible_with(labels.shape)
    return labels, logits


@tf_export(v1=["losses.sigmoid_cross_entropy"])
def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted `tf.nn.sigmoid_cross_entropy_with_logits`, in the logits' dtype; labels
    smoothed towards 1/2 by `label_smoothing`."""
    _check_given(multi_class_labels=multi_class_labels, logits=logits)
    with scopes.name_scope(scope, "sigmoid_cross_entropy_loss") as scope:
        multi_class_labels, logits = _in_logits_dtype(multi_class_labels, logits)
        if label_smoothing > 0:
            multi_class_labels = (multi_class_labels * (1 - label_smoothing)
                                  + 0.5 * label_smoothing)
        losses = sigmoid_cross_entropy_with_logits(labels=multi_class_labels, logits=logits,
                                                   name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


@tf_export(v1=["losses.softmax_cross_entropy"])
def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted softmax cross entropy over the last axis, in the logits' dtype; labels
    smoothed towards 1/num_classes by `label_smoothing`; no gradient flows into them."""
    _check_given(onehot_labels=onehot_labels, logits=logits)
    with scopes.name_scope(scope, "softmax_cross_entropy_loss") as scope:
        onehot_labels, logits = _in_logits_dtype(onehot_labels, logits)
        if label_smoothing > 0:
            num_classes = cast(array_core.shape(onehot_labels)[-1], logits.dtype)
            smooth_positives = 1.0 - label_smoothing
            smooth_negatives = label_smoothing / num_classes
            onehot_labels = onehot_labels * smooth_positives + smooth_negatives
        onehot_labels = array_core.stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits,
                                                      name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def _squeeze_last_if(x: Tensor, pred: Tensor) -> Tensor:
    """`x` without its last dimension (of size 1) where the scalar `pred` holds at run time
    (TF conds a Squeeze; a reshape to the shortened shape needs no control flow)."""
    keep = subtract(array_core.rank(x), cast(pred, dtypes.int32))
    new_shape = array_slicing.slice(array_core.shape(x), [0], array_core.reshape(keep, [1]))
    return array_core.reshape(x, new_shape)


def _last_may_be_one(shape) -> bool:
    return shape.rank is None or (shape.rank > 0 and shape[-1] in (None, 1))


def _remove_squeezable_dimensions(labels, predictions, weights, expected_rank_diff: int):
    """Squeezes the last dimension of `predictions` or `labels` when their rank difference is
    `expected_rank_diff` + 1 or - 1, then that of `weights` when it has one more dimension
    than `labels`."""
    with scopes.name_scope(None, "remove_squeezable_dimensions"):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        ps, ls = predictions.shape, labels.shape
        if ps.rank is not None and ls.rank is not None:
            diff = ps.rank - ls.rank
            if diff == expected_rank_diff + 1 and ps[-1] in (None, 1):
                predictions = array_core.squeeze(predictions, [-1])
            elif diff == expected_rank_diff - 1 and ls.rank > 0 and ls[-1] in (None, 1):
                labels = array_core.squeeze(labels, [-1])
        else:
            diff = array_core.rank(predictions) - array_core.rank(labels)
            if _last_may_be_one(ps):
                predictions = _squeeze_last_if(predictions, equal(expected_rank_diff + 1, diff))
            if _last_may_be_one(ls):
                labels = _squeeze_last_if(labels, equal(expected_rank_diff - 1, diff))
    weights = convert_to_tensor(weights)
    lr, wr = labels.shape.rank, weights.shape.rank
    if lr is not None and wr is not None:
        if wr - lr == 1:
            weights = array_core.squeeze(weights, [-1])
    elif _last_may_be_one(weights.shape):
        diff = array_core.rank(weights) - array_core.rank(labels)
        weights = _squeeze_last_if(weights, equal(1, diff))
    return labels, predictions, weights


@tf_export(v1=["losses.sparse_softmax_cross_entropy"])
def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted `tf.nn.sparse_softmax_cross_entropy_with_logits` of integer class labels; a
    trailing dimension of size 1 of the labels or the weights is squeezed."""
    _check_given(labels=labels, logits=logits)
    with scopes.name_scope(scope, "sparse_softmax_cross_entropy_loss") as scope:
        labels, logits, weights = _remove_squeezable_dimensions(labels, logits, weights, 1)
        losses = sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


attach(globals(), losses_impl_docs.DOCS)

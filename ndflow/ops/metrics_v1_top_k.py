"""`tf.compat.v1.metrics` of the top k predictions (TensorFlow's metrics_impl.py):
precision_at_k / recall_at_k (of `predictions`' k largest classes), precision_at_top_k /
recall_at_top_k (of given class indices), optionally of one `class_id`, and
average_precision_at_k; with sparse_precision_at_k and sparse_average_precision_at_k, TF's
deprecated names.

`labels` are int64 class ids, `[batch]` or `[batch, n]` (dense, or a SparseTensor) against
`predictions` `[batch, num_classes]`. The counts are float64 local variables named, as TF
names them, by name scope (e.g. `precision_at_2/true_positive_at_2`), and are counted with
the `tf.sets` ops.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.ops import array_core, array_fill, array_slicing, sparse_api
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import add, div_no_nan, divide, minimum, multiply, where
from ndflow.ops.cast import cast
from ndflow.ops.comparison import composite_name, equal, greater_equal
from ndflow.ops.losses_impl import assert_broadcastable, broadcast_weights
from ndflow.ops.math_cumulative import cumsum
from ndflow.ops.metrics_v1 import _collected, _graph_only, _metric_variable
from ndflow.ops.reduction import reduce_max, reduce_sum
from ndflow.ops.sets_ops import set_difference, set_intersection, set_size
from ndflow.ops.sort import top_k
from ndflow.ops.sparse_tensor import SparseTensor, SparseTensorValue
from ndflow.ops.state_assign import assign_add


def _at_k_name(name: str, k=None, class_id=None) -> str:
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return f"{name}_class{class_id}" if class_id is not None else name


def _as_ids(x):
    """A SparseTensor (from a SparseTensorValue) or a dense tensor."""
    if isinstance(x, SparseTensorValue):
        return SparseTensor(*x)
    return x if isinstance(x, SparseTensor) else convert_to_tensor(x)


def _maybe_expand_labels(labels, predictions):
    """`labels` with a trailing dimension of 1 added when `predictions` has one more."""
    with name_scope(None, "expand_labels") as scope:
        labels = _as_ids(labels)
        pr = predictions.shape.rank
        if isinstance(labels, SparseTensor):
            lr = labels.dense_shape.shape[0]
            if pr is not None and lr is not None and pr == lr + 1:
                return sparse_api.reshape(
                    labels, array_slicing.concat([labels.dense_shape, [1]], 0), name=scope)
            return labels
        lr = labels.shape.rank
        if pr is None or lr is None or pr == lr:
            return labels
        if pr == lr + 1:
            return array_core.expand_dims(labels, -1, name=scope)
        raise ValueError(f"Unexpected labels shape {labels.shape} for predictions shape "
                         f"{predictions.shape}. Predictions rank should be the same rank as "
                         "labels rank or labels rank plus one .")


def _select_class_id(ids, selected_id):
    """The entries of `ids` equal to `selected_id`, as a SparseTensor of `ids`' shape."""
    ids = _as_ids(ids)
    if isinstance(ids, SparseTensor):
        return sparse_api.retain(ids, equal(ids.values, cast(selected_id, ids.dtype)))
    ids_shape = array_core.shape(ids, out_type=dtypes.int64)
    filled_shape = array_slicing.concat([ids_shape[:-1], [1]], 0)
    filled = array_fill.fill(filled_shape, cast(selected_id, dtypes.int64))
    result = set_intersection(filled, ids)
    return SparseTensor(result.indices, result.values, ids_shape)


def _sparse_count_at_k(scope: str, counted, labels, predictions_idx, class_id, weights):
    """float64 per-row size of `counted(predictions_idx, labels)` (a set op), weighted."""
    with name_scope(None, scope):
        rows = predictions_idx.shape[:-1] if predictions_idx.shape.rank else None
        if class_id is not None:
            labels = _select_class_id(labels, class_id)
            predictions_idx = _select_class_id(predictions_idx, class_id)
        count = cast(set_size(counted(predictions_idx, labels)), dtypes.float64)
        if rows is not None:   # (a set per row of the dense `predictions_idx`)
            count.set_shape(rows)
        if weights is not None:
            weights = convert_to_tensor(weights)
            assert_broadcastable(weights, count)
            count = multiply(count, cast(weights, dtypes.float64))
        return count


def _tp(predictions_idx, labels):
    return set_intersection(predictions_idx, labels)


def _fp(predictions_idx, labels):
    return set_difference(predictions_idx, labels, aminusb=True)


def _fn(predictions_idx, labels):
    return set_difference(predictions_idx, labels, aminusb=False)


_COUNTS = {"tp": ("true_positive", "true_positives", _tp),
           "fp": ("false_positive", "false_positives", _fp),
           "fn": ("false_negative", "false_negatives", _fn)}


def _streaming_count_at_k(key: str, labels, predictions_idx, k, class_id, weights):
    """A float64 variable named after the count, and its update adding this batch's total."""
    var_stem, scope, counted = _COUNTS[key]
    with name_scope(None, _at_k_name(var_stem, k, class_id)) as var_scope:
        count = _sparse_count_at_k(scope, counted, labels, predictions_idx, class_id, weights)
        batch_total = cast(reduce_sum(count), dtypes.float64)
        var = _metric_variable(var_scope, dtype=dtypes.float64)
        return var, assign_add(var, batch_total, name="update")


def _ratio_at_top_k(kind: str, other: str, labels, predictions_idx, k, class_id, weights,
                    metrics_collections, updates_collections, name, top_k_of=None):
    """tp / (tp + `other`) of the class ids `predictions_idx` (or of the `k` largest of
    `top_k_of`), in TF's scope; the value op is named as the scope."""
    with composite_name(name, _at_k_name(kind, k, class_id)) as final:
        if top_k_of is not None:
            _, predictions_idx = top_k(top_k_of, k)
        predictions_idx = convert_to_tensor(predictions_idx)
        labels = _maybe_expand_labels(labels, predictions_idx)
        top_k_idx = cast(predictions_idx, dtypes.int64)
        tp, tp_update = _streaming_count_at_k("tp", labels, top_k_idx, k, class_id, weights)
        rest, rest_update = _streaming_count_at_k(other, labels, top_k_idx, k, class_id,
                                                  weights)
        tp, rest = tp.read_value(), rest.read_value()
        total = add(tp, rest)
        update = divide(tp_update, add(tp_update, rest_update), name="update")
    value = divide(tp, total, name=final)
    return _collected(value, update, metrics_collections, updates_collections)


@tf_export(v1=["metrics.precision_at_top_k"])
def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) fraction of the class ids `predictions_idx` (`[batch, k]`) that are in
    their row's `labels` (only those equal to `class_id` when given)."""
    _graph_only("precision_at_top_k")
    return _ratio_at_top_k("precision", "fp", labels, predictions_idx, k, class_id, weights,
                           metrics_collections, updates_collections, name)


@tf_export(v1=["metrics.recall_at_top_k"])
def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) fraction of `labels` found among their row's class ids
    `predictions_idx` (only those equal to `class_id` when given)."""
    _graph_only("recall_at_top_k")
    return _ratio_at_top_k("recall", "fn", labels, predictions_idx, k, class_id, weights,
                           metrics_collections, updates_collections, name)


@tf_export(v1=["metrics.precision_at_k"])
def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None, name=None):
    """precision_at_top_k of the `k` largest `predictions` of each row."""
    _graph_only("sparse_precision_at_k")   # (TF's message names the old function)
    return _ratio_at_top_k("precision", "fp", labels, None, k, class_id, weights,
                           metrics_collections, updates_collections, name, predictions)


@tf_export(v1=["metrics.sparse_precision_at_k"])
def sparse_precision_at_k(labels, predictions, k, class_id=None, weights=None,
                          metrics_collections=None, updates_collections=None, name=None):
    """Deprecated: precision_at_k."""
    return precision_at_k(labels, predictions, k, class_id, weights, metrics_collections,
                          updates_collections, name)


@tf_export(v1=["metrics.recall_at_k"])
def recall_at_k(labels, predictions, k, class_id=None, weights=None,
                metrics_collections=None, updates_collections=None, name=None):
    """recall_at_top_k of the `k` largest `predictions` of each row."""
    _graph_only("recall_at_k")
    return _ratio_at_top_k("recall", "fn", labels, None, k, class_id, weights,
                           metrics_collections, updates_collections, name, predictions)


def _expand_and_tile(tensor, multiple: int, dim: int, name: str):
    """`tensor` with a new dimension before `dim` (a negative axis) repeated `multiple`
    times."""
    with name_scope(None, name) as scope:
        if isinstance(tensor, SparseTensor):
            shape = tensor.dense_shape
            cut = array_core.reshape(array_core.size(shape) + dim, [1])
            expanded_shape = array_slicing.concat(
                [array_slicing.slice(shape, [0], cut), [1],
                 array_slicing.slice(shape, cut, [-1])], 0, name="expanded_shape")
            expanded = sparse_api.reshape(tensor, expanded_shape, name="expand")
            if multiple == 1:
                return expanded
            return sparse_api.concat(dim - 1, [expanded] * multiple, name=scope)
        expanded = array_core.expand_dims(tensor, dim - 1, name="expand")
        if multiple == 1:
            return expanded
        ones = array_fill.ones_like(array_core.shape(tensor))
        multiples = array_slicing.concat([ones[:dim], [multiple], ones[dim:]], 0,
                                         name="multiples")
        return array_fill.tile(expanded, multiples, name=scope)


def _num_relevant(labels, k: int):
    """Per row, the number of labels (those >= 0 when dense), at most `k`."""
    with name_scope(None, "num_relevant") as scope:
        if isinstance(labels, SparseTensor):
            return minimum(set_size(labels), k, name=scope)
        num_labels = reduce_sum(where(greater_equal(labels, 0), array_fill.ones_like(labels),
                                      array_fill.zeros_like(labels)), axis=-1)
        return minimum(num_labels, cast(k, num_labels.dtype), name=scope)


def _average_precision_at_top_k(labels, predictions_idx):
    """Per row, the mean over its relevant labels of the precision at each rank of
    `predictions_idx` that holds one of them."""
    with name_scope(None, "average_precision") as scope:
        predictions_idx = cast(predictions_idx, dtypes.int64, name="predictions_idx")
        if predictions_idx.shape.rank == 0:
            raise ValueError("The rank of `predictions_idx` must be at least 1.")
        k = predictions_idx.shape[-1]
        if k is None:
            raise ValueError("The last dimension of predictions_idx must be set. Currently, "
                             "it is None.")
        labels = _maybe_expand_labels(labels, predictions_idx)
        predictions_idx_per_k = array_core.expand_dims(predictions_idx, -1,
                                                       name="predictions_idx_per_k")
        labels_per_k = _expand_and_tile(labels, k, -1, "labels_per_k")
        relevant_per_k = _sparse_count_at_k("relevant_per_k", _tp, labels_per_k,
                                            predictions_idx_per_k, None, None)
        tp_per_k = cumsum(relevant_per_k, axis=-1, name="tp_per_k")
        retrieved_per_k = cumsum(array_fill.ones_like(relevant_per_k), axis=-1,
                                 name="retrieved_per_k")
        precision_per_k = divide(tp_per_k, retrieved_per_k, name="precision_per_k")
        relevant_precision = multiply(precision_per_k, relevant_per_k,
                                      name="relevant_precision_per_k")
        precision_sum = reduce_sum(relevant_precision, axis=(-1,), name="precision_sum")
        num_relevant = cast(_num_relevant(labels, k), dtypes.float64)
        average_precision = divide(precision_sum, num_relevant, name=scope)
        average_precision.set_shape(precision_sum.shape)   # (one per row, as the labels)
        return average_precision


def _clean_out_of_range(labels, num_classes):
    """`labels` with ids >= `num_classes` replaced by -1."""
    if isinstance(labels, SparseTensor):
        values = labels.values
        high = reduce_max(values)
        cleaned = where(greater_equal(values, num_classes), -1 * array_fill.ones_like(values),
                        values)
        return SparseTensor(labels.indices,
                            where(greater_equal(high, num_classes), cleaned, values),
                            labels.dense_shape)
    high = reduce_max(labels)
    cleaned = where(greater_equal(labels, num_classes), -1 * array_fill.ones_like(labels),
                    labels)
    return where(greater_equal(high, num_classes), cleaned, labels)


@tf_export(v1=["metrics.average_precision_at_k"])
def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """The (weighted) mean over rows of the average precision of the `k` largest
    `predictions` against the row's `labels`."""
    _graph_only("sparse_average_precision_at_k")   # (TF's message names the old function)
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1.")
    with composite_name(name, _at_k_name("average_precision", k)) as final:
        predictions = convert_to_tensor(predictions)
        _, predictions_idx = top_k(predictions, k)
        num_classes = cast(array_core.shape(predictions)[-1], dtypes.int64)
        labels = _clean_out_of_range(_as_ids(labels), num_classes)
        average_precision = _average_precision_at_top_k(labels, predictions_idx)
        if weights is not None:
            weights = broadcast_weights(cast(weights, dtypes.float64), average_precision)
            average_precision = multiply(average_precision, weights)
        with name_scope(None, "max") as max_scope:
            max_var = _metric_variable(max_scope, dtype=dtypes.float64)
            if weights is None:
                batch_max = cast(array_core.size(average_precision, name="batch_max"),
                                 dtypes.float64)
            else:
                batch_max = reduce_sum(weights, name="batch_max")
            max_update = assign_add(max_var, batch_max, name="update")
        with name_scope(None, "total") as total_scope:
            total_var = _metric_variable(total_scope, dtype=dtypes.float64)
            batch_total = reduce_sum(average_precision, name="batch_total")
            total_update = assign_add(total_var, batch_total, name="update")
        value = div_no_nan(total_var.read_value(), max_var.read_value(), name="mean")
    update = div_no_nan(total_update, max_update, name=final)
    return _collected(value, update, metrics_collections, updates_collections)


@tf_export(v1=["metrics.sparse_average_precision_at_k"])
def sparse_average_precision_at_k(labels, predictions, k, weights=None,
                                  metrics_collections=None, updates_collections=None,
                                  name=None):
    """Deprecated: average_precision_at_k."""
    return average_precision_at_k(labels, predictions, k, weights, metrics_collections,
                                  updates_collections, name)

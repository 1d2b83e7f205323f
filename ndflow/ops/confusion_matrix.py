"""`tf.math.confusion_matrix`: counts (or summed weights) of (label, prediction) pairs,
scattered into a [num_classes, num_classes] matrix as TensorFlow builds it."""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.arithmetic import maximum
from ndflow.ops.array_core import reshape, stack
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_nd import scatter_nd
from ndflow.ops.cast import cast
from ndflow.ops.reduction import reduce_max


def _check_range(name: str, values: Tensor, num_classes) -> None:
    """TF's asserts (eager values and constants only: ndflow has no Assert op yet; in a
    graph an out-of-range pair is the scatter's InvalidArgumentError)."""
    v = values.numpy() if context.executing_eagerly() else constant_value(values)
    n = num_classes.numpy() if hasattr(num_classes, "numpy") else constant_value(num_classes)
    if v is None:
        return
    v = np.asarray(v)
    if v.size and v.min() < 0:
        raise InvalidArgumentError(None, None, f"`{name}` contains negative values")
    if n is not None and v.size and v.max() >= int(n):
        raise InvalidArgumentError(None, None, f"`{name}` out of bound\nCondition x < y did "
                                   f"not hold.")


@tf_export("math.confusion_matrix", v1=[])
def confusion_matrix(labels, predictions, num_classes=None, weights=None,
                     dtype=dtypes.int32, name=None) -> Tensor:
    """`tf.math.confusion_matrix`: entry [i, j] counts the examples with label i and
    prediction j (or sums their `weights`); `num_classes` defaults to the largest class + 1."""
    dtype = dtypes.as_dtype(dtype)
    with scopes.name_scope(name, "confusion_matrix"):
        labels = cast(reshape(convert_to_tensor(labels, name="labels"), [-1]), dtypes.int64)
        predictions = cast(reshape(convert_to_tensor(predictions, name="predictions"), [-1]),
                           dtypes.int64)
        if num_classes is None:
            num_classes = maximum(reduce_max(predictions), reduce_max(labels)) + 1
        else:
            num_classes = cast(convert_to_tensor(num_classes), dtypes.int64)
        _check_range("labels", labels, num_classes)
        _check_range("predictions", predictions, num_classes)
        values = ones_like(predictions, dtype=dtype) if weights is None else \
            cast(reshape(convert_to_tensor(weights), [-1]), dtype)
        indices = stack([labels, predictions], axis=1)
        return scatter_nd(indices, values, stack([num_classes, num_classes]))


@tf_export(v1=["math.confusion_matrix", "confusion_matrix"])
def confusion_matrix_v1(labels, predictions, num_classes=None, dtype=dtypes.int32, name=None,
                        weights=None) -> Tensor:
    """`tf.compat.v1.math.confusion_matrix` (TF 1.x's argument order)."""
    return confusion_matrix(labels, predictions, num_classes, weights, dtype, name)

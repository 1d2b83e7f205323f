"""`tf.keras.regularizers`: weight penalties added to a layer's `losses` (L1, L2, L1L2,
OrthogonalRegularizer)."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.keras.serialization_lib import lookup_functions, serialize_doc, serialize_object
from ndflow.ops import arithmetic, array_builders, linalg, math, reduction
from ndflow.ops.cast import cast


def _float_arg(value, name: str) -> float:
    if not isinstance(value, (int, float)) or value < 0 or value != value:
        raise ValueError(f"Invalid value for argument {name}: expected a non-negative float."
                         f"Received: {name}={value}")
    return float(value)


@keras_export("keras.regularizers.Regularizer", "keras.Regularizer")
class Regularizer:
    """Base class of weight regularizers: called on a weight, it returns a scalar penalty
    that the layer adds to its `losses` (and so to the training loss).

    Subclasses implement `__call__(x)` and, to be saved with a model, `get_config()`.
    This base class' penalty is 0.

    Example:

    >>> class SumOfWeights(tf.keras.regularizers.Regularizer):
    ...     def __call__(self, x):
    ...         return 0.5 * tf.reduce_sum(x)
    >>> float(SumOfWeights()(tf.ones((2, 2))))
    2.0
    """

    def __call__(self, x):
        return 0.0

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


@keras_export("keras.regularizers.L1L2", "keras.regularizers.l1_l2")
class L1L2(Regularizer):
    """Penalizes weights by `l1 * sum(|x|) + l2 * sum(x**2)`.

    Args:
      l1: the L1 factor (a non-negative float).
      l2: the L2 factor (a non-negative float).

    Raises:
      ValueError: a negative or non-numeric factor.

    Example:

    >>> float(tf.keras.regularizers.L1L2(l1=0.5, l2=0.25)(tf.constant([1.0, -2.0])))
    2.75
    """

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = _float_arg(l1, "l1"), _float_arg(l2, "l2")

    def __call__(self, x):
        penalty = cast(0.0, x.dtype)
        if self.l1:
            penalty += cast(self.l1, x.dtype) * reduction.reduce_sum(math.abs(x))
        if self.l2:
            penalty += cast(self.l2, x.dtype) * reduction.reduce_sum(math.square(x))
        return penalty

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


@keras_export("keras.regularizers.L1", "keras.regularizers.l1")
class L1(Regularizer):
    """Penalizes weights by `l1 * sum(|x|)` (pushes them to exactly zero: sparse
    weights).

    Args:
      l1: the factor (a non-negative float).

    Raises:
      ValueError: a negative or non-numeric factor.
    """

    def __init__(self, l1=0.01):
        self.l1 = _float_arg(l1, "l1")

    def __call__(self, x):
        return cast(self.l1, x.dtype) * reduction.reduce_sum(math.abs(x))

    def get_config(self) -> dict:
        return {"l1": float(np.float32(self.l1))}  # Keras 3 keeps L1's factor as a float32


@keras_export("keras.regularizers.L2", "keras.regularizers.l2")
class L2(Regularizer):
    """Penalizes weights by `l2 * sum(x**2)` (weight decay: keeps them small).

    Args:
      l2: the factor (a non-negative float).

    Raises:
      ValueError: a negative or non-numeric factor.

    Example:

    >>> float(tf.keras.regularizers.L2(0.5)(tf.constant([1.0, 2.0])))
    2.5
    """

    def __init__(self, l2=0.01):
        self.l2 = _float_arg(l2, "l2")

    def __call__(self, x):
        return cast(self.l2, x.dtype) * reduction.reduce_sum(math.square(x))

    def get_config(self) -> dict:
        return {"l2": self.l2}


@keras_export("keras.regularizers.OrthogonalRegularizer",
              "keras.regularizers.orthogonal_regularizer")
class OrthogonalRegularizer(Regularizer):
    """Pushes the rows (or columns) of a 2-D weight towards being orthogonal: the penalty
    is `factor * 0.5 *` the mean absolute cosine similarity over the distinct pairs.

    Args:
      factor: the penalty's scale (a non-negative float).
      mode: "rows" or "columns": which vectors should be orthogonal.

    Raises:
      ValueError: a bad `factor` or `mode`; when called, a weight that is not 2-D.
    """

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _float_arg(factor, "factor")
        if mode not in {"rows", "columns"}:
            raise ValueError('Invalid value for argument `mode`. Expected one of {"rows", '
                             f'"columns"}}. Received: mode={mode}')
        self.mode = mode

    def __call__(self, x):
        if x.shape.rank != 2:
            raise ValueError("Inputs to OrthogonalRegularizer must have rank 2. Received: "
                             f"inputs.shape={x.shape}")
        axis = 1 if self.mode == "rows" else 0
        # keras.ops.normalize: over the L2 norm, at least epsilon (1e-7)
        inverse = math.rsqrt(reduction.reduce_sum(math.square(x), axis=axis, keepdims=True))
        unit = x * arithmetic.minimum(inverse, cast(1e7, x.dtype))
        product = linalg.matmul(unit, unit, transpose_b=True) if self.mode == "rows" \
            else linalg.matmul(unit, unit, transpose_a=True)
        size = x.shape[0] if self.mode == "rows" else x.shape[1]
        off_diagonal = product * (1.0 - array_builders.eye(size, dtype=x.dtype))
        pairs = size * (size - 1.0) / 2.0
        return cast(self.factor * 0.5, x.dtype) * reduction.reduce_sum(
            math.abs(off_diagonal)) / cast(pairs, x.dtype)

    def get_config(self) -> dict:
        return {"factor": float(np.float32(self.factor)), "mode": self.mode}


_KNOWN = {c.__name__: c for c in (Regularizer, L1, L2, L1L2, OrthogonalRegularizer)}
_KNOWN.update({"l1": L1, "l2": L2, "l1_l2": L1L2, "regularizer": Regularizer,
               "orthogonal_regularizer": OrthogonalRegularizer})


@keras_export("keras.regularizers.serialize")
def serialize(regularizer):
    return None if regularizer is None else serialize_object(regularizer, "keras.regularizers")


serialize.__doc__ = serialize_doc("regularizer", "regularizers")
deserialize, get = lookup_functions("regularizer", "regularizers", _KNOWN, ("l2", "L2"))

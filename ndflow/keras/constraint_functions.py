"""`tf.keras.constraints`: projections applied to a weight after each optimizer update."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.serialization_lib import lookup_functions, serialize_doc, serialize_object
from ndflow.ops import arithmetic, math, reduction

_EPSILON = 1e-7


def _norms(w, axis):
    return math.sqrt(reduction.reduce_sum(math.square(w), axis=axis, keepdims=True))


@keras_export("keras.constraints.Constraint")
class Constraint:
    """Base class of weight constraints: called on a weight after each optimizer update,
    it returns the projected weight that replaces it.

    Subclasses implement `__call__(w)` and, to be saved with a model, `get_config()`.
    This base class returns `w` unchanged.
    """

    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


@keras_export("keras.constraints.MaxNorm", "keras.constraints.max_norm")
class MaxNorm(Constraint):
    """Caps the L2 norm of each weight vector at `max_value` (vectors with a larger norm
    are scaled down onto it).

    Args:
      max_value: the largest norm allowed.
      axis: the axis (or axes) the norm is taken over: for a Dense kernel
        (input_dim, units), 0 constrains each unit's incoming weights; for a Conv2D kernel
        (rows, cols, in, out), [0, 1, 2].
    """

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = math.clip_by_value(norms, 0.0, float(self.max_value))
        return w * (desired / (_EPSILON + norms))

    def get_config(self) -> dict:
        return {"max_value": self.max_value, "axis": self.axis}


@keras_export("keras.constraints.NonNeg", "keras.constraints.non_neg")
class NonNeg(Constraint):
    """Keeps weights non-negative: negative entries become 0.

    Example:

    >>> tf.keras.constraints.NonNeg()(tf.constant([-1.0, 2.0])).numpy()
    array([0., 2.], dtype=float32)
    """

    def __call__(self, w):
        return arithmetic.maximum(w, 0.0)


@keras_export("keras.constraints.UnitNorm", "keras.constraints.unit_norm")
class UnitNorm(Constraint):
    """Scales each weight vector to an L2 norm of 1.

    Args:
      axis: the axis (or axes) the norm is taken over: for a Dense kernel
        (input_dim, units), 0 constrains each unit's incoming weights; for a Conv2D kernel
        (rows, cols, in, out), [0, 1, 2].

    Example:

    >>> tf.keras.constraints.UnitNorm()(tf.constant([[3.0], [4.0]])).numpy().round(4)
    array([[0.6],
           [0.8]], dtype=float32)
    """

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (_EPSILON + _norms(w, self.axis))

    def get_config(self) -> dict:
        return {"axis": self.axis}


@keras_export("keras.constraints.MinMaxNorm", "keras.constraints.min_max_norm")
class MinMaxNorm(Constraint):
    """Keeps the L2 norm of each weight vector within [min_value, max_value]: each norm
    moves `rate` of the way towards its clipped value.

    Args:
      min_value: the smallest norm allowed.
      max_value: the largest norm allowed.
      rate: in [0, 1]: 1 clips the norms at once; smaller values move them gradually,
        update after update.
      axis: the axis (or axes) the norm is taken over: for a Dense kernel
        (input_dim, units), 0 constrains each unit's incoming weights; for a Conv2D kernel
        (rows, cols, in, out), [0, 1, 2].
    """

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = (self.rate * math.clip_by_value(norms, float(self.min_value),
                                                      float(self.max_value))
                   + (1 - self.rate) * norms)
        return w * (desired / (_EPSILON + norms))

    def get_config(self) -> dict:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


_KNOWN = {c.__name__: c for c in (Constraint, MaxNorm, NonNeg, UnitNorm, MinMaxNorm)}
_KNOWN.update({"max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm,
               "min_max_norm": MinMaxNorm})


@keras_export("keras.constraints.serialize")
def serialize(constraint):
    return None if constraint is None else serialize_object(constraint, "keras.constraints")


serialize.__doc__ = serialize_doc("constraint", "constraints")
deserialize, get = lookup_functions("constraint", "constraints", _KNOWN, ("non_neg", "NonNeg"))

"""TF1's assignment functions `tf.compat.v1.assign`, `assign_add` and `assign_sub` (TF's
state_ops). ndflow's variables are resource variables, for which TensorFlow's versions call
the variable's own method: `ref.assign(value, name=name)`, `ref.assign_add(value)`,
`ref.assign_sub(value)` — in a graph, a tensor holding the value after the update; eagerly,
the updated variable. Anything else has no such method (AttributeError, as in TensorFlow).
`validate_shape` and `use_locking` only matter for TF's reference variables."""

from __future__ import annotations

from ndflow.core.api_export import tf_export


@tf_export(v1=["assign"])
def assign(ref, value, validate_shape=None, use_locking=None, name=None):  # noqa: ARG001
    """Assigns `value` to the variable `ref` (TF1's `tf.assign`; the same as `ref.assign`).

    Args:
      ref: a `tf.Variable`.
      value: a tensor of the variable's dtype and shape.
      validate_shape: accepted for compatibility; the shape must always match.
      use_locking: accepted for compatibility; ignored.
      name: optional name for the operation.

    Returns:
      In a graph, the assign op's output (the new value); eagerly, the updated variable.

    Example:
      >>> v = tf.Variable([1.0, 2.0])
      >>> tf.compat.v1.assign(v, [3.0, 4.0]).numpy()
      array([3., 4.], dtype=float32)
    """
    return ref.assign(value, name=name)


def _update(method: str, what: str, start: float):
    """tf.compat.v1.<method> (assign_add, assign_sub): `ref.<method>(value)`."""
    def update(ref, value, use_locking=None, name=None):  # noqa: ARG001
        return getattr(ref, method)(value)
    update.__name__ = update.__qualname__ = method
    update.__doc__ = f"""{what} the variable `ref` (the same as `ref.{method}`).

    Args:
      ref: a `tf.Variable` of a numeric dtype.
      value: a tensor of the variable's dtype, broadcastable to its shape.
      use_locking: accepted for compatibility; ignored.
      name: accepted for compatibility; ignored.

    Returns:
      In a graph, the op's output (the new value); eagerly, the updated variable.

    Example:
      >>> v = tf.Variable({start})
      >>> float(tf.compat.v1.{method}(v, 2.0))
      3.0
    """
    return tf_export(v1=[method])(update)


assign_add = _update("assign_add", "Adds `value` to", 1.0)
assign_sub = _update("assign_sub", "Subtracts `value` from", 5.0)

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
    return ref.assign(value, name=name)


@tf_export(v1=["assign_add"])
def assign_add(ref, value, use_locking=None, name=None):  # noqa: ARG001
    return ref.assign_add(value)


@tf_export(v1=["assign_sub"])
def assign_sub(ref, value, use_locking=None, name=None):  # noqa: ARG001
    return ref.assign_sub(value)

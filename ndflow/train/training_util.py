"""The global step: an int64 scalar variable "global_step" in the GLOBAL_STEP collection.

`tf.compat.v1.train.get_or_create_global_step` / `get_global_step` / `create_global_step`.
Eagerly the collection lives on the global default graph, so the same eager variable is
returned every time (as TF does).
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.ops.variables import Variable
from ndflow.train import slot_creator
from ndflow.train.init_scope import init_scope


def _dtype_of(t):
    return t.dtype.base_dtype if hasattr(t.dtype, "base_dtype") else t.dtype


@tf_export(v1=["train.assert_global_step"])
def assert_global_step(global_step_tensor) -> None:
    """TypeError unless `global_step_tensor` is an integer scalar variable or tensor."""
    dtype = _dtype_of(global_step_tensor)
    if not dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: {dtype!r}')
    shape = global_step_tensor.shape
    if shape.rank != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


@tf_export(v1=["train.get_global_step"])
def get_global_step(graph=None) -> Variable | None:
    """The global step variable of `graph` (default graph), or None."""
    graph = graph or context.get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        return None  # TF logs "Multiple tensors in global_step collection."
    if found:
        step = found[0]
    else:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except (KeyError, ValueError):
            return None
    assert_global_step(step)
    return step


@tf_export(v1=["train.create_global_step"])
def create_global_step(graph=None) -> Variable:
    """Creates the global step (ValueError if it exists already)."""
    graph = graph or context.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    if context.executing_eagerly():
        with init_scope():
            step = slot_creator.make_variable(
                lambda: slot_creator.filled([], dtypes.int64), GraphKeys.GLOBAL_STEP,
                trainable=False, dtype=dtypes.int64)
        graph.add_to_collection(GraphKeys.GLOBAL_STEP, step)
        return step
    with graph.as_default(), graph.name_scope(None):
        return slot_creator.make_variable(
            lambda: slot_creator.filled([], dtypes.int64), GraphKeys.GLOBAL_STEP,
            trainable=False,
            dtype=dtypes.int64, collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


@tf_export(v1=["train.get_or_create_global_step"])
def get_or_create_global_step(graph=None) -> Variable:
    """The global step of `graph`, created on first use."""
    graph = graph or context.get_default_graph()
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


@tf_export(v1=["train.global_step"])
def global_step(sess, global_step_tensor) -> int:
    """`tf.compat.v1.train.global_step`: the step's current value as a Python int."""
    if context.executing_eagerly():
        return int(global_step_tensor.numpy())
    return int(sess.run(global_step_tensor))

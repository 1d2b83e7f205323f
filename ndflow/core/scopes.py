"""Mode-independent scopes: `tf.device`, `tf.name_scope`, `tf.control_dependencies`.

In eager mode names and control dependencies mean nothing (ops run in program order) and
the device scope picks the device eager ops run on; while building a graph they apply to the
default graph.
"""

from __future__ import annotations

import contextlib

from ndflow.core import context
from ndflow.core.api_export import tf_export


@tf_export("device", v1=[])
def device(device_name):
    """`with tf.device("/GPU:0")`: where ops created inside are placed."""
    if context.executing_eagerly():
        return context.eager_device_scope(device_name or "")
    return context.get_default_graph().device(device_name)


@tf_export(v1=["device"])
def device_v1(device_name_or_function):
    """`tf.compat.v1.device`: a device string (device functions are not supported)."""
    if callable(device_name_or_function) and context.executing_eagerly():
        raise RuntimeError("tf.device does not support functions when eager execution is "
                           "enabled.")
    return device(device_name_or_function)


@tf_export("name_scope")
@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """`tf.name_scope(name)` (and v1's `name_scope(name, default_name, values)`)."""
    if name is None:
        name = default_name
    if context.executing_eagerly():
        # TF's eager scopes: nested, never made unique; "x/" re-enters "x" exactly.
        state = context.state()
        outer = state.name_scope
        if not name:
            inner = ""
        elif name.endswith("/"):
            inner = name[:-1]
        else:
            inner = f"{outer}/{name}" if outer else name
        state.name_scope = inner
        try:
            yield inner + "/" if inner else ""
        finally:
            state.name_scope = outer
        return
    with context.get_default_graph().name_scope(name) as scope:
        yield scope


@tf_export("control_dependencies")
def control_dependencies(control_inputs):
    if context.executing_eagerly():
        return contextlib.nullcontext()
    return context.get_default_graph().control_dependencies(control_inputs)


def get_name_scope() -> str:
    if context.executing_eagerly():
        return context.state().name_scope
    return context.get_default_graph().get_name_scope()

"""Mode-independent scopes: `tf.device`, `tf.name_scope`, `tf.control_dependencies`.

In eager mode names and control dependencies mean nothing (ops run in program order) and
the device scope picks the device eager ops run on; while building a graph they apply to the
default graph.
"""

from __future__ import annotations

import contextlib

from ndflow.core import context


def device(device_name):
    """`with tf.device("/GPU:0")`: where ops created inside are placed."""
    if context.executing_eagerly():
        return context.eager_device_scope(device_name or "")
    return context.get_default_graph().device(device_name)


@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """`tf.name_scope(name)` (and v1's `name_scope(name, default_name, values)`)."""
    if name is None:
        name = default_name
    if context.executing_eagerly():
        yield "" if not name else name + "/"
        return
    with context.get_default_graph().name_scope(name) as scope:
        yield scope


def control_dependencies(control_inputs):
    if context.executing_eagerly():
        return contextlib.nullcontext()
    return context.get_default_graph().control_dependencies(control_inputs)


def get_name_scope() -> str:
    if context.executing_eagerly():
        return ""
    return context.get_default_graph().get_name_scope()

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
    """A context manager placing the ops created inside on a device.

    Args:
      device_name: a device string such as "/CPU:0" or "/GPU:1" (partial specs merge with
        enclosing ones); None clears the enclosing device. TF2 does not accept a function.

    Returns:
      A context manager.

    Raises:
      RuntimeError: if `device_name` is a function (use `tf.compat.v1.device` in graphs).

    Example:
      >>> with tf.device("/CPU:0"):
      ...     x = tf.constant(1.0)
      >>> x.device
      '/job:localhost/replica:0/task:0/device:CPU:0'
    """
    if callable(device_name):
        raise RuntimeError("tf.device does not support functions.")
    if context.executing_eagerly():
        return context.eager_device_scope(device_name or "")
    return context.get_default_graph().device(device_name)


@tf_export(v1=["device"])
def device_v1(device_name_or_function):
    """`tf.compat.v1.device`: a device string or a device function (op -> device string,
    e.g. `tf.compat.v1.train.replica_device_setter`), graphs only."""
    if callable(device_name_or_function):
        if context.executing_eagerly():
            raise RuntimeError("tf.device does not support functions when eager execution "
                               "is enabled.")
        return context.get_default_graph().device(device_name_or_function)
    return device(device_name_or_function)


@tf_export("name_scope")
@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """A context manager that prefixes the names of the ops created inside.

    Scopes nest ("outer/inner/op"); a name used twice gets a suffix ("scope_1"). Eagerly the
    scope is recorded (`tf.get_current_name_scope`) although eager ops have no names.

    Args:
      name: the scope name; a name ending in "/" is used as an absolute scope as it is.
      default_name: (TF1 form) the name used when `name` is None.
      values: (TF1 form) the inputs, used to find the graph.

    Returns:
      A context manager yielding the full scope name (ending in "/").

    Example:
      >>> with tf.Graph().as_default():
      ...     with tf.name_scope("layer"):
      ...         print(tf.constant(1.0, name="w").name)
      layer/w:0
    """
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
    """A context manager making the ops created inside it run after `control_inputs`.

    Executing eagerly ops run in program order, so it does nothing (except inside a
    `tf.function`, whose graph it acts on).

    Args:
      control_inputs: a list of ops or tensors that must run first; None clears the
        dependencies of enclosing blocks.

    Returns:
      A context manager.

    Example:
      >>> g = tf.Graph()
      >>> with g.as_default():
      ...     a = tf.constant(1.0)
      ...     with tf.control_dependencies([a]):
      ...         b = tf.constant(2.0)
      >>> [op.name for op in b.op.control_inputs]
      ['Const']
    """
    if context.executing_eagerly():
        return contextlib.nullcontext()
    return context.get_default_graph().control_dependencies(control_inputs)


def get_name_scope() -> str:
    if context.executing_eagerly():
        return context.state().name_scope
    return context.get_default_graph().get_name_scope()


@tf_export("get_current_name_scope", v1=[])
def get_current_name_scope() -> str:
    """The name scope being built in: "outer/inner", or "" at the top.

    Returns:
      A str without a trailing "/".

    Example:
      >>> with tf.name_scope("outer"):
      ...     print(tf.get_current_name_scope())
      outer
    """
    return get_name_scope()


@tf_export("inside_function", v1=[])
def inside_function() -> bool:
    """Whether ops are being added to a function's graph (while tracing a `tf.function`).

    Returns:
      A bool: False eagerly and in a plain `tf.Graph`, True inside tf.function tracing.

    Example:
      >>> tf.inside_function()
      False
    """
    return not context.executing_eagerly() and \
        hasattr(context.get_default_graph(), "outer_graph")


@tf_export("init_scope", v1=["init_scope"])
@contextlib.contextmanager
def init_scope():
    """Leaves every function being traced for the outermost context — eager execution, or the
    TF1 graph the functions are built in — with no control dependencies and no tape recording
    (where variables and other state are created once), in the name scope it was entered in,
    as TF's does."""
    state = context.state()
    scope = get_name_scope()
    graph = context.get_default_graph() if state.graph_stack else None
    while graph is not None and getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    traced_from_eager = graph is not None and hasattr(graph, "outer_graph")
    saved = state.graph_stack
    state.graph_stack = [] if graph is None or traced_from_eager else [graph]
    try:
        with context.stop_recording(), control_dependencies(None), \
                absolute_name_scope(scope):
            yield
    finally:
        state.graph_stack = saved


@contextlib.contextmanager
def absolute_name_scope(scope: str):
    """The name scope `scope` (absolute, "" for the root) in the current graph or eager
    context: where a lifted variable or an init_scope's op is named."""
    if not context.executing_eagerly():
        with context.get_default_graph().name_scope(scope + "/" if scope else None):
            yield
        return
    state = context.state()
    saved, state.name_scope = state.name_scope, scope
    try:
        yield
    finally:
        state.name_scope = saved

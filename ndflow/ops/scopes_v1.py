"""TF1 graph scopes of `tf.compat.v1`: `op_scope` and `variable_op_scope` (the deprecated
argument orders of `name_scope` / `variable_scope`), `container` and `colocate_with`.

ndflow places ops by device strings only, so `colocate_with(op)` puts the ops made inside on
`op`'s device, replacing the enclosing device scopes (TF's "a colocation scope resets any
existing device constraints"), without TF's `_class` colocation attr."""

from __future__ import annotations

import contextlib

from ndflow.core import context, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import Operation
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.variable_scope import variable_scope


@tf_export(v1=["op_scope"])
@contextlib.contextmanager
def op_scope(values, name, default_name=None):
    """`tf.compat.v1.op_scope` (deprecated): `name_scope(name, default_name, values)`."""
    with scopes.name_scope(name, default_name=default_name, values=values) as scope:
        yield scope


@tf_export(v1=["variable_op_scope"])
@contextlib.contextmanager
def variable_op_scope(values, name_or_scope, default_name=None, initializer=None,
                      regularizer=None, caching_device=None, partitioner=None,
                      custom_getter=None, reuse=None, dtype=None, use_resource=None,
                      constraint=None):
    """`tf.compat.v1.variable_op_scope` (deprecated): `variable_scope` with `values` first."""
    with variable_scope(name_or_scope, default_name=default_name, values=values,
                        initializer=initializer, regularizer=regularizer,
                        caching_device=caching_device, partitioner=partitioner,
                        custom_getter=custom_getter, reuse=reuse, dtype=dtype,
                        use_resource=use_resource, constraint=constraint) as scope:
        yield scope


@tf_export(v1=["container"])
def container(container_name):
    """`tf.compat.v1.container`: stateful ops made inside (variables, queues, tables,
    accumulators) keep their resources in container `container_name`."""
    return context.get_default_graph().container(container_name)


def _device_of(op) -> str:
    if isinstance(op, Operation):
        return op.device
    dev = getattr(op, "device", None)
    if dev is None:
        dev = convert_to_tensor(op).device
    return dev or ""


@tf_export(v1=["colocate_with"])
@contextlib.contextmanager
def colocate_with(op, ignore_existing=False):
    """Ops made inside are placed with `op` (an Operation, tensor or variable); `op=None`
    with `ignore_existing=True` clears every enclosing device scope."""
    if op is None and not ignore_existing:
        raise ValueError("Trying to reset colocation (op is None) but ignore_existing is "
                         "not True")
    if context.executing_eagerly():  # TF: the op's device
        if op is None:
            yield
            return
        with scopes.device(_device_of(op)):
            yield
        return
    graph = context.get_default_graph()
    device = "" if op is None else _device_of(op)
    with graph.device(None):  # colocation wins over the device scopes around it
        if device:
            with graph.device(device):
                yield
        else:
            yield

"""Resource-variable ops: VarHandleOp, ReadVariableOp, Assign{,Add,Sub}VariableOp, ...

A variable is a *resource*: `VarHandleOp` yields a handle (dtype `resource`), kernels look
the storage up in the runtime context (`RuntimeContext.resource`), and the stored value is
an immutable ATen tensor replaced on every assignment. Gradients flow through the handle:
ReadVariableOp's gradient passes the incoming gradient to its resource input, so
`tf.gradients(loss, var)` / `tape.gradient(loss, var)` differentiate w.r.t. `var.handle`.
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import no_outputs, op_def, scalar_output

VarHandleOp = op_def(
    "VarHandleOp", outputs=["resource: resource"],
    attrs=["container: string = ''", "shared_name: string = ''", "debug_name: string = ''",
           "dtype: type", "shape: shape", "allowed_devices: list(string) = []"],
    shape=scalar_output, gradient_undefined=True, stateful=True,
    doc="Creates a handle to a variable resource named `shared_name` in `container`.")

def _read_shape(ctx):
    """The declared shape when the handle comes straight from a VarHandleOp, else unknown
    (variables set the static shape of their reads themselves)."""
    inputs = getattr(ctx, "_inputs", None)
    producer = getattr(inputs[0], "op", None) if inputs else None
    if producer is not None and getattr(producer, "type", None) == "VarHandleOp":
        return [producer.attrs["shape"]]
    return [TensorShape(None)]


ReadVariableOp = op_def(
    "ReadVariableOp", inputs=["resource: resource"], outputs=["value: dtype"],
    attrs=["dtype: type"], shape=_read_shape, stateful=True,
    doc="Reads the current value of a variable.")


@ReadVariableOp.def_grad
def _read_variable_grad(op, grad):
    """The gradient of a read is the gradient w.r.t. the variable (its handle)."""
    return [grad]


AssignVariableOp = op_def(
    "AssignVariableOp", inputs=["resource: resource", "value: dtype"],
    attrs=["dtype: type", "validate_shape: bool = false"], shape=no_outputs,
    gradient_undefined=True, stateful=True, doc="Assigns a new value to a variable.")

AssignAddVariableOp = op_def(
    "AssignAddVariableOp", inputs=["resource: resource", "value: dtype"],
    attrs=["dtype: type"], shape=no_outputs, gradient_undefined=True, stateful=True,
    doc="Adds a value to the current value of a variable.")

AssignSubVariableOp = op_def(
    "AssignSubVariableOp", inputs=["resource: resource", "value: dtype"],
    attrs=["dtype: type"], shape=no_outputs, gradient_undefined=True, stateful=True,
    doc="Subtracts a value from the current value of a variable.")

VarIsInitializedOp = op_def(
    "VarIsInitializedOp", inputs=["resource: resource"], outputs=["is_initialized: bool"],
    shape=scalar_output, not_differentiable=True, stateful=True,
    doc="Whether the variable behind the handle has been initialized.")

DisableCopyOnRead = op_def(
    "DisableCopyOnRead", inputs=["resource: resource"], shape=no_outputs,
    gradient_undefined=True, stateful=True,
    doc="Turns off copy-on-read for the variable (TF's save graphs run it before reading; "
        "ndflow's reads never copy, so it does nothing).")

DestroyResourceOp = op_def(
    "DestroyResourceOp", inputs=["resource: resource"],
    attrs=["ignore_lookup_error: bool = true"], shape=no_outputs, gradient_undefined=True,
    stateful=True, doc="Deletes the resource behind the handle.")


def var_handle_op(dtype, shape, container: str = "", shared_name: str = "",
                  allowed_devices=(), name: str | None = None, exact_name: bool = False):
    """A VarHandleOp output. `exact_name` uses `name` as is (already made unique)."""
    attrs = {"container": container, "shared_name": shared_name, "debug_name": "",
             "dtype": dtypes.as_dtype(dtype), "shape": as_shape(shape),
             "allowed_devices": list(allowed_devices)}
    if exact_name and not context.executing_eagerly():
        graph = context.get_default_graph()
        op = graph.create_op(VarHandleOp, [], attrs, [(dtypes.resource, TensorShape([]))],
                             name)
        for tape in context.active_tapes():
            tape.record(op)
        return op.outputs[0]
    return apply_op(VarHandleOp, [], attrs, name=name).outputs[0]


def read_variable_op(resource, dtype, name: str | None = None):
    return apply_op(ReadVariableOp, [resource], {"dtype": dtypes.as_dtype(dtype)},
                    name=name).outputs[0]


def assign_variable_op(resource, value, validate_shape: bool = False,
                       name: str | None = None):
    return apply_op(AssignVariableOp, [resource, value], {"validate_shape": validate_shape},
                    name=name)


def assign_add_variable_op(resource, value, name: str | None = None):
    return apply_op(AssignAddVariableOp, [resource, value], name=name)


def assign_sub_variable_op(resource, value, name: str | None = None):
    return apply_op(AssignSubVariableOp, [resource, value], name=name)


def var_is_initialized_op(resource, name: str | None = None):
    return apply_op(VarIsInitializedOp, [resource], name=name).outputs[0]


def destroy_resource_op(resource, ignore_lookup_error: bool = True, name: str | None = None):
    return apply_op(DestroyResourceOp, [resource],
                    {"ignore_lookup_error": ignore_lookup_error}, name=name)

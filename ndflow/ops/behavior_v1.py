"""TF1 behaviour switches and checks of `tf.compat.v1`: `executing_eagerly_outside_functions`,
the resource-variable and control-flow-v2 toggles, and `add_check_numerics_ops`.

ndflow has one variable kind (resource variables) and one control flow (v2: If/While
functions), so `resource_variables_enabled()` and `control_flow_v2_enabled()` are always
True: enabling is a no-op, and disabling logs a warning that nothing changes, rather than
pretending to build ref variables or Switch/Merge graphs. (Tensor equality, which ndflow
does switch, is core/tensor_equality.py.)"""

from __future__ import annotations

from ndflow.core import context, dtypes, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.ops.array_core import group
from ndflow.ops.math import check_numerics


@tf_export(v1=["executing_eagerly_outside_functions"])
def executing_eagerly_outside_functions() -> bool:
    """Whether the outermost context is eager: True eagerly and inside functions traced from
    eager code, False in TF1 graphs (and functions built in them)."""
    if context.executing_eagerly():
        return True
    graph = context.get_default_graph()
    while getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    return context.eager_enabled() and hasattr(graph, "outer_graph")


@tf_export(v1=["resource_variables_enabled"])
def resource_variables_enabled() -> bool:
    """True: every ndflow variable is a resource variable."""
    return True


@tf_export(v1=["enable_resource_variables"])
def enable_resource_variables() -> None:
    """Variables are resource variables (always so in ndflow)."""


@tf_export(v1=["disable_resource_variables"])
def disable_resource_variables() -> None:
    """TF1's reference variables do not exist in ndflow: warns and keeps resource
    variables (whose reads are consistent within a step, a stricter guarantee)."""
    tf_logging.warning("disable_resource_variables() has no effect in ndflow: variables are "
                       "always resource variables (resource_variables_enabled() stays True).")


@tf_export(v1=["control_flow_v2_enabled"])
def control_flow_v2_enabled() -> bool:
    """True: `tf.cond` / `tf.while_loop` build If/While ops with function bodies."""
    return True


@tf_export(v1=["enable_control_flow_v2"])
def enable_control_flow_v2() -> None:
    """Control flow v2 (always on in ndflow)."""


@tf_export(v1=["disable_control_flow_v2"])
def disable_control_flow_v2() -> None:
    """TF1's Switch/Merge control flow does not exist in ndflow: warns and keeps v2."""
    tf_logging.warning("disable_control_flow_v2() has no effect in ndflow: tf.cond and "
                       "tf.while_loop always build control flow v2 (If/While) ops.")


_CHECKED = (dtypes.float16, dtypes.float32, dtypes.float64)


@tf_export(v1=["add_check_numerics_ops"])
def add_check_numerics_ops():
    """One op running a CheckNumerics on every half/float/double tensor of the default graph,
    chained so they run in creation order (the first NaN/Inf found is reported with its
    tensor's name, "op:index")."""
    if context.executing_eagerly():
        raise RuntimeError(
            "add_check_numerics_ops() is not compatible with eager execution. To check for "
            "Inf's and NaN's under eager execution, call tf.debugging.enable_check_numerics() "
            "once before executing the checked operations.")
    graph = context.get_default_graph()
    check_op = []
    for op in graph.get_operations():
        for output in op.outputs:
            if output.dtype in _CHECKED:
                with graph.control_dependencies(check_op):
                    check_op = [check_numerics(output, message=f"{op.name}:{output.value_index}")]
    return group(*check_op)

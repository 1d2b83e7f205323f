"""The one compile path: graph -> pass pipeline -> Plan.

Every way of running a graph comes through here: `Session.run`, `tf.function` calls (and
`ConcreteFunction.optimized_graph()`), and the branch and loop-body functions of If/Case/While,
which compile with the pass configuration of the run that encloses them.

    plan = compile_plan(graph, feeds, fetches, targets, resolve_pass_config(), runtime_ctx)
    outputs = plan.run(feed_values)
"""

from __future__ import annotations

from ndflow.core.graph import Graph
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext
from ndflow.passes.pipeline import run_pipeline
from ndflow.runtime.plan import Plan


def optimize(graph: Graph, feeds: list, fetches: list, targets: list, config: PassConfig,
             graph_id: str = "tf_graph", feed_specs: dict | None = None,
             specialize: bool = False) -> tuple:
    """Runs the pass pipeline on a copy of `graph`; returns (optimized graph, feeds, fetches,
    targets), the last three as the tensors and ops of the optimized graph.

    `feed_specs` maps a feed's name to the (dtype, shape) of the value fed in this run; by
    default the feeds' static dtypes and shapes. `specialize`: compile for those shapes
    (passes/shape_specialization.py); the plan then runs only feeds of those shapes."""
    if feed_specs is None:
        feed_specs = {t.name: (t.dtype, t.shape) for t in feeds}
    ctx = PassContext(fetches=[t.name for t in fetches], feeds=[t.name for t in feeds],
                      targets=[op.name for op in targets], config=config, graph_id=graph_id,
                      feed_specs=feed_specs, specialize=specialize)
    out, names = run_pipeline(graph, ctx)
    return (out, [out.get_tensor_by_name(names[t.name]) for t in feeds],
            [out.get_tensor_by_name(names[t.name]) for t in fetches],
            [out.get_operation_by_name(names[op.name]) for op in targets])


def compile_plan(graph: Graph, feeds: list, fetches: list, targets: list, config: PassConfig,
                 runtime_ctx, soft_placement: bool = True, graph_id: str = "tf_graph",
                 feed_specs: dict | None = None, specialize: bool = False) -> Plan:
    """`optimize`, then the optimized graph compiled into a Plan running on `runtime_ctx`."""
    optimized, feeds, fetches, targets = optimize(graph, feeds, fetches, targets, config,
                                                  graph_id, feed_specs, specialize)
    plan = Plan(optimized, feeds, fetches, targets, runtime_ctx,
                soft_placement=soft_placement, pass_config=config)
    plan.label = graph_id  # what profiles and traces call it
    return plan


def stateful_ops(graph) -> list:
    """A function graph's ops with side effects: they run on every call (its plan's targets)."""
    return [op for op in graph.get_operations() if op.op_def.is_stateful]

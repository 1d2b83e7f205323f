"""Kernels for the functional control flow ops (If/StatelessIf, Case/StatelessCase,
While/StatelessWhile).

Kernels of layer 2 cannot run graphs, so the runtime registers these: the factory compiles
each branch / cond / body function graph once into a sub-`Plan` through the one compile path
(ndflow/runtime/compile.py), with the pass configuration, runtime context and device rules of
the enclosing plan, and the kernel picks or loops over those plans:

    If:    (then_plan if pred else else_plan).run(inputs)
    Case:  branch_plans[index if 0 <= index < N else N - 1].run(inputs)
    While: while cond_plan.run(vars)[0]: vars = body_plan.run(vars)

Stateful ops inside a function (variable updates, random ops, prints) are targets of its
sub-plan, so they run in program order each time the branch or body runs, and only then.
An error inside a branch names the inner node (and the enclosing If/Case/While node after
it). Eager execution of such an op (a tf.function run op by op under a tape) uses the same
kernels through the eager executor.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.kernels import registry
from ndflow.ops.control_flow import CASE_OPS, IF_OPS, WHILE_OPS
from ndflow.passes.pass_config import resolve_pass_config
from ndflow.runtime.compile import compile_plan, stateful_ops
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import EAGER_CONTEXT


def compile_function(fg, runtime_ctx=None, pass_config=None) -> Plan:
    """A function graph (inputs -> outputs, stateful ops as targets) as a Plan, compiled with
    the pass configuration of the enclosing compile (none when the op runs eagerly: then the
    current tf.function configuration applies)."""
    config = pass_config if pass_config is not None else resolve_pass_config()
    return compile_plan(fg, list(fg.inputs), list(fg.outputs), stateful_ops(fg), config,
                        runtime_ctx if runtime_ctx is not None else EAGER_CONTEXT,
                        context.soft_device_placement(), graph_id=fg.name)


def _compile_attr(node, fg) -> Plan:
    return compile_function(fg, node.ctx, node.pass_config)


def _pack(outs: list, n: int):
    if n == 1:
        return outs[0]
    return None if n == 0 else tuple(outs)


def _truth(value) -> bool:
    """TF's If/While predicate: a bool scalar, or a non-zero number / non-empty tensor."""
    if value.dim() == 0:
        return bool(value.item())
    return value.numel() > 0


def _if_kernel(node):
    then_run = _compile_attr(node, node.attrs["then_branch"]).run
    else_run = _compile_attr(node, node.attrs["else_branch"]).run
    n = len(node.output_dtypes)

    def run(pred, *args):
        return _pack((then_run if _truth(pred) else else_run)(args), n)
    return run


def _case_kernel(node):
    runs = [_compile_attr(node, fg).run for fg in node.attrs["branches"]]
    n = len(node.output_dtypes)

    def run(index, *args):
        i = int(index.item())
        return _pack(runs[i if 0 <= i < len(runs) else -1](args), n)
    return run


def _while_kernel(node):
    cond_run = _compile_attr(node, node.attrs["cond"]).run
    body_run = _compile_attr(node, node.attrs["body"]).run
    n = len(node.output_dtypes)

    def run(*args):
        vals = list(args)
        while _truth(cond_run(vals)[0]):
            vals = body_run(vals)
        return _pack(vals, n)
    return run


for _d in IF_OPS:
    registry.kernel(_d)(_if_kernel)
for _d in CASE_OPS:
    registry.kernel(_d)(_case_kernel)
for _d in WHILE_OPS:
    registry.kernel(_d)(_while_kernel)

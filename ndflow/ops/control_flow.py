"""Functional control flow ops as TF2 emits them: If/StatelessIf, Case/StatelessCase and
While/StatelessWhile.

    If(cond, input: Tin) -> output: Tout      attrs then_branch, else_branch (func)
    Case(branch_index: int32, input: Tin) -> output: Tout   attrs branches (list(func));
                                              an index out of range runs the last branch
    While(input: T) -> output: T              attrs cond, body (func), parallel_iterations

A `func` attr holds a traced function graph (a `FuncGraph`, runtime layer) whose `inputs`
are the op's (data) inputs in order and whose `outputs` are the op's outputs (for `cond`:
one bool scalar). Function graphs are immutable once traced, so graph copies and passes
share them by reference. Output shapes come from the `output_shapes` attr (merged branch
shapes for If and Case, the loop-invariant shapes for While).

Kernels and gradients need to run and trace function graphs, so the runtime registers them
(ndflow/runtime/control_flow_kernels.py, control_flow_grad.py).
"""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops.op_def import op_def


def _output_shapes(ctx) -> list:
    shapes = ctx.attrs.get("output_shapes") or []
    n = len(ctx.attrs.get("Tout", ctx.attrs.get("T", [])))
    if len(shapes) != n:
        return [TensorShape(None)] * n
    return [TensorShape(s) if not isinstance(s, TensorShape) else s for s in shapes]


def _if(name: str, stateful: bool):
    return op_def(
        name, inputs=["cond: Tcond", "input: Tin"], outputs=["output: Tout"],
        attrs=["Tcond: type", "Tin: list(type)", "Tout: list(type)", "then_branch: func",
               "else_branch: func", "output_shapes: list(shape) = []"],
        shape=_output_shapes, stateful=stateful, functional=True,
        doc="output = cond ? then_branch(input) : else_branch(input)")


def _case(name: str, stateful: bool):
    return op_def(
        name, inputs=["branch_index: int32", "input: Tin"], outputs=["output: Tout"],
        attrs=["Tin: list(type)", "Tout: list(type)", "branches: list(func)",
               "output_shapes: list(shape) = []"],
        shape=_output_shapes, stateful=stateful, functional=True,
        doc="output = branches[branch_index if 0 <= branch_index < N else N - 1](input)")


def _while(name: str, stateful: bool):
    return op_def(
        name, inputs=["input: T"], outputs=["output: T"],
        attrs=["T: list(type)", "cond: func", "body: func", "output_shapes: list(shape) = []",
               "parallel_iterations: int = 10"],
        shape=_output_shapes, stateful=stateful, functional=True,
        doc="output = input; while (cond(output)) { output = body(output) }")


If = _if("If", True)
StatelessIf = _if("StatelessIf", False)
Case = _case("Case", True)
StatelessCase = _case("StatelessCase", False)
While = _while("While", True)
StatelessWhile = _while("StatelessWhile", False)

IF_OPS = (If, StatelessIf)
CASE_OPS = (Case, StatelessCase)
WHILE_OPS = (While, StatelessWhile)

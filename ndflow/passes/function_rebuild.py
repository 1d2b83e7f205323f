"""Rebuilding a function body (an `If` branch) with some ops replaced and parameters changed:
the shared step of the passes that rewrite what a branch computes (branch_momentum_decay.py,
speculative_momentum.py)."""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops.array_core import Placeholder
from ndflow.ops.function_library import FunctionGraph


def rebuild_function(fg, name: str, new_params: list, replace, drop=frozenset()):
    """A copy of function graph `fg` named `name`: its parameters but those at indices `drop`,
    then a new parameter per `new_params` [(dtype, shape, name)]; each op copied, or replaced
    by what `replace(new, op, mapping, controls, extra)` creates (None: copied as is;
    `mapping` maps `fg`'s tensors and ops to the copy's, `extra` the new parameters)."""
    new = FunctionGraph(name)
    for op in fg.get_operations():
        new.unique_name(op.name)
    mapping: dict = {}
    params = list(fg.inputs)
    for ph in params:
        op = ph.op
        mapping[ph] = new.create_op(op.op_def, [], dict(op.attrs), [(ph.dtype, ph.shape)],
                                    op.name, device=op.device).outputs[0]
    extra = [new.create_op(Placeholder, [], {"dtype": dt, "shape": TensorShape(shape)},
                           [(dt, shape)], new.unique_name(pname), device="").outputs[0]
             for dt, shape, pname in new_params]
    new.arg_inputs = [mapping[p] for k, p in enumerate(params) if k not in drop] + extra
    param_ids = {id(p) for p in params}
    for op in fg.get_operations():
        if op.outputs and id(op.outputs[0]) in param_ids:
            continue
        controls = [mapping[c] for c in op.control_inputs]
        copy = replace(new, op, mapping, controls, extra)
        if copy is None:
            copy = new.create_op(op.op_def, [mapping[t] for t in op.inputs], op.attrs,
                                 [(t.dtype, t.shape) for t in op.outputs], op.name, controls,
                                 op.device)
            copy.gradient_override = op.gradient_override
        copy._traceback = op._traceback
        mapping[op] = copy
        mapping.update(zip(op.outputs, copy.outputs))
    new.outputs = [mapping[t] for t in fg.outputs]
    new.structured_outputs = fg.structured_outputs
    new.variables = list(fg.variables)
    return new

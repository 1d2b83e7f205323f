"""Traced functions as the FunctionDefs of a SavedModel's function library.

A `ConcreteFunction`'s graph becomes a FunctionDef whose inputs are its tensor arguments
followed by one `resource` input per captured variable (TensorFlow binds those to the saved
variables through `bound_inputs` on load); other captured eager tensors are written into
the body as constants. Stateful ops are chained by control edges in creation order and
listed as control outputs, so TensorFlow runs them, in order, even when no output needs
them. Signatures get a wrapper function that calls the traced one through a
`StatefulPartitionedCall` and returns its outputs flat in the dict's sorted-key order, as
TensorFlow's signature wrappers do.
"""

from __future__ import annotations

import re

from tensorboard.compat.proto import function_pb2, node_def_pb2

from ndflow.core import dtypes
from ndflow.core.graph_def import (
    _node_def,
    _output_arg_names,
    attr_to_proto,
    function_def,
    ndarray_to_tensor_proto,
    shape_to_proto,
)


def arg_name(name: str, taken: set) -> str:
    """A FunctionDef arg name as TensorFlow writes them (lower case, [a-z0-9_]), unique."""
    base = re.sub(r"[^a-z0-9_]", "_", name.lower()) or "arg"
    if not base[0].isalpha():
        base = "arg_" + base
    return unique_name(base, taken)


def unique_name(base: str, taken: set) -> str:
    """`base`, else the first of `base_1`, `base_2`, ... not in `taken`; added to it."""
    out, i = base, 0
    while out in taken:
        i += 1
        out = f"{base}_{i}"
    taken.add(out)
    return out


def _set_shape_attr(fd, i: int, shape) -> None:
    fd.arg_attr[i].attr["_output_shapes"].list.shape.add().CopyFrom(shape_to_proto(shape))


def nested_functions(graph, found: dict) -> dict:
    """Function graphs referenced by func attrs (If/While branches), recursively."""
    for op in graph.get_operations():
        for v in op.attrs.values():
            for f in (v if isinstance(v, list | tuple) else [v]):
                if hasattr(f, "get_operations") and hasattr(f, "outputs") \
                        and f.name not in found:
                    found[f.name] = f
                    nested_functions(f, found)
    return found


def concrete_function_def(cf, name: str, owner_of) -> tuple:
    """(FunctionDef, captured objects in input order, nested FunctionDefs) of `cf`.

    `owner_of(tensor)` returns the saved object a captured tensor stands for: the variable
    owning a resource handle (raising when it belongs to no saved variable), an Asset for
    its path, or None for a plain value (written as a constant).
    """
    fg = cf.graph
    fd = function_pb2.FunctionDef()
    fd.signature.name = name
    taken: set = set()
    ref: dict = {}
    for ph in fg.arg_inputs:
        arg = fd.signature.input_arg.add(name=arg_name(ph.op.name, taken), type=ph.dtype.enum)
        _set_shape_attr(fd, len(fd.signature.input_arg) - 1, ph.shape)
        fd.arg_attr[len(fd.signature.input_arg) - 1].attr["_user_specified_name"].s = \
            ph.op.name.encode()
        ref[ph] = arg.name
    bound = []
    consts = []
    for ext, ph in fg.captures:
        owner = owner_of(ext)
        if ext.dtype is dtypes.resource:
            arg = fd.signature.input_arg.add(name=arg_name(ph.op.name + "_resource", taken),
                                             type=dtypes.resource.enum)
            if hasattr(owner, "dtype"):   # a variable (a table's handle carries none)
                arg.handle_data.add(dtype=owner.dtype.enum).shape.CopyFrom(
                    shape_to_proto(owner.shape))
            ref[ph] = arg.name
            bound.append(owner)
        elif owner is not None:  # an asset's path, bound to the asset at load
            arg = fd.signature.input_arg.add(name=arg_name(ph.op.name, taken),
                                             type=ext.dtype.enum)
            ref[ph] = arg.name
            bound.append(owner)
        else:  # a captured eager value: baked in as a constant
            node = node_def_pb2.NodeDef(name=ph.op.name, op="Const")
            node.attr["dtype"].type = ext.dtype.enum
            node.attr["value"].tensor.CopyFrom(ndarray_to_tensor_proto(ext.numpy(), ext.dtype))
            consts.append(node)
            ref[ph] = f"{ph.op.name}:output:0"
    fd.node_def.extend(consts)
    previous_stateful = None
    for op in fg.get_operations():
        if op.outputs and op.outputs[0] in ref:
            continue
        for t, (out_arg, i) in zip(op.outputs, _output_arg_names(op)):
            ref[t] = f"{op.name}:{out_arg}:{i}"
        nd = _node_def(op, False, ref.__getitem__)
        if getattr(op.op_def, "is_stateful", False):
            if previous_stateful is not None:
                nd.input.append("^" + previous_stateful)
            previous_stateful = op.name
            fd.signature.control_output.append(op.name)
            fd.control_ret[op.name] = op.name
        fd.node_def.append(nd)
    if fd.signature.control_output:
        fd.signature.is_stateful = True
    for i, t in enumerate(fg.outputs):
        arg = fd.signature.output_arg.add(name=f"output_{i}", type=t.dtype.enum)
        fd.ret[arg.name] = ref[t]
    nested = [function_def(g) for g in nested_functions(fg, {}).values()]
    return fd, bound, nested


def signature_wrapper_def(name: str, callee, arg_order: list, output_order: list) -> tuple:
    """A FunctionDef named `name` calling FunctionDef `callee` with its inputs permuted:
    `arg_order` lists, per wrapper tensor input, the callee input index; the callee's
    resource inputs follow in their order. `output_order` lists callee output indices."""
    fd = function_pb2.FunctionDef()
    fd.signature.name = name
    cin = callee.signature.input_arg
    n_args = len(arg_order)
    order = list(arg_order) + list(range(n_args, len(cin)))
    names = []
    for k, src in enumerate(order):
        new = fd.signature.input_arg.add()
        new.CopyFrom(cin[src])
        names.append(new.name)
        if src in callee.arg_attr:
            fd.arg_attr[k].CopyFrom(callee.arg_attr[src])
    call = fd.node_def.add(name="StatefulPartitionedCall", op="StatefulPartitionedCall")
    by_callee_index = {src: names[k] for k, src in enumerate(order)}
    call.input.extend(by_callee_index[i] for i in range(len(cin)))
    call.attr["Tin"].CopyFrom(attr_to_proto([dtypes.as_dtype(a.type) for a in cin],
                                            "list(type)"))
    cout = callee.signature.output_arg
    call.attr["Tout"].CopyFrom(attr_to_proto([dtypes.as_dtype(a.type) for a in cout],
                                             "list(type)"))
    call.attr["f"].func.name = callee.signature.name
    for k, src in enumerate(output_order):
        arg = fd.signature.output_arg.add(name=f"output_{k}", type=cout[src].type)
        fd.ret[arg.name] = f"StatefulPartitionedCall:output:{src}"
    fd.signature.is_stateful = True
    fd.signature.control_output.append("StatefulPartitionedCall")
    fd.control_ret["StatefulPartitionedCall"] = "StatefulPartitionedCall"
    return fd

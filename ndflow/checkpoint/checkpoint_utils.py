"""`tf.compat.v1.train.init_from_checkpoint`: variables made by `get_variable` start from a
checkpoint's tensors (TF1 fine-tuning: BERT's `init_checkpoint`), as TensorFlow's
checkpoint_utils.py.

`assignment_map` maps checkpoint names to variables: a tensor name to a variable (object,
list of parts, or its name in the variable store), or a scope to a scope ("bert/": "bert/",
"/" the root) for every store variable below it. A partitioned variable is initialized part
by part from slices of the saved tensor, whatever the saved partitioning. In a graph the
variables' initializers are replaced by RestoreV2 ops (so `global_variables_initializer`
loads the checkpoint); eagerly the values are assigned at once.
"""

from __future__ import annotations

from ndflow.checkpoint import io_ops, tensor_bundle
from ndflow.checkpoint.checkpoint_reader import checkpoint_prefix
from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops import array_core, state, variable_scope
from ndflow.ops.apply import apply_op
from ndflow.ops.variables import Variable


def _is_variable(x) -> bool:
    return isinstance(x, Variable)


def _partitioned(name: str, store_vars: dict):
    """The parts `name/part_0`, `name/part_1`, ... in the store, or None."""
    if f"{name}/part_0" not in store_vars:
        return None
    parts, i = [], 0
    while f"{name}/part_{i}" in store_vars:
        parts.append(store_vars[f"{name}/part_{i}"])
        i += 1
    return parts


def _set_initializer(var, prefix: str, reader, tensor_name: str, info) -> None:
    """`var` starts from `tensor_name` (its slice `info` for a part of a partitioned
    variable): a RestoreV2 initializer in a graph, an assignment eagerly."""
    extents = info.extents if info is not None else None
    saved = tensor_bundle.dtype_name(reader.dtype_enum(tensor_name))
    if saved != var.dtype.name:
        raise ValueError(f"Variable {var.name} is {var.dtype.name}, but tensor "
                         f"{tensor_name} of checkpoint {prefix} is {saved}")
    if context.executing_eagerly():
        var.assign(reader.read(tensor_name) if extents is None else
                   reader.read_slice(tensor_name, extents))
        return
    graph = var.handle.graph
    with graph.as_default(), graph.control_dependencies(None), \
            graph.name_scope(var.handle.op.name + "/init_from_checkpoint"):
        spec = info.spec if info is not None else ""
        restored = apply_op(io_ops.RestoreV2, [
            array_core.constant(prefix, dtype=dtypes.string),
            array_core.constant([tensor_name], dtype=dtypes.string),
            array_core.constant([spec], dtype=dtypes.string)],
            {"dtypes": [var.dtype]}).outputs[0]
        var._initializer_op = state.assign_variable_op(var.handle, restored)
        var._initial_value = restored


def _set_variable_or_list(var_or_list, prefix: str, reader, tensor_name: str) -> None:
    if isinstance(var_or_list, (list, tuple)):
        full_name = None
        for part in var_or_list:
            info = part._get_save_slice_info()
            if full_name is None:
                full_name = info.full_name
            elif full_name != info.full_name:
                raise ValueError(f"Slices must all be from the same tensor: {full_name} != "
                                 f"{info.full_name}")
            _set_initializer(part, prefix, reader, tensor_name, info)
    else:
        _set_initializer(var_or_list, prefix, reader, tensor_name, None)


@tf_export(v1=["train.init_from_checkpoint"])
def init_from_checkpoint(ckpt_dir_or_file, assignment_map) -> None:
    """Initializes the mapped variables from the checkpoint (see the module doc)."""
    prefix = checkpoint_prefix(ckpt_dir_or_file)
    reader = tensor_bundle.BundleReader(prefix)
    shapes = {k: list(reader.dtype_and_shape(k)[1]) for k in reader.keys()}
    items = assignment_map.items() if isinstance(assignment_map, dict) else assignment_map
    store_vars = variable_scope._store().vars
    for tensor_name, current in sorted(items, key=lambda pair: pair[0]):
        if hasattr(current, "_get_variable_list"):  # a PartitionedVariable
            current = current._get_variable_list()
        var = None
        if _is_variable(current) or (isinstance(current, list) and current and
                                     all(_is_variable(v) for v in current)):
            var = current
        else:
            var = store_vars.get(current)
            if var is None:
                var = _partitioned(current, store_vars)
        if var is not None:
            if tensor_name not in shapes:
                raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_dir_or_file} "
                                 f"checkpoint {shapes}")
            if _is_variable(var) and not var.shape.is_compatible_with(shapes[tensor_name]):
                raise ValueError(f"Shape of variable {var.name} ({var.shape}) doesn't match "
                                 f"with shape of tensor {tensor_name} "
                                 f"({shapes[tensor_name]}) from checkpoint reader.")
            _set_variable_or_list(var, prefix, reader, tensor_name)
            continue
        scopes = current[:current.rindex("/")] if "/" in current else ""
        if not tensor_name.endswith("/"):
            raise ValueError(f"Assignment map with scope only name {scopes} should map to "
                             f"scope only {tensor_name}. Should be 'scope/': 'other_scope/'.")
        names = set()
        for name in store_vars:
            if not scopes or name.startswith(scopes + "/"):
                names.add(name[:name.index("/part_")] if "/part_" in name else name)
        for name in sorted(names):
            full = name[len(scopes):]
            if current != "/":
                full = full[1:]
            if tensor_name != "/":
                full = tensor_name + full
            full = full[:-1] if full.endswith("/") else full
            if full not in shapes:
                raise ValueError(f"Tensor {full} ({name[len(scopes) + 1:]} in {tensor_name}) "
                                 f"is not found in {ckpt_dir_or_file} checkpoint")
            var = store_vars.get(name)
            if var is None:
                var = _partitioned(name, store_vars)
            _set_variable_or_list(var, prefix, reader, full)

"""Optimizer state variables: slots (one per model variable) and non-slot variables.

TensorFlow names a slot `<variable op name>/<optimizer name>` (`dense/kernel/Momentum`,
then `dense/kernel/Adam_1` for Adam's second slot): the name is absolute, whatever name
scope the optimizer runs in, and uniquified like any op name in graph mode. Slots are
created in `init_scope` (outside functions being traced), non-trainable, zero- or
value-initialized with the primary variable's shape and dtype.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.ops import variables
from ndflow.ops.array_core import constant
from ndflow.ops.partitioned_variables import SaveSliceInfo


def variable_op_name(var) -> str:
    """`var.op.name` in TF: the variable's name without the `:0` output suffix."""
    name = getattr(var, "name", None) or "Variable"
    return name[:-2] if name.endswith(":0") else name


def filled(shape, dtype, value: float = 0.0):
    """A constant of `shape` filled with `value` (a zeros/ones initial value)."""
    dtype = dtypes.as_dtype(dtype)
    np_dtype = dtype.np_dtype if dtype.np_dtype is not None else np.float32
    return constant(np.full(tuple(shape), value, dtype=np_dtype), dtype=dtype)


def make_variable(initial_value, name: str, trainable: bool = False, dtype=None,
                  collections=None):
    """A resource variable; `initial_value` may be a callable (built in the variable's
    `Initializer` scope). Graph mode: in `collections` (default GLOBAL_VARIABLES)."""
    return variables.Variable(initial_value, trainable=trainable, name=name, dtype=dtype,
                              collections=collections)


def _sliced_like_primary(slot, primary):
    """A part of a partitioned variable has its slots saved as slices too, of a tensor
    named `<full name>/<slot name>` ("emb/Adam" for "emb/part_1/Adam"), as TensorFlow's
    slot_creator does."""
    info = primary._get_save_slice_info() if isinstance(primary, variables.Variable) \
        else None
    rank = slot.shape.rank
    if info is not None and (rank is None or rank > 0):
        real_name = variable_op_name(slot)[len(variable_op_name(primary)) + 1:]
        slot._set_save_slice_info(SaveSliceInfo(
            f"{info.full_name}/{real_name}", info.full_shape[:rank], info.var_offset[:rank],
            info.var_shape[:rank]))
    return slot


def create_slot(primary, value, name: str, eager_names: dict | None = None):
    """A slot for `primary` named `<primary>/<name>`, initialized from `value()`.

    `value` is a callable building the initial value (so it is built in the slot's own
    context). In eager mode names are not uniquified by a graph: `eager_names` counts them
    per optimizer so the second slot of a variable is `<primary>/<name>_1`, as in TF.
    """
    full = f"{variable_op_name(primary)}/{name}"
    if context.executing_eagerly():
        if eager_names is not None:
            n = eager_names.get(full, 0)
            eager_names[full] = n + 1
            if n:
                full = f"{full}_{n}"
        return _sliced_like_primary(make_variable(value, full, trainable=False,
                                                  dtype=primary.dtype), primary)
    graph = context.get_default_graph()
    with graph.name_scope(None):  # absolute name, as TF's variable_scope(None, name)
        return _sliced_like_primary(make_variable(value, full, trainable=False,
                                                  dtype=primary.dtype), primary)


def create_zeros_slot(primary, name: str, eager_names: dict | None = None):
    return create_slot(primary, lambda: filled(primary.shape, primary.dtype, 0.0), name,
                       eager_names)

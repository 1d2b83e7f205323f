"""Sliced assignment to variables: `v[0, 1:3].assign(x)` (TF's ResourceStridedSliceAssign).

As TF's `_slice_helper(var.value(), spec, var)`, `Variable.__getitem__` returns the slice's
value with an `assign(value, name=None)` method that writes `value` (broadcast to the
slice's shape) into the same strided slice of the variable, reusing the slice's packed
begin/end/strides. Tensors have fixed slots, so that value is an instance of a slot-less
subclass and its assigner is kept while it lives.
"""

from __future__ import annotations

import weakref

from ndflow.core.graph import SymbolicTensor
from ndflow.core.tensor import EagerTensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_mask import getitem
from ndflow.ops.array_slicing import (
    StridedSlice,
    is_boolean_index,
    slice_args,
    slice_scope,
)
from ndflow.ops.op_def import op_def


def _shape(ctx):
    for k in (1, 2, 3):
        if ctx.shapes[k].rank not in (None, 1):
            raise ValueError(f"Shape must be rank 1 but is rank {ctx.shapes[k].rank}")
    return []  # as TF: no static check of the value against the slice (the kernel checks)


ResourceStridedSliceAssign = op_def(
    "ResourceStridedSliceAssign",
    inputs=["ref: resource", "begin: Index", "end: Index", "strides: Index", "value: T"],
    attrs=["T: type", "Index: {int32, int64}", "begin_mask: int = 0", "end_mask: int = 0",
           "ellipsis_mask: int = 0", "new_axis_mask: int = 0", "shrink_axis_mask: int = 0"],
    shape=_shape, stateful=True, gradient_undefined=True,
    doc="Assigns `value` to the strided slice begin:end:strides of the variable `ref`.")

_ASSIGNERS: dict = {}  # id(slice) -> assigner, dropped with the slice (tensors' == is elementwise)


def _assign(self, val, name=None):
    return _ASSIGNERS[id(self)](val, name)


class SlicedEagerTensor(EagerTensor):
    """An eager slice of a variable: its value, plus `assign` into that slice."""

    __slots__ = ()
    assign = _assign


class SlicedSymbolicTensor(SymbolicTensor):
    """A graph slice of a variable: its value, plus `assign` into that slice."""

    __slots__ = ()
    assign = _assign


def resource_strided_slice_assign(ref, begin, end, strides, value, begin_mask: int = 0,
                                  end_mask: int = 0, ellipsis_mask: int = 0,
                                  new_axis_mask: int = 0, shrink_axis_mask: int = 0,
                                  name: str | None = None):
    return apply_op(ResourceStridedSliceAssign, [ref, begin, end, strides, value],
                    {"begin_mask": begin_mask, "end_mask": end_mask,
                     "ellipsis_mask": ellipsis_mask, "new_axis_mask": new_axis_mask,
                     "shrink_axis_mask": shrink_axis_mask}, name=name)


def sliced_variable(var, slice_spec):
    """`var[slice_spec]`: the slice's value, with `.assign(value, name=None)`.

    `var` provides `value()`, `dtype`, `_handle`, `_home()` and `_after_update(op, read)`.
    """
    value = var.value()
    if is_boolean_index(slice_spec):   # a mask: a new tensor, nothing to assign through (TF)
        return getitem(value, slice_spec)
    with slice_scope() as scope:
        packed, masks = slice_args(slice_spec)
    out = apply_op(StridedSlice, [value] + packed, masks, name="strided_slice").outputs[0]
    del value
    if isinstance(out, EagerTensor):  # its own copy of the rows: no view keeps the variable's
        out._value = out.value.clone()  # tensor shared (in-place assign); the same object, so
        out.__class__ = SlicedEagerTensor  # a GradientTape that recorded the slice still has it
    else:
        out.__class__ = SlicedSymbolicTensor

    def assign(val, name=None):
        if name is None and scope:  # TF names it after the slice: "strided_slice/_assign"
            name = f"{scope}_assign"
        with var._home():
            val = convert_to_tensor(val, dtype=var.dtype)
            op = apply_op(ResourceStridedSliceAssign, [var._handle] + packed + [val], masks,
                          name=name)
            return var._after_update(op, True)

    _ASSIGNERS[id(out)] = assign
    weakref.finalize(out, _ASSIGNERS.pop, id(out), None)
    return out

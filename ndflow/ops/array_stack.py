"""Pack and Unpack: `tf.stack`, `tf.unstack`, and the autopacking of Python lists holding
tensors into one tensor (`tf.constant([t, 1.0])`), with TF's shape functions and wording."""

from __future__ import annotations

import operator

import numpy as np

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import (
    apply_op,
    constant_value,
    convert_to_tensor,
    register_tensor_conversion_function,
)
from ndflow.ops.array_core import partial_value
from ndflow.ops.op_def import op_def


def _pack_shape(ctx):
    axis = ctx.attrs["axis"]
    if context.executing_eagerly():
        return [TensorShape(None)]
    merged = TensorShape(None)
    for s in ctx.shapes:
        try:
            merged = merged.merge_with(s)
        except ValueError:
            raise ValueError(merge_message(merged, s) + "\n\tFrom merging shape 0 with other "
                             "shapes.") from None
    if merged.rank is None:
        return [TensorShape(None)]
    dims = merged.as_list()
    r = len(dims) + 1
    if not -r <= axis < r:
        raise ValueError(f"Invalid axis: {axis}; must be in [{-r},{r})")
    dims.insert(axis + r if axis < 0 else axis, len(ctx.shapes))
    return [TensorShape(dims)]


def merge_message(a: TensorShape, b: TensorShape) -> str:
    if a.rank != b.rank:
        return f"Shapes must be equal rank, but are {a.rank} and {b.rank}"
    i = next(i for i, (x, y) in enumerate(zip(a, b)) if x and y and x != y)
    return (f"Dimension {i} in both shapes must be equal, but are {a[i]} and {b[i]}. "
            f"Shapes are {fmt(a)} and {fmt(b)}.")


Pack = op_def("Pack", inputs=["values: N * T"], outputs=["output: T"],
              attrs=["N: int >= 1", "T: type", "axis: int = 0"], shape=_pack_shape)


def _pack_value(t):
    vals = [constant_value(x) for x in t.op.inputs]
    if any(v is None for v in vals):
        return None
    return np.stack(vals, axis=t.op.attrs["axis"])


def _pack_partial(t):
    if t.op.attrs["axis"] != 0 or any(x.shape.rank != 0 for x in t.op.inputs):
        return [None] * len(t.op.inputs)
    return [partial_value(x) for x in t.op.inputs]


Pack.constant_value = _pack_value
Pack.partial_value = _pack_partial


@tf_export("stack")
def stack(values, axis: int = 0, name: str = "stack") -> Tensor:
    """`tf.stack`: packs tensors of equal shape along a new `axis`."""
    values = list(values)
    if axis == 0 and not any(isinstance(v, Tensor) for v in _flat(values)):
        return convert_to_tensor(values, name=name)
    first = convert_to_tensor(values[0])
    if first.shape.rank is not None:
        r = first.shape.rank + 1
        if not -r <= axis < r:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-r}, {r})")
    return apply_op(Pack, [values], {"axis": axis}, name=name).outputs[0]


def _autopacking_conversion(value, dtype=None, name=None, as_ref=False):
    """Lists and tuples holding tensors convert to one Pack (TF's autopacking)."""
    first = next((v for v in _flat(value) if isinstance(v, Tensor)), None)
    if first is None:
        return NotImplemented
    dtype = dtype or first.dtype   # TF: Python numbers beside a tensor take its dtype
    parts = [convert_to_tensor(v, dtype) for v in value]
    return apply_op(Pack, [parts], {"axis": 0}, name=name or "packed").outputs[0]


register_tensor_conversion_function((list, tuple), _autopacking_conversion, 99)


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def _unpack_shape(ctx):
    s, num, axis = ctx.shapes[0], ctx.attrs["num"], ctx.attrs["axis"]
    if s.rank is None or context.executing_eagerly():
        return [TensorShape(None)] * num
    r = s.rank
    if not -r <= axis < r:
        raise ValueError(f"Invalid axis: {axis}; must be in [{-r},{r})")
    axis += r if axis < 0 else 0
    dims = s.as_list()
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Dimension must be {num} but is {dims[axis]}")
    del dims[axis]
    return [TensorShape(dims)] * num


Unpack = op_def("Unpack", inputs=["value: T"], outputs=["output: num * T"],
                attrs=["num: int >= 0", "T: type", "axis: int = 0"], shape=_unpack_shape)


@tf_export("unstack")
def unstack(value, num: int | None = None, axis: int = 0, name: str = "unstack") -> list:
    """`tf.unstack`: splits `value` along `axis` into `num` tensors."""
    value = convert_to_tensor(value)
    axis = operator.index(axis)  # TF's int attr: True is 1, a float is a TypeError
    if num is None:
        s = value.shape
        if s.rank is not None:
            if not -s.rank <= axis < s.rank:
                raise ValueError(f"Argument `axis` = {axis} not in range [{-s.rank}, "
                                 f"{s.rank})")
            num = s[axis]
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {s}")
    return list(apply_op(Unpack, [value], {"num": num, "axis": axis}, name=name).outputs)

"""Array ops: constants, placeholders, identity, shape and layout manipulation."""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.op_def import NOT_DIFFERENTIABLE, op_def

# -- Const -------------------------------------------------------------------------------------


def _const_shape(ctx):
    return [TensorShape(np.shape(ctx.attrs["value"]))]


Const = op_def("Const", outputs=["output: dtype"], attrs=["value: tensor", "dtype: type"],
               shape=_const_shape, grad=NOT_DIFFERENTIABLE)
Const.extra["constant_value"] = lambda t: t.op.attrs["value"]


def constant(value, dtype=None, shape=None, name="Const"):
    """`tf.constant`: a tensor holding `value` (broadcast to `shape` if given)."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if shape is not None:
        arr = np.asarray(value if not hasattr(value, "numpy") else value.numpy())
        shape = tuple(as_shape(shape).as_list())
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shape)
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor "
                            f"{value!r} (converted from {value!r}) has {arr.size} elements, "
                            f"but got `shape` {shape} with {int(np.prod(shape))} elements).")
        value = np.array(arr)
    if context.executing_eagerly() and hasattr(value, "numpy") and dtype is not None \
            and value.dtype is not dtype:
        value = value.numpy()
    return convert_to_tensor(value, dtype=dtype, name=name)


# -- Placeholders --------------------------------------------------------------------------------

Placeholder = op_def("Placeholder", outputs=["output: dtype"],
                     attrs=["dtype: type", "shape: shape = unknown"],
                     shape=lambda ctx: [ctx.attrs["shape"]], grad=NOT_DIFFERENTIABLE)

PlaceholderWithDefault = op_def(
    "PlaceholderWithDefault", inputs=["input: dtype"], outputs=["output: dtype"],
    attrs=["dtype: type", "shape: shape"],
    shape=lambda ctx: [ctx.attrs["shape"]], grad=lambda op, g: [g])


def placeholder(dtype, shape=None, name=None):
    """`tf.compat.v1.placeholder`: a graph input that must be fed."""
    if context.executing_eagerly():
        raise RuntimeError("tf.placeholder() is not compatible with eager execution.")
    return apply_op(Placeholder, [], {"dtype": dtypes.as_dtype(dtype),
                                      "shape": TensorShape(shape)}, name=name).outputs[0]


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's name
    t = convert_to_tensor(input)
    return apply_op(PlaceholderWithDefault, [t], {"shape": TensorShape(shape)},
                    name=name).outputs[0]


# -- Identity and Pack ----------------------------------------------------------------------------

Identity = op_def("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
                  shape=lambda ctx: [ctx.shapes[0]], grad=lambda op, g: [g])


def identity(input, name=None):  # noqa: A002 - TF's name
    return apply_op(Identity, [input], name=name).outputs[0]


def _pack_shape(ctx):
    axis = ctx.attrs["axis"]
    merged = TensorShape(None)
    for s in ctx.shapes:
        try:
            merged = merged.merge_with(s)
        except ValueError:
            raise ValueError(f"Shapes must be equal rank, but are {ctx.shapes[0].rank} and "
                             f"{s.rank}; From merging shape 0 with other shapes.") from None
    if merged.rank is None:
        return [TensorShape(None)]
    dims = merged.as_list()
    rank = len(dims) + 1
    if not -rank <= axis < rank:
        raise ValueError(f"axis = {axis} not in [{-rank}, {rank})")
    if axis < 0:
        axis += rank
    dims.insert(axis, len(ctx.shapes))
    return [TensorShape(dims)]


Pack = op_def("Pack", inputs=["values: N * T"], outputs=["output: T"],
              attrs=["N: int >= 1", "T: type", "axis: int = 0"], shape=_pack_shape)


def _pack_value(t):
    vals = [constant_value(x) for x in t.op.inputs]
    if any(v is None for v in vals):
        return None
    return np.stack(vals, axis=t.op.attrs["axis"])


Pack.extra["constant_value"] = _pack_value


def stack(values, axis=0, name="stack"):
    return apply_op(Pack, [list(values)], {"axis": axis}, name=name).outputs[0]


# -- ZerosLike / OnesLike --------------------------------------------------------------------------

ZerosLike = op_def("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"],
                   shape=lambda ctx: [ctx.shapes[0]], grad=NOT_DIFFERENTIABLE)
OnesLike = op_def("OnesLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"],
                  shape=lambda ctx: [ctx.shapes[0]], grad=NOT_DIFFERENTIABLE)


def zeros_like(input, dtype=None, name=None):  # noqa: A002 - TF's name
    return apply_op(ZerosLike, [input], name=name).outputs[0]


def ones_like(input, dtype=None, name=None):  # noqa: A002 - TF's name
    return apply_op(OnesLike, [input], name=name).outputs[0]


# -- Reshape ---------------------------------------------------------------------------------------

Reshape = op_def("Reshape", inputs=["tensor: T", "shape: Tshape"], outputs=["output: T"],
                 attrs=["T: type", "Tshape: {int32, int64} = DT_INT32"])


def reshape(tensor, shape, name=None):
    return apply_op(Reshape, [tensor, convert_to_tensor(shape, dtype_hint=dtypes.int32)],
                    name=name).outputs[0]

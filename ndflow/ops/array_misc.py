"""Small array ops people reach for early: BroadcastArgs (`tf.broadcast_dynamic_shape`,
with `tf.broadcast_static_shape` on static shapes), UnravelIndex, ParallelConcat
(`tf.parallel_stack`) and GuaranteeConst."""

from __future__ import annotations

import numpy as np

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape, as_shape, broadcast_shapes
from ndflow.core.tensor import Tensor
from ndflow.ops import array_misc_docs
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.array_core import expand_dims
from ndflow.ops.op_def import op_def

# -- BroadcastArgs -------------------------------------------------------------------------------


def _vector_len(s: TensorShape):
    if s.rank is not None and s.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {s.rank}")
    return None if s.rank is None else s[0]


def _broadcast_args_shape(ctx):
    a, b = _vector_len(ctx.shapes[0]), _vector_len(ctx.shapes[1])
    return [TensorShape([None if a is None or b is None else max(a, b)])]


def _broadcast_args_value(t):
    from_ops = [_const(i) for i in t.op.inputs]
    if any(v is None for v in from_ops):
        return None
    try:
        return np.array(np.broadcast_shapes(tuple(from_ops[0]), tuple(from_ops[1])),
                        t.dtype.np_dtype)
    except ValueError:
        return None


def _const(t):
    v = constant_value(t)
    return None if v is None else [int(d) for d in np.asarray(v).reshape(-1)]


BroadcastArgs = op_def("BroadcastArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T"],
                       attrs=["T: {int32, int64} = DT_INT32"], shape=_broadcast_args_shape,
                       gradient_undefined=True)
BroadcastArgs.constant_value = _broadcast_args_value


@tf_export("broadcast_dynamic_shape")
def broadcast_dynamic_shape(shape_x, shape_y) -> Tensor:
    """`tf.broadcast_dynamic_shape`: the broadcast of two 1-D shape tensors (BroadcastArgs)."""
    return apply_op(BroadcastArgs, [shape_x, shape_y]).outputs[0]


@tf_export("broadcast_static_shape")
def broadcast_static_shape(shape_x, shape_y) -> TensorShape:
    """`tf.broadcast_static_shape`: the broadcast of two TensorShapes (unknown dims allowed)."""
    x, y = as_shape(shape_x), as_shape(shape_y)
    try:
        return broadcast_shapes(x, y)
    except ValueError:  # TF's message for this API
        raise ValueError(
            "Incompatible shapes for broadcasting. Two shapes are compatible if for each "
            "dimension pair they are either equal or one of them is 1. Received: "
            f"{_tuple(x)} and {_tuple(y)}.") from None


def _tuple(s: TensorShape) -> str:
    return str(tuple(s.as_list()))


# -- UnravelIndex --------------------------------------------------------------------------------


def _unravel_shape(ctx):
    idx, dims = ctx.shapes
    if idx.rank is not None and idx.rank > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {idx.rank}")
    n_dims = _vector_len(dims)
    if idx.rank == 0:
        return [TensorShape([n_dims])]
    count = idx.num_elements() if idx.rank is not None else None
    return [TensorShape([n_dims, count])]


UnravelIndex = op_def("UnravelIndex", inputs=["indices: Tidx", "dims: Tidx"],
                      outputs=["output: Tidx"], attrs=["Tidx: {int32, int64} = DT_INT32"],
                      shape=_unravel_shape, gradient_undefined=True)


@tf_export("unravel_index")
def unravel_index(indices, dims, name: str | None = None) -> Tensor:
    """`tf.unravel_index`: flat (row-major) indices into `dims` -> a [len(dims), ...]
    tensor of coordinates."""
    indices = convert_to_tensor(indices, name="indices")
    dims = convert_to_tensor(dims, dtype=indices.dtype, name="dims")
    return apply_op(UnravelIndex, [indices, dims], name=name).outputs[0]


# -- ParallelConcat / GuaranteeConst ---------------------------------------------------------------


def _parallel_concat_shape(ctx):
    shape = ctx.attrs["shape"]
    n = len(ctx.shapes)
    for s in ctx.shapes:
        if s.rank is not None and shape.rank is not None:
            if s.rank != shape.rank:
                raise ValueError(f"Shape must be rank {shape.rank} but is rank {s.rank}")
            if s[0] is not None and s[0] != 1:
                raise ValueError(f"Dimension 0 in both shapes must be equal, but are {s[0]} "
                                 f"and 1.")
    if shape.rank is not None and shape[0] is not None and shape[0] != n:
        raise ValueError(f"Dimension 0 in both shapes must be equal, but are {shape[0]} and "
                         f"{n}.")
    return [shape]


ParallelConcat = op_def("ParallelConcat", inputs=["values: N * T"], outputs=["output: T"],
                        attrs=["N: int >= 1", "T: type", "shape: shape"],
                        shape=_parallel_concat_shape, gradient_undefined=True)
GuaranteeConst = op_def("GuaranteeConst", inputs=["input: T"], outputs=["output: T"],
                        attrs=["T: type"], shape=lambda ctx: [ctx.shapes[0]], stateful=True,
                        gradient_undefined=True)


@tf_export("parallel_stack")
def parallel_stack(values, name: str = "parallel_stack") -> Tensor:
    """`tf.parallel_stack`: stacks same-shaped tensors along a new first axis
    (ParallelConcat of ExpandDims'd values); graph mode only, as TF."""
    if context.executing_eagerly():
        raise RuntimeError("tf.parallel_stack() is not compatible with eager execution.")
    with name_scope(name):
        first = convert_to_tensor(values[0])
        out_shape = TensorShape([len(values)]).concatenate(first.shape)
        parts = [expand_dims(convert_to_tensor(v, dtype=first.dtype), 0) for v in values]
        return apply_op(ParallelConcat, [parts], {"shape": out_shape}).outputs[0]


@tf_export("guarantee_const")
def guarantee_const(input, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.guarantee_const` (deprecated in TF): the input, marked as constant for the
    runtime; here an identity kernel."""
    return apply_op(GuaranteeConst, [input], name=name).outputs[0]


attach(globals(), array_misc_docs.DOCS)

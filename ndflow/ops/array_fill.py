"""Array ops that make or grow tensors: Fill (`tf.fill`, `tf.zeros`, `tf.ones`), ZerosLike and
OnesLike, Tile, BroadcastTo (with BroadcastGradientArgs), and the Pad family."""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import array_fill_docs, composite_dispatch
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.array_core import (
    INDEX_ATTR,
    constant,
    int_input,
    partial_value,
    reshape,
    shape,
    shape_operand,
    stack,
    static_value,
)
from ndflow.ops.op_def import POINTWISE, op_def


def _rank_check(s: TensorShape, want: int):
    if s.rank is not None and s.rank != want:
        raise ValueError(f"Shape must be rank {want} but is rank {s.rank}")


# -- Fill, zeros, ones ---------------------------------------------------------------------------

def _fill_shape(ctx):
    _rank_check(ctx.shapes[0], 1)
    _rank_check(ctx.shapes[1], 0)
    if context.executing_eagerly():
        return [TensorShape(None)]
    shape = shape_operand(ctx, 0)
    v = ctx.value(0)
    if v is not None and np.any(np.asarray(v) < 0):
        raise ValueError("Fill dimensions must be >= 0")
    return [shape]


Fill = op_def("Fill", inputs=["dims: index_type", "value: T"], outputs=["output: T"],
              attrs=["T: type", "index_type: " + INDEX_ATTR], shape=_fill_shape)


def _fill_value(t):
    d, v = constant_value(t.op.inputs[0]), constant_value(t.op.inputs[1])
    if d is None or v is None or np.prod(d) > 1000:
        return None
    return np.full([int(x) for x in d], v, t.dtype.np_dtype)


Fill.constant_value = _fill_value


def check_no_layout(layout, api_name: str) -> None:
    """TF 2.21's `layout` arguments place a result with DTensor, which ndflow does not have."""
    if layout is not None:
        raise ValueError(f"{api_name}: `layout` (DTensor) is not supported by ndflow; pass "
                         "layout=None")


@tf_export("fill")
def fill(dims, value, name: str | None = None, layout=None) -> Tensor:
    """`tf.fill`: a tensor of shape `dims` filled with the scalar `value`."""
    check_no_layout(layout, "tf.fill")
    return apply_op(Fill, [int_input(dims), value],
                    name=name).outputs[0]


def _filled(value, shape_, dtype, name):
    dtype = dtypes.as_dtype(dtype)
    graph = None if context.executing_eagerly() else context.get_default_graph()
    if graph is not None and not isinstance(shape_, Tensor):
        try:
            dims = TensorShape(shape_).as_list()
        except (TypeError, ValueError):
            dims = None
        if dims is not None and None not in dims and int(np.prod(dims)) < 1000:
            return constant(value, dtype, shape=dims, name=name)
    if graph is None:
        if not isinstance(shape_, Tensor) and np.ndim(shape_) == 0:
            shape_ = [shape_]   # TF: a scalar shape is one dimension (tf.zeros(2))
        elif isinstance(shape_, Tensor) and shape_.shape.rank == 0:
            shape_ = reshape(shape_, [-1])
        return fill(shape_, convert_to_tensor(value, dtype), name=name)
    scope = graph.unique_name(name, mark_as_used=False)
    with graph.name_scope(scope + "/"):
        if not isinstance(shape_, Tensor):
            try:
                shape_ = convert_to_tensor(shape_, dtype_hint=dtypes.int32,
                                           name="shape_as_tensor")
            except (TypeError, ValueError):
                shape_ = stack(list(shape_), name="shape_as_tensor")
        if shape_.shape.rank == 0:
            shape_ = reshape(shape_, [-1])
        v = convert_to_tensor(value, dtype)
    return fill(shape_, v, name=name)


@tf_export("zeros")
def zeros(shape, dtype=dtypes.float32, name: str | None = None, layout=None) -> Tensor:
    """`tf.zeros`: a Const for small static shapes in graphs (as TF), else Fill."""
    check_no_layout(layout, "tf.zeros")
    dtype = dtypes.as_dtype(dtype)
    zero = False if dtype.is_bool else b"" if dtype is dtypes.string else 0
    return _filled(zero, shape, dtype, name or "zeros")


@tf_export("ones")
def ones(shape, dtype=dtypes.float32, name: str | None = None, layout=None) -> Tensor:
    """`tf.ones`: a Const for small static shapes in graphs (as TF), else Fill."""
    check_no_layout(layout, "tf.ones")
    dtype = dtypes.as_dtype(dtype)
    return _filled(True if dtype.is_bool else 1, shape, dtype, name or "ones")


# -- ZerosLike / OnesLike ------------------------------------------------------------------------

ZerosLike = op_def("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"],
                   shape=lambda ctx: [ctx.shapes[0]], not_differentiable=True,
                   tags=[POINTWISE])
OnesLike = op_def("OnesLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"],
                  shape=lambda ctx: [ctx.shapes[0]], not_differentiable=True,
                  tags=[POINTWISE])


def _like(op, fill_value, input, dtype, name, optimize: bool = True):  # noqa: A002
    input = convert_to_tensor(input)  # noqa: A001
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if dtype is None or dtype is input.dtype:
        return apply_op(op, [input], name=name).outputs[0]
    if dtype.is_bool:
        fill_value = bool(fill_value)
    if optimize and not context.executing_eagerly() and input.shape.is_fully_defined():
        return constant(fill_value, dtype, shape=input.shape.as_list(),
                        name=name or op.name.lower().replace("like", "_like"))
    return apply_op(Fill, [shape(input), constant(fill_value, dtype)], name=name).outputs[0]


@tf_export("zeros_like", v1=[])
def zeros_like(input, dtype=None, name: str | None = None, layout=None) -> Tensor:  # noqa: A002
    """`tf.zeros_like`: zeros with the shape of `input` (and its dtype unless given)."""
    check_no_layout(layout, "tf.zeros_like")
    return _like(ZerosLike, 0, input, dtype, name)


@tf_export("ones_like", v1=[])
def ones_like(input, dtype=None, name: str | None = None, layout=None) -> Tensor:  # noqa: A002
    """`tf.ones_like`: ones with the shape of `input` (and its dtype unless given)."""
    check_no_layout(layout, "tf.ones_like")
    return _like(OnesLike, 1, input, dtype, name)


@tf_export(v1=["zeros_like"])
def zeros_like_v1(tensor, dtype=None, name: str | None = None, optimize: bool = True) -> Tensor:
    """`tf.compat.v1.zeros_like`; `optimize=False` never folds a dtype-changing one to a
    Const."""
    return _like(ZerosLike, 0, tensor, dtype, name, optimize)


@tf_export(v1=["ones_like"])
def ones_like_v1(tensor, dtype=None, name: str | None = None, optimize: bool = True) -> Tensor:
    """`tf.compat.v1.ones_like`; see `zeros_like_v1`."""
    return _like(OnesLike, 1, tensor, dtype, name, optimize)


# -- Tile ----------------------------------------------------------------------------------------

def _tile_shape(ctx):
    s, m = ctx.shapes
    _rank_check(m, 1)
    if context.executing_eagerly():
        return [TensorShape(None)]
    n = m[0] if m.rank == 1 else None
    if n is not None and s.rank is not None and s.rank != n:
        raise ValueError(f"Shape must be rank {s.rank} but is rank {n}")
    r = s.rank if s.rank is not None else n
    if r is None:
        return [TensorShape(None)]
    mult = partial_value(ctx._inputs[1]) if not context.executing_eagerly() else None
    if not isinstance(mult, list) or len(mult) != r:
        mult = [None] * r
    dims = s.as_list() if s.rank is not None else [None] * r
    return [TensorShape([None if d is None or k is None else d * k
                         for d, k in zip(dims, mult)])]


Tile = op_def("Tile", inputs=["input: T", "multiples: Tmultiples"], outputs=["output: T"],
              attrs=["T: type", "Tmultiples: " + INDEX_ATTR], shape=_tile_shape)


@tf_export("tile", v1=["tile", "manip.tile"])
def tile(input, multiples, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.tile`: repeats `input` `multiples[i]` times along dimension i."""
    if isinstance(input, CompositeTensor):   # ops/ragged_array_ops.py
        return composite_dispatch.call("tile", input, multiples, name)
    return apply_op(Tile, [input, int_input(multiples)],
                    name=name).outputs[0]


# -- BroadcastTo ---------------------------------------------------------------------------------

def _broadcast_to_shape(ctx):
    s = ctx.shapes[0]
    _rank_check(ctx.shapes[1], 1)
    if context.executing_eagerly():
        return [TensorShape(None)]
    out = shape_operand(ctx, 1)
    if out.rank is None or s.rank is None:
        return [out]
    if s.rank > out.rank:
        raise ValueError(f"Shape must be at most rank {out.rank} but is rank {s.rank}")
    dims = out.as_list()
    off = out.rank - s.rank
    for i, d in reversed(list(enumerate(s.as_list()))):   # TF names the last mismatch first
        o = dims[off + i]
        if d is None or d == 1:
            continue
        if o is None:
            dims[off + i] = d
        elif o != d:
            raise ValueError(f"Dimensions must be equal, but are {d} and {o}")
    return [TensorShape(dims)]


BroadcastTo = op_def("BroadcastTo", inputs=["input: T", "shape: Tidx"], outputs=["output: T"],
                     attrs=["T: type", "Tidx: " + INDEX_ATTR], shape=_broadcast_to_shape)


@tf_export("broadcast_to")
def broadcast_to(input, shape, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.broadcast_to`: broadcasts `input` to `shape` (NumPy rules)."""
    return apply_op(BroadcastTo, [input, int_input(shape)],
                    name=name).outputs[0]


def _bga_shape(ctx):
    for s in ctx.shapes:
        s.with_rank(1)
    return [TensorShape([None]), TensorShape([None])]


BroadcastGradientArgs = op_def(
    "BroadcastGradientArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T", "r1: T"],
    attrs=["T: {int32, int64} = DT_INT32"], shape=_bga_shape, not_differentiable=True)


def broadcast_gradient_args(s0, s1, name=None) -> tuple:
    """Reduction indices for the gradients of two broadcast operands, from their shapes."""
    op = apply_op(BroadcastGradientArgs, [s0, s1], name=name)
    return op.outputs[0], op.outputs[1]


# -- Pad, PadV2, MirrorPad, MirrorPadGrad --------------------------------------------------------

def _pad_shape_fn(grad_sign: int = 1, mirror: str | None = None):
    def fn(ctx):
        s, p = ctx.shapes[0], ctx.shapes[1]
        _rank_check(p, 2)
        if p.rank == 2 and p[1] is not None and p[1] != 2:
            raise ValueError(f"Dimension must be 2 but is {p[1]}")
        n = p[0] if p.rank == 2 else None
        if n is not None:
            _rank_check(s, n)
        if len(ctx.shapes) > 2:
            _rank_check(ctx.shapes[2], 0)
        r = s.rank if s.rank is not None else n
        if r is None:
            return [TensorShape(None)]
        pads = static_value(ctx, 1)
        dims = s.as_list() if s.rank is not None else [None] * r
        if pads is None:
            return [TensorShape([None] * r)]
        pads = np.asarray(pads).reshape(r, 2)
        if np.any(pads < 0):
            raise ValueError("Paddings must be non-negative")
        return [TensorShape([None if d is None else d + grad_sign * int(a + b)
                             for d, (a, b) in zip(dims, pads)])]
    return fn


_PAD_ATTRS = ["T: type", "Tpaddings: " + INDEX_ATTR]
Pad = op_def("Pad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
             attrs=_PAD_ATTRS, shape=_pad_shape_fn())
PadV2 = op_def("PadV2", inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
               outputs=["output: T"], attrs=_PAD_ATTRS, shape=_pad_shape_fn())
_MODE = "mode: {'REFLECT', 'SYMMETRIC'}"
MirrorPad = op_def("MirrorPad", inputs=["input: T", "paddings: Tpaddings"],
                   outputs=["output: T"], attrs=_PAD_ATTRS + [_MODE], shape=_pad_shape_fn())
MirrorPadGrad = op_def("MirrorPadGrad", inputs=["input: T", "paddings: Tpaddings"],
                       outputs=["output: T"], attrs=_PAD_ATTRS + [_MODE],
                       shape=_pad_shape_fn(-1))


@tf_export("pad")
def pad(tensor, paddings, mode: str = "CONSTANT", constant_values=0,
        name: str | None = None) -> Tensor:
    """`tf.pad`: CONSTANT (Pad, or PadV2 for a non-zero value), REFLECT or SYMMETRIC."""
    mode = mode.upper()
    paddings = int_input(paddings)
    if mode == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.ndim(constant_values) == 0 \
                and constant_values == 0:
            return apply_op(Pad, [tensor, paddings], name=name).outputs[0]
        tensor = convert_to_tensor(tensor)
        value = convert_to_tensor(constant_values, dtype=tensor.dtype)
        return apply_op(PadV2, [tensor, paddings, value], name=name).outputs[0]
    if mode in ("REFLECT", "SYMMETRIC"):
        return apply_op(MirrorPad, [tensor, paddings], {"mode": mode}, name=name).outputs[0]
    raise ValueError('Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", '
                     f'or "SYMMETRIC". Received `mode` = {mode}')


attach(globals(), array_fill_docs.DOCS)

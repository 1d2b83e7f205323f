"""Array ops, part 1: constants, placeholders, identities, shapes, reshaping (packing:
`array_stack.py`).

The rest of the family lives in `array_range.py` (Range), `array_transpose.py` (Transpose,
InvertPermutation), `array_slicing.py` (Slice, StridedSlice, `__getitem__`, ConcatV2),
`array_fill.py` (Fill, ZerosLike/OnesLike, Tile, BroadcastTo, Pad), `array_split.py` and
`array_gather.py` (GatherV2, OneHot, Where); gradients are in array_grad.py. Shape functions
use TF's wording; value-dependent checks are skipped in eager mode, where the kernel reports
them with TF's kernel message (as TF eager runs no shape functions). `partial_shape(t)` is
TF's MakeShapeFromShapeTensor: the possibly partial shape a 1-D int tensor describes
(constants, Shape, Pack, ConcatV2, StridedSlice of those), so
`reshape(x, [tf.shape(y)[0], 3])` keeps a static 3.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape, as_shape, fmt
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.ops import array_core_docs
from ndflow.ops.apply import (
    apply_op,
    constant_value,
    convert_to_tensor,
    infer_numpy,
)
from ndflow.ops.op_def import POINTWISE, ShapeTensorError, op_def

INDEX_ATTR = "{int32, int64} = DT_INT32"
_MAX_CONSTANT_BYTES = 2**31  # TensorFlow's limit for a constant's TensorProto


def int_tensor(value, dtype_hint=dtypes.int32) -> Tensor:
    """convert_to_tensor for shape/axis/index arguments; eager Python ints take a fast path."""
    if context.executing_eagerly() and dtype_hint is dtypes.int32:
        if type(value) is int or (type(value) in (list, tuple) and
                                  all(type(v) is int for v in value)):
            vals = value if type(value) is int else list(value)
            flat = [vals] if type(vals) is int else vals
            if all(-2**31 <= v < 2**31 for v in flat):
                return EagerTensor(torch.tensor(vals, dtype=torch.int32), dtypes.int32)
    return convert_to_tensor(value, dtype_hint=dtype_hint)


def _python_ints(value) -> bool:
    """An int or a non-empty (nested) list or tuple of ints."""
    if type(value) is int:
        return True
    return type(value) in (list, tuple) and bool(value) and all(map(_python_ints, value))


def int_input(value, dtype_hint=dtypes.int32):
    """An int shape/axis/index argument passed straight to `apply_op`: in a graph a Python
    int, a (nested) list of ints or a list of ints and int32 scalar tensors stays as it is,
    for apply_op to convert (or pack) inside the op's name scope, named after its argument
    as TF names it (`Reshape/shape`, `concat/axis`, `GatherNd/indices`)."""
    if not context.executing_eagerly() and dtype_hint is dtypes.int32:
        if _python_ints(value):
            return list(value) if type(value) is not int else value
        if type(value) in (list, tuple) and value and all(
                type(v) is int or isinstance(v, Tensor) and v.dtype is dtypes.int32
                and v.shape.rank == 0 for v in value):
            return list(value)
    return int_tensor(value, dtype_hint)


def static_value(ctx, i: int):
    """`ctx.value(i)` while building graphs; None in eager mode (kernels check values)."""
    return None if context.executing_eagerly() else ctx.value(i)


def partial_value(t):
    """What is statically known of an int tensor: a scalar int|None or a list of int|None."""
    v = constant_value(t)
    if v is not None:
        v = np.asarray(v)
        return int(v) if v.ndim == 0 else [int(x) for x in v.reshape(-1)]
    fn = getattr(t, "op", None) and t.op.op_def.partial_value
    if fn:
        return fn(t)
    if t.shape.rank == 1 and t.shape[0] is not None:
        return [None] * t.shape[0]
    return None if t.shape.rank == 0 else []


def partial_shape(t) -> TensorShape:
    """TF's MakeShapeFromShapeTensor: -1 and unknown entries become unknown dimensions."""
    if t.shape.rank == 0:
        v = constant_value(t)
        if v is not None and int(v) == -1:
            return TensorShape(None)
        raise ValueError(f"Shape must be rank 1 but is rank 0 (value {v})")
    v = partial_value(t)
    if v == [] and (t.shape.rank is None or t.shape[0] is None):
        return TensorShape(None)
    for d in v:
        if d is not None and d < -1:
            raise ShapeTensorError(f"Invalid value in tensor used for shape: {d}")
    return TensorShape([None if d is None or d < 0 else d for d in v])


def shape_operand(ctx, i: int) -> TensorShape:
    """`partial_shape` of a shape function's input `i`, which TF's errors then show (as
    `input tensors computed as partial shapes`)."""
    shape = partial_shape(ctx._inputs[i])
    ctx.read_as_shape(i, shape)
    return shape


def _same_shape(ctx):
    return [ctx.shapes[0]]


# -- Const / Placeholders -----------------------------------------------------------------------


@tf_export("constant", v1=[])
def constant(value, dtype=None, shape=None, name: str = "Const") -> Tensor:
    """`tf.constant`: a tensor holding `value` (a scalar is broadcast to `shape`)."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if shape is not None:
        # The dtype is TF's for the value as given (0.1 -> float32, 1 -> int32), not NumPy's.
        if hasattr(value, "numpy"):
            arr, inferred = value.numpy(), value.dtype
        else:
            arr, inferred = infer_numpy(value, dtype)
        dtype = dtype or inferred
        shape = tuple(as_shape(shape).as_list())
        elements = math.prod(shape)  # Python ints: no overflow
        if arr.size == 1:
            if elements * arr.itemsize > _MAX_CONSTANT_BYTES:  # refuse before allocating
                raise ValueError("Cannot create a tensor proto whose content is larger than "
                                 "2GB.")
            arr = np.broadcast_to(arr.reshape(()), shape)
        elif arr.size == elements:
            arr = arr.reshape(shape)
        else:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor "
                            f"{arr} (converted from {value!r}) has {arr.size} elements, "
                            f"but got `shape` {shape} with {elements} elements).")
        value = np.array(arr)
    if context.executing_eagerly() and hasattr(value, "numpy") and dtype is not None \
            and value.dtype is not dtype:
        value = value.numpy()
    return convert_to_tensor(value, dtype=dtype, name=name)


@tf_export(v1=["constant"])
def constant_v1(value, dtype=None, shape=None, name: str = "Const",
                verify_shape: bool = False) -> Tensor:
    """`tf.compat.v1.constant`: with `verify_shape`, `value` must already have `shape`."""
    if verify_shape and shape is not None:
        got = np.shape(value.numpy() if hasattr(value, "numpy") else value)
        want = tuple(as_shape(shape).as_list())
        if got != want:
            raise TypeError(f"Expected Tensor's shape: {want}, but got {got}.")
    return constant(value, dtype, shape, name)


Placeholder = op_def("Placeholder", outputs=["output: dtype"],
                     attrs=["dtype: type", "shape: shape = unknown"],
                     shape=lambda ctx: [ctx.attrs["shape"]], gradient_undefined=True)

PlaceholderWithDefault = op_def(
    "PlaceholderWithDefault", inputs=["input: dtype"], outputs=["output: dtype"],
    attrs=["dtype: type", "shape: shape"],
    shape=lambda ctx: [ctx.shapes[0].merge_with(ctx.attrs["shape"])
                       if ctx.shapes[0].is_compatible_with(ctx.attrs["shape"])
                       else _bad_default(ctx)])


def _bad_default(ctx):
    raise ValueError(f"Incompatible shapes: {fmt(ctx.shapes[0])} vs. {fmt(ctx.attrs['shape'])}")


@tf_export(v1=["placeholder"])
def placeholder(dtype, shape=None, name: str | None = None) -> Tensor:
    """`tf.compat.v1.placeholder`: a graph input that must be fed."""
    if context.executing_eagerly():
        raise RuntimeError("tf.placeholder() is not compatible with eager execution.")
    return apply_op(Placeholder, [], {"dtype": dtypes.as_dtype(dtype),
                                      "shape": TensorShape(shape)}, name=name).outputs[0]


@tf_export(v1=["placeholder_with_default"])
def placeholder_with_default(input, shape, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.compat.v1.placeholder_with_default`: `input` unless fed."""
    t = convert_to_tensor(input)
    return apply_op(PlaceholderWithDefault, [t], {"shape": TensorShape(shape)},
                    name=name).outputs[0]


# -- Identity, IdentityN, StopGradient, NoOp, EnsureShape ----------------------------------------

Identity = op_def("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
                  shape=_same_shape, tags=[POINTWISE])
Identity.constant_value = lambda t: constant_value(t.op.inputs[0])
Identity.partial_value = lambda t: partial_value(t.op.inputs[0])

IdentityN = op_def("IdentityN", inputs=["input: T"], outputs=["output: T"],
                   attrs=["T: list(type) >= 1"], shape=lambda ctx: list(ctx.shapes))

StopGradient = op_def("StopGradient", inputs=["input: T"], outputs=["output: T"],
                      attrs=["T: type"], shape=_same_shape, not_differentiable=True,
                      tags=[POINTWISE])

NoOp = op_def("NoOp", gradient_undefined=True)


def _ensure_shape_shape(ctx):
    want = ctx.attrs["shape"]
    if context.executing_eagerly():
        return [want]
    try:
        return [ctx.shapes[0].merge_with(want)]
    except ValueError:
        a, b = ctx.shapes[0], want
        if a.rank != b.rank:
            raise ValueError(f"Shape must be rank {b.rank} but is rank {a.rank}") from None
        i = next(i for i, (x, y) in enumerate(zip(a, b)) if x and y and x != y)
        raise ValueError(f"Dimension {i} in both shapes must be equal, but are {b[i]} and "
                         f"{a[i]}. Shapes are {fmt(b)} and {fmt(a)}.") from None


EnsureShape = op_def("EnsureShape", inputs=["input: T"], outputs=["output: T"],
                     attrs=["shape: shape", "T: type"], shape=_ensure_shape_shape)


@tf_export("identity")
def identity(input, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.identity`."""
    return apply_op(Identity, [input], name=name).outputs[0]


@tf_export("identity_n")
def identity_n(input, name: str | None = None) -> list:  # noqa: A002 - TF's name
    """`tf.identity_n`: an IdentityN over a list of tensors."""
    return list(apply_op(IdentityN, [list(input)], name=name).outputs)


@tf_export("stop_gradient")
def stop_gradient(input, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.stop_gradient`: identity whose gradient is None."""
    return apply_op(StopGradient, [input], name=name).outputs[0]


@tf_export("ensure_shape")
def ensure_shape(x, shape, name: str | None = None) -> Tensor:
    """`tf.ensure_shape`: checks (and sets) the static and run-time shape of `x`."""
    for d in shape if isinstance(shape, (list, tuple)) else ():
        if isinstance(d, (int, np.integer)) and d < 0:    # TF: no -1 for unknown
            raise ValueError(f"Dimension {d} must be >= 0")
    return apply_op(EnsureShape, [x], {"shape": TensorShape(shape)}, name=name).outputs[0]


@tf_export("no_op")
def no_op(name: str | None = None):
    """`tf.no_op`: the NoOp operation (None in eager mode)."""
    op = apply_op(NoOp, [], name=name)
    return None if context.executing_eagerly() else op


@tf_export("group")
def group(*inputs, name: str | None = None):
    """`tf.group`: a NoOp that runs after all `inputs` (ops or tensors); None eagerly."""
    if context.executing_eagerly():
        return None
    deps = []
    for x in inputs:
        for item in (x if isinstance(x, (list, tuple)) else [x]):
            op = getattr(item, "op", item)
            if op not in deps:
                deps.append(op)
    graph = context.get_default_graph()
    with graph.control_dependencies(deps):
        return apply_op(NoOp, [], name=name or "group_deps")


# -- Shape, ShapeN, Size, Rank -------------------------------------------------------------------

def _shape_shape(ctx):
    s = ctx.shapes[0]
    return [TensorShape([s.rank])]


Shape = op_def("Shape", inputs=["input: T"], outputs=["output: out_type"],
               attrs=["T: type", "out_type: " + INDEX_ATTR], shape=_shape_shape,
               not_differentiable=True)
ShapeN = op_def("ShapeN", inputs=["input: N * T"], outputs=["output: N * out_type"],
                attrs=["N: int >= 1", "T: type", "out_type: " + INDEX_ATTR],
                shape=lambda ctx: [TensorShape([s.rank]) for s in ctx.shapes],
                not_differentiable=True)
Size = op_def("Size", inputs=["input: T"], outputs=["output: out_type"],
              attrs=["T: type", "out_type: " + INDEX_ATTR], shape=lambda ctx: [TensorShape([])],
              not_differentiable=True)
Rank = op_def("Rank", inputs=["input: T"], outputs=["output: int32"], attrs=["T: type"],
              shape=lambda ctx: [TensorShape([])], not_differentiable=True)


def _shape_value(t):
    s = t.op.inputs[t.value_index].shape
    return np.array(s.as_list(), t.dtype.np_dtype) if s.is_fully_defined() else None


def _shape_partial(t):
    s = t.op.inputs[t.value_index].shape
    return s.as_list() if s.rank is not None else []


def _size_value(t):
    s = t.op.inputs[0].shape
    if s.is_fully_defined() or (s.rank is not None and 0 in s.as_list()):
        return np.array(s.num_elements() or 0, t.dtype.np_dtype)
    return None


Shape.constant_value = _shape_value
Shape.partial_value = _shape_partial
ShapeN.constant_value = _shape_value
ShapeN.partial_value = _shape_partial
Size.constant_value = _size_value
Rank.constant_value = lambda t: (None if t.op.inputs[0].shape.rank is None
                                          else np.array(t.op.inputs[0].shape.rank, np.int32))


@tf_export("shape")
def shape(input, out_type=None, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.shape`: a Const when the static shape is fully known in a graph, else Shape."""
    out_type = dtypes.as_dtype(out_type or dtypes.int32)
    input = convert_to_tensor(input)  # noqa: A001
    if not context.executing_eagerly() and input.shape.is_fully_defined():
        return constant(input.shape.as_list(), out_type, name=name or "Shape")
    return apply_op(Shape, [input], {"out_type": out_type}, name=name).outputs[0]


@tf_export("shape_n")
def shape_n(input, out_type=dtypes.int32, name: str | None = None) -> list:  # noqa: A002
    """`tf.shape_n`: the shapes of a list of tensors."""
    return list(apply_op(ShapeN, [list(input)], {"out_type": dtypes.as_dtype(out_type)},
                         name=name).outputs)


@tf_export("size")
def size(input, out_type=None, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.size`: the number of elements (a Const when statically known in a graph)."""
    out_type = dtypes.as_dtype(out_type or dtypes.int32)
    input = convert_to_tensor(input)  # noqa: A001
    if not context.executing_eagerly():
        s = input.shape
        if s.is_fully_defined() or (s.rank is not None and 0 in s.as_list()):
            return constant(s.num_elements() or 0, out_type, name=name or "Size")
    return apply_op(Size, [input], {"out_type": out_type}, name=name).outputs[0]


@tf_export("rank")
def rank(input, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.rank`: the number of dimensions (a Const when statically known in a graph)."""
    input = convert_to_tensor(input)  # noqa: A001
    if not context.executing_eagerly() and input.shape.rank is not None:
        return constant(input.shape.rank, dtypes.int32, name=name or "Rank")
    return apply_op(Rank, [input], name=name).outputs[0]


# -- Reshape, ExpandDims, Squeeze ----------------------------------------------------------------

def reshape_shape(in_shape: TensorShape, out: TensorShape) -> TensorShape:
    """TF's Reshape shape rule: checks element counts, infers one unknown dimension."""
    if out.rank is None or in_shape.rank is None:
        return out
    dims = out.as_list()
    unknown_out = [i for i, d in enumerate(dims) if d is None]
    unknown_in = [i for i, d in enumerate(in_shape.as_list()) if d is None]
    if len(unknown_out) > 1 or len(unknown_in) > 1:
        return out
    known_out = int(np.prod([d for d in dims if d is not None], dtype=np.int64))
    known_in = int(np.prod([d for d in in_shape.as_list() if d is not None], dtype=np.int64))
    if not unknown_in and not unknown_out:
        if known_in != known_out:
            raise ValueError(f"Cannot reshape a tensor with {known_in} elements to shape "
                             f"{fmt(out)} ({known_out} elements)")
    elif not unknown_in and known_out > 0:
        if known_in % known_out:
            raise ValueError(f"Dimension size must be evenly divisible by {known_out} but is "
                             f"{known_in}")
        dims[unknown_out[0]] = known_in // known_out
    elif unknown_in and unknown_out and known_in == known_out:
        dims[unknown_out[0]] = in_shape[unknown_in[0]]
    return TensorShape(dims)


def _reshape_shape(ctx):
    sh = ctx.shapes[1]
    if sh.rank is not None and sh.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {sh.rank}")
    if context.executing_eagerly():
        return [TensorShape(None)]
    return [reshape_shape(ctx.shapes[0], shape_operand(ctx, 1))]


Reshape = op_def("Reshape", inputs=["tensor: T", "shape: Tshape"], outputs=["output: T"],
                 attrs=["T: type", "Tshape: " + INDEX_ATTR], shape=_reshape_shape)


def _reshape_value(t):
    v = constant_value(t.op.inputs[0])
    s = constant_value(t.op.inputs[1])
    return None if v is None or s is None else np.reshape(v, s)


Reshape.constant_value = _reshape_value


@tf_export("reshape", v1=["reshape", "manip.reshape"])
def reshape(tensor, shape, name: str | None = None) -> Tensor:
    """`tf.reshape` (one -1 dimension is inferred)."""
    return apply_op(Reshape, [tensor, int_input(shape)],
                    name=name).outputs[0]


def _expand_dims_shape(ctx):
    s = ctx.shapes[0]
    d = static_value(ctx, 1)
    if d is None or s.rank is None:
        return [TensorShape(None if s.rank is None else [None] * (s.rank + 1))]
    d = np.asarray(d).reshape(-1)
    if d.size != 1:
        raise ValueError(f"'dim' input must be a tensor with a single value, got {d.size}")
    d, r = int(d[0]), s.rank
    if not -1 - r <= d <= r:
        raise ValueError(f"dim {d} not in the interval [{-1 - r}, {r}].")
    if d < 0:
        d += r + 1
    dims = s.as_list()
    dims.insert(d, 1)
    return [TensorShape(dims)]


ExpandDims = op_def("ExpandDims", inputs=["input: T", "dim: Tdim"], outputs=["output: T"],
                    attrs=["T: type", "Tdim: " + INDEX_ATTR], shape=_expand_dims_shape)


@tf_export("expand_dims", v1=[])
def expand_dims(input, axis, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.expand_dims`: inserts a dimension of size 1 at `axis`."""
    return apply_op(ExpandDims, [input, int_input(axis)],
                    name=name).outputs[0]


@tf_export(v1=["expand_dims"])
def expand_dims_v1(input, axis=None, name: str | None = None, dim=None) -> Tensor:  # noqa: A002
    """`tf.compat.v1.expand_dims` (`dim` is the deprecated alias of `axis`)."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return expand_dims(input, axis, name)


def squeeze_output(s: TensorShape, axes) -> TensorShape:
    if s.rank is None:
        return TensorShape(None)
    r = s.rank
    wrapped = set()
    for i, a in enumerate(axes):
        if not -r <= a < r:
            raise ValueError(f"squeeze_dims[{i}] not in [{-r},{r}).")
        wrapped.add(a + r if a < 0 else a)
    out = []
    for i, d in enumerate(s.as_list()):
        if d is None:
            if i in wrapped:
                continue
            if not axes:
                return TensorShape(None)
        if wrapped:
            if i in wrapped:
                if d != 1:
                    raise ValueError(f"Can not squeeze dim[{i}], expected a dimension of 1, "
                                     f"got {d}")
                continue
        elif d == 1:
            continue
        out.append(d)
    return TensorShape(out)


Squeeze = op_def("Squeeze", inputs=["input: T"], outputs=["output: T"],
                 attrs=["T: type", "squeeze_dims: list(int) = []"],
                 shape=lambda ctx: [squeeze_output(ctx.shapes[0], ctx.attrs["squeeze_dims"])])


@tf_export("squeeze", v1=[])
def squeeze(input, axis=None, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.squeeze`: removes size-1 dimensions (all of them, or those in `axis`)."""
    axis = [] if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    return apply_op(Squeeze, [input], {"squeeze_dims": [int(a) for a in axis]},
                    name=name).outputs[0]


@tf_export(v1=["squeeze"])
def squeeze_v1(input, axis=None, name: str | None = None,  # noqa: A002
               squeeze_dims=None) -> Tensor:
    """`tf.compat.v1.squeeze` (`squeeze_dims` is the deprecated alias of `axis`)."""
    axis = deprecated_argument_lookup("axis", axis, "squeeze_dims", squeeze_dims)
    return squeeze(input, axis, name)


# Pack / Unpack (tf.stack, tf.unstack, autopacking of lists of tensors) live in
# array_stack.py; their names stay importable from here
from ndflow.ops.array_stack import (  # noqa: E402, F401
    Pack,
    Unpack,
    merge_message,
    stack,
    unstack,
)

attach(globals(), array_core_docs.DOCS)

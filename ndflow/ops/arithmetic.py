"""Elementwise arithmetic with broadcasting, Cast, AddN, Select, and Sum.

Sum and BroadcastGradientArgs live here because every broadcasting gradient reduces with
them (TF's `_ReduceGradientArgs`): reduction axes are computed statically whenever the
static shapes decide them, else at run time by `BroadcastGradientArgs` on `Shape`s.
Gradients follow TF's `math_grad.py`.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.shapes import TensorShape, as_shape, fmt, unknown_shape
from ndflow.core.tensor import Tensor
from ndflow.ops import array
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.comparison import (
    REAL,
    broadcast_pair,
    broadcast_shape,
    composite_name,
    greater,
    greater_equal,
    less_equal,
    unchanged_shape,
)
from ndflow.ops.op_def import NOT_DIFFERENTIABLE, op_def

NUMERIC = REAL
FLOAT = "T: {half, bfloat16, float, double}"
_FLOAT_TYPES = dtypes.FLOATING


def binary_operands(x, y):
    """Converts a non-tensor operand to the other operand's dtype when it can (`x + 1`)."""
    x_is, y_is = isinstance(x, Tensor), isinstance(y, Tensor)
    if not x_is and y_is:
        x = convert_to_tensor(x, dtype_hint=y.dtype, name="x")
    elif not x_is:
        x = convert_to_tensor(x, name="x")
    if not y_is:
        y = convert_to_tensor(y, dtype_hint=x.dtype, name="y")
    return x, y


def _binary(op, x, y, name):
    return apply_op(op, [x, y], name=name).outputs[0]


# -- Cast ---------------------------------------------------------------------------------------

_CAST_TYPES = "{half, bfloat16, float, double, int8, int16, int32, int64, uint8, bool}"
Cast = op_def("Cast", inputs=["x: SrcT"], outputs=["y: DstT"],
              attrs=[f"SrcT: {_CAST_TYPES}", f"DstT: {_CAST_TYPES}", "Truncate: bool = false"],
              shape=unchanged_shape)


@Cast.def_grad
def _cast_grad(op, grad):
    src = op.inputs[0].dtype
    if src in _FLOAT_TYPES and grad.dtype in _FLOAT_TYPES:
        return [cast(grad, src)]
    return [None]


def _cast_value(t):
    v = constant_value(t.op.inputs[0])
    dst = t.op.attrs["DstT"]
    return None if v is None or dst.np_dtype is None else np.asarray(v).astype(dst.np_dtype)


Cast.extra["constant_value"] = _cast_value


def cast(x, dtype, name=None) -> Tensor:
    """`tf.cast`: `x` converted to `dtype` (floats to ints truncate toward zero)."""
    dtype = dtypes.as_dtype(dtype)
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x, dtype_hint=dtype)
    if x.dtype is dtype:
        return x
    return apply_op(Cast, [x], {"DstT": dtype}, name=name or "Cast").outputs[0]


def to_float(x, name="ToFloat") -> Tensor:
    """`tf.compat.v1.to_float`."""
    return cast(x, dtypes.float32, name=name)


def to_double(x, name="ToDouble") -> Tensor:
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name="ToInt32") -> Tensor:
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64") -> Tensor:
    return cast(x, dtypes.int64, name=name)


# -- Sum and the reduction shape rule --------------------------------------------------------------

def normalize_axes(axes, rank: int) -> list:
    """Reduction indices as sorted non-negative ints; TF's error for out-of-range ones."""
    out = set()
    for a in np.asarray(axes).reshape(-1).tolist():
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} "
                             "dimensions.")
        out.add(a % rank if rank else a)
    return sorted(out)


def reduction_shape(ctx) -> list:
    """Shape rule of Sum/Mean/Max/Min/Prod/All/Any (TF's `ReductionShape`)."""
    shape, keep = ctx.shapes[0], ctx.attrs["keep_dims"]
    axes = ctx.value(1)
    if shape.rank is None:
        return [TensorShape(None)]
    if axes is None:
        if keep:
            return [unknown_shape(shape.rank)]
        n = ctx.shapes[1].num_elements()
        return [unknown_shape(shape.rank - n) if n is not None and ctx.shapes[1].rank == 1
                and n <= shape.rank else TensorShape(None)]
    red = set(normalize_axes(axes, shape.rank))
    dims = shape.as_list()
    if keep:
        return [TensorShape([1 if i in red else d for i, d in enumerate(dims)])]
    return [TensorShape([d for i, d in enumerate(dims) if i not in red])]


def reduction_op(name: str, type_attr: str = NUMERIC, grad=None):
    attrs = ["keep_dims: bool = false", "Tidx: {int32, int64} = DT_INT32"]
    if type_attr == "bool":
        return op_def(name, inputs=["input: bool", "reduction_indices: Tidx"],
                      outputs=["output: bool"], attrs=attrs, shape=reduction_shape, grad=grad)
    return op_def(name, inputs=["input: T", "reduction_indices: Tidx"], outputs=["output: T"],
                  attrs=[type_attr] + attrs, shape=reduction_shape, grad=grad)


def reduce(op, x, axis, keepdims, name):
    """Applies reduction `op`: axis None = all axes (for unknown rank, via a flat view)."""
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x)
    keepdims = bool(keepdims)
    if axis is None:
        rank = x.shape.rank
        if rank is None:
            flat = apply_op(op, [array.reshape(x, [-1]), 0], {"keep_dims": False}).outputs[0]
            if not keepdims:
                return array.identity(flat, name=name)
            return array.reshape(flat, array.ones_like(array.shape(x)), name=name)
        axis = convert_to_tensor(np.arange(rank, dtype=np.int32))
    return apply_op(op, [x, axis], {"keep_dims": keepdims}, name=name).outputs[0]


def restore_reduced_dims(t, op):
    """`t` (shaped like the output of reduction `op`) reshaped to keep_dims form."""
    if op.get_attr("keep_dims"):
        return t
    x = op.inputs[0]
    axes = constant_value(op.inputs[1])
    shape = x.shape
    if shape.rank is None or axes is None:
        raise NotImplementedError("gradient of a reduction over unknown axes or rank")
    red = normalize_axes(axes, shape.rank)
    kept = [1 if i in red else d for i, d in enumerate(shape.as_list())]
    if kept.count(None) <= 1:
        return array.reshape(t, [-1 if d is None else d for d in kept])
    mask = convert_to_tensor(np.array([i in red for i in range(shape.rank)]))
    return array.reshape(t, select_v2(mask, 1, array.shape(x)))


Sum = reduction_op("Sum")


def reduction_grad_to_input(op, grad):
    """The gradient of a reduction's output broadcast back over its input (TF's _SumGrad)."""
    x = op.inputs[0]
    g = restore_reduced_dims(grad, op)
    shape = x.shape
    if not shape.is_fully_defined():
        return array.broadcast_to(g, array.shape(x))
    if g.shape == shape:
        return g
    if g.shape.is_fully_defined():
        return array.tile(g, [d // max(s, 1) for d, s in zip(shape.as_list(), g.shape)])
    return array.broadcast_to(g, shape.as_list())


Sum.def_grad(lambda op, grad: [reduction_grad_to_input(op, grad), None])


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """`tf.math.reduce_sum`."""
    return reduce(Sum, input_tensor, axis, keepdims, name)


# -- broadcasting gradients ------------------------------------------------------------------------

def _bga_shape(ctx):
    for s in ctx.shapes:
        s.with_rank(1)
    return [TensorShape([None]), TensorShape([None])]


BroadcastGradientArgs = op_def(
    "BroadcastGradientArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T", "r1: T"],
    attrs=["T: {int32, int64} = DT_INT32"], shape=_bga_shape, grad=NOT_DIFFERENTIABLE)


def broadcast_gradient_args(s0, s1, name=None) -> tuple:
    """Reduction indices for the gradients of two broadcast operands, from their shapes."""
    op = apply_op(BroadcastGradientArgs, [s0, s1], name=name)
    return op.outputs[0], op.outputs[1]


def infer_reduction_axes(x_shape, y_shape):
    """TF's `_InferGradientReductionAxes`: static axes each side was broadcast along."""
    x_shape, y_shape = as_shape(x_shape), as_shape(y_shape)
    if x_shape.rank is None or y_shape.rank is None:
        return None, None
    xs, ys = x_shape.as_list(), y_shape.as_list()
    n = max(len(xs), len(ys))
    xs = [1] * (n - len(xs)) + xs
    ys = [1] * (n - len(ys)) + ys
    x_axes, y_axes = [], []
    for axis, (xd, yd) in enumerate(zip(xs, ys)):
        if xd == 1 and yd != 1:
            x_axes.append(axis)
        elif yd == 1 and xd != 1:
            y_axes.append(axis)
        elif xd is None or yd is None:
            return None, None
    return x_axes, y_axes


def _reshape_like(g, x):
    if g.shape.rank is not None and g.shape.rank == x.shape.rank:
        return g  # keep_dims sums already give x's shape
    if x.shape.is_fully_defined():
        return array.reshape(g, x.shape.as_list())
    return array.reshape(g, array.shape(x))


def reduce_gradient_args(x, y, gx, gy) -> tuple:
    """Sums the gradients of broadcast operands `x`, `y` back to their shapes."""
    if gx is None and gy is None:
        return gx, gy
    x_axes, y_axes = infer_reduction_axes(x.shape, y.shape)
    if x_axes is None:
        rx, ry = broadcast_gradient_args(array.shape(x), array.shape(y))
        if gx is not None:
            gx = array.reshape(reduce_sum(gx, rx, keepdims=True), array.shape(x))
        if gy is not None:
            gy = array.reshape(reduce_sum(gy, ry, keepdims=True), array.shape(y))
        return gx, gy
    if gx is not None and (x_axes or x.shape.rank < y.shape.rank):
        gx = _reshape_like(reduce_sum(gx, x_axes, keepdims=True), x)
    if gy is not None and (y_axes or y.shape.rank < x.shape.rank):
        gy = _reshape_like(reduce_sum(gy, y_axes, keepdims=True), y)
    return gx, gy


def reduce_to_shape(grad, shape):
    """Sums a broadcast gradient back to `shape` (a static TensorShape, or a tensor whose
    shape is the target: then unknown dimensions are handled at run time)."""
    if isinstance(shape, Tensor):
        return reduce_gradient_args(shape, grad, grad, None)[0]
    shape = as_shape(shape)
    if grad.shape == shape and shape.is_fully_defined():
        return grad
    x_axes, _ = infer_reduction_axes(shape, grad.shape)
    if x_axes is None or not shape.is_fully_defined():
        raise NotImplementedError(f"reduce_to_shape: cannot decide statically how "
                                  f"{fmt(grad.shape)} broadcasts to {fmt(shape)}; pass the "
                                  "operand tensor instead of its shape")
    out = reduce_sum(grad, x_axes, keepdims=True) if x_axes else grad
    return out if out.shape == shape else array.reshape(out, shape.as_list())


# -- binary arithmetic ---------------------------------------------------------------------------

def _binary_op(name, attrs=NUMERIC, grad=None):
    return op_def(name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[attrs],
                  shape=broadcast_shape, grad=grad)


def _add_grad(op, grad):
    x, y = op.inputs
    return list(reduce_gradient_args(x, y, grad, grad))


AddV2 = _binary_op("AddV2", grad=_add_grad)
Add = _binary_op("Add", attrs=REAL[:-1] + ", string}", grad=_add_grad)


@(Sub := _binary_op("Sub")).def_grad
def _sub_grad(op, grad):
    x, y = op.inputs
    return list(reduce_gradient_args(x, y, grad, negative(grad)))


@(Mul := _binary_op("Mul")).def_grad
def _mul_grad(op, grad):
    x, y = op.inputs
    return list(reduce_gradient_args(x, y, multiply(grad, y), multiply(x, grad)))


@(RealDiv := _binary_op("RealDiv")).def_grad
def _real_div_grad(op, grad):
    x, y = op.inputs
    gx = real_div(grad, y)
    gy = multiply(grad, real_div(real_div(negative(x), y), y))
    return list(reduce_gradient_args(x, y, gx, gy))


FloorDiv = _binary_op("FloorDiv", grad=lambda op, grad: [None, None])


@(FloorMod := _binary_op("FloorMod")).def_grad
def _floor_mod_grad(op, grad):
    x, y = op.inputs
    gy = multiply(grad, negative(floor_div(x, y)))
    return list(reduce_gradient_args(x, y, grad, gy))


@(Pow := _binary_op("Pow", attrs="T: {half, bfloat16, float, double, int32, int64}")).def_grad
def _pow_grad(op, grad):
    x, y = op.inputs
    gx = multiply(multiply(grad, y), pow(x, subtract(y, 1)))
    mask = greater(x, 0)
    safe_x = select_v2(mask, x, array.ones_like(x))
    log_x = select_v2(mask, log(safe_x), array.zeros_like(x))
    gy = multiply(multiply(grad, op.outputs[0]), log_x)
    return list(reduce_gradient_args(x, y, gx, gy))


def _max_min_grad(selector):
    def grad_fn(op, grad):
        x, y = op.inputs
        zeros = array.zeros_like(grad)
        xmask = selector(x, y)
        return list(reduce_gradient_args(x, y, select_v2(xmask, grad, zeros),
                                         select_v2(xmask, zeros, grad)))
    return grad_fn


Maximum = _binary_op("Maximum", grad=_max_min_grad(greater_equal))
Minimum = _binary_op("Minimum", grad=_max_min_grad(less_equal))


@(SquaredDifference := _binary_op("SquaredDifference")).def_grad
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    x_grad = multiply(multiply(grad, 2.0), subtract(x, y))
    return list(reduce_gradient_args(x, y, x_grad, negative(x_grad)))


def add(x, y, name=None) -> Tensor:
    """`tf.math.add` (op AddV2, named "Add" as in TF)."""
    strings = any(isinstance(v, (str, bytes)) or getattr(v, "dtype", None) is dtypes.string
                  for v in (x, y))
    return _binary(Add if strings else AddV2, x, y, name or "Add")


def subtract(x, y, name=None) -> Tensor:
    """`tf.math.subtract`."""
    return _binary(Sub, x, y, name)


def multiply(x, y, name=None) -> Tensor:
    """`tf.math.multiply`."""
    return _binary(Mul, x, y, name)


def real_div(x, y, name=None) -> Tensor:
    """`tf.realdiv`: x / y for real types (integers truncate)."""
    return _binary(RealDiv, x, y, name)


def floor_div(x, y, name=None) -> Tensor:
    """`tf.math.floordiv` (named "floordiv" by default): x / y rounded toward -inf."""
    return _binary(FloorDiv, x, y, name or "floordiv")


def floormod(x, y, name=None) -> Tensor:
    """`tf.math.floormod`: remainder of floor division (sign of `y`)."""
    return _binary(FloorMod, x, y, name)


def pow(x, y, name=None) -> Tensor:  # noqa: A001 - TF's name
    """`tf.math.pow`."""
    return _binary(Pow, x, y, name or "Pow")


def maximum(x, y, name=None) -> Tensor:
    """`tf.math.maximum`."""
    return _binary(Maximum, x, y, name)


def minimum(x, y, name=None) -> Tensor:
    """`tf.math.minimum`."""
    return _binary(Minimum, x, y, name)


def squared_difference(x, y, name=None) -> Tensor:
    """`tf.math.squared_difference`: (x - y)**2."""
    return _binary(SquaredDifference, x, y, name)


_TRUEDIV_TYPES = {dtypes.int8: dtypes.float32, dtypes.int16: dtypes.float32,
                  dtypes.uint8: dtypes.float32, dtypes.int32: dtypes.float64,
                  dtypes.int64: dtypes.float64}


def truediv(x, y, name=None) -> Tensor:
    """`tf.math.truediv`: integers are cast to float32 (8/16 bit) or float64 first."""
    with composite_name(name, "truediv") as final:
        x, y = binary_operands(x, y)
        if x.dtype is not y.dtype:
            raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype!r} != "
                            f"{y.dtype!r}.")
        to = _TRUEDIV_TYPES.get(x.dtype)
        if to is not None:
            x, y = cast(x, to), cast(y, to)
    return real_div(x, y, name=final)


def divide(x, y, name=None) -> Tensor:
    """`tf.math.divide`: Python 3 division (`x / y`)."""
    return truediv(x, y, name)


# -- unary ops the binary gradients need ----------------------------------------------------------

Neg = op_def("Neg", inputs=["x: T"], outputs=["y: T"], attrs=[NUMERIC], shape=unchanged_shape,
             grad=lambda op, grad: [negative(grad)])


def negative(x, name=None) -> Tensor:
    """`tf.math.negative`: -x."""
    return apply_op(Neg, [x], name=name).outputs[0]


Log = op_def("Log", inputs=["x: T"], outputs=["y: T"], attrs=[FLOAT], shape=unchanged_shape,
             grad=lambda op, grad: [multiply(grad, reciprocal(op.inputs[0]))])


def log(x, name=None) -> Tensor:
    """`tf.math.log`: natural logarithm."""
    return apply_op(Log, [x], name=name).outputs[0]


Reciprocal = op_def("Reciprocal", inputs=["x: T"], outputs=["y: T"], attrs=[NUMERIC],
                    shape=unchanged_shape)
ReciprocalGrad = op_def("ReciprocalGrad", inputs=["y: T", "dy: T"], outputs=["z: T"],
                        attrs=[FLOAT], shape=unchanged_shape)
Reciprocal.def_grad(lambda op, grad: [reciprocal_grad(op.outputs[0], grad)])


@ReciprocalGrad.def_grad
def _reciprocal_grad_grad(op, grad):
    a, b = op.inputs
    return [multiply(multiply(multiply(grad, -2.0), b), a), reciprocal_grad(a, grad)]


def reciprocal(x, name=None) -> Tensor:
    """`tf.math.reciprocal`: 1 / x."""
    return apply_op(Reciprocal, [x], name=name).outputs[0]


def reciprocal_grad(y, dy, name=None) -> Tensor:
    """The gradient op of Reciprocal: -dy * y**2."""
    return apply_op(ReciprocalGrad, [y, dy], name=name).outputs[0]


# -- Select / SelectV2 --------------------------------------------------------------------------

def _merge_error(a, b) -> ValueError:
    if a.rank != b.rank:
        return ValueError(f"Shapes must be equal rank, but are {a.rank} and {b.rank}")
    for da, db in zip(a, b):
        if da is not None and db is not None and da != db:
            return ValueError(f"Dimensions must be equal, but are {da} and {db}")
    return ValueError(f"Shapes {fmt(a)} and {fmt(b)} are incompatible")


def _select_shape(ctx):
    c, x, y = ctx.shapes
    try:
        out = x.merge_with(y)
    except ValueError:
        raise _merge_error(x, y) from None
    if c.rank is None or c.rank == 0 or out.rank is None:
        return [out]
    if c.rank == 1 and out.rank > 1:
        if c[0] is not None and out[0] is not None and c[0] != out[0]:
            raise ValueError(f"Dimensions must be equal, but are {c[0]} and {out[0]}")
        return [out]
    try:
        return [out.merge_with(c)]
    except ValueError:
        raise _merge_error(c, out) from None


Select = op_def("Select", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
                attrs=["T: type"], shape=_select_shape)


@Select.def_grad
def _select_grad(op, grad):
    c, x = op.inputs[0], op.inputs[1]
    zeros = array.zeros_like(x)
    return [None, select(c, grad, zeros), select(c, zeros, grad)]


def _select_v2_shape(ctx):
    c, x, y = ctx.shapes
    return [broadcast_pair(c, broadcast_pair(x, y))]


SelectV2 = op_def("SelectV2", inputs=["condition: bool", "t: T", "e: T"],
                  outputs=["output: T"], attrs=["T: type"], shape=_select_v2_shape)


@SelectV2.def_grad
def _select_v2_grad(op, grad):
    c, x, y = op.inputs
    z = op.outputs[0]
    zeros = convert_to_tensor(0, grad.dtype)
    gx = select_v2(c, grad, zeros)
    gy = select_v2(c, zeros, grad)
    return [None, reduce_gradient_args(x, z, gx, None)[0],
            reduce_gradient_args(y, z, gy, None)[0]]


def select(condition, x, y, name=None) -> Tensor:
    """`tf.compat.v1.where(c, x, y)` / `tf.compat.v1.select` (op Select)."""
    return apply_op(Select, [condition, x, y], name=name).outputs[0]


def select_v2(condition, x, y, name=None) -> Tensor:
    """`tf.where(c, x, y)` (op SelectV2): broadcasts condition, x and y."""
    return apply_op(SelectV2, [condition, x, y], name=name).outputs[0]


def where(condition, x=None, y=None, name=None) -> Tensor:
    """`tf.where`: with x and y, elementwise selection (SelectV2)."""
    if x is None and y is None:
        where_1arg = getattr(array, "where", None)  # the one-argument form is an array op
        if where_1arg is None:
            raise NotImplementedError("tf.where(condition) with one argument")
        return where_1arg(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return select_v2(condition, x, y, name=name)


# -- AddN ---------------------------------------------------------------------------------------

def _add_n_shape(ctx):
    merged = TensorShape(None)
    for s in ctx.shapes:
        try:
            merged = merged.merge_with(s)
        except ValueError:
            raise _merge_error(merged, s) from None
    return [merged]


AddN = op_def("AddN", inputs=["inputs: N * T"], outputs=["sum: T"],
              attrs=["N: int >= 1", NUMERIC], shape=_add_n_shape,
              grad=lambda op, grad: [grad] * len(op.inputs))


def add_n(inputs, name=None) -> Tensor:
    """`tf.math.add_n`: elementwise sum of a list of same-shaped tensors."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the "
                         "same dtype and shape")
    inputs = list(inputs)
    if len(inputs) == 1:
        return inputs[0] if name is None else array.identity(inputs[0], name=name)
    return apply_op(AddN, [inputs], name=name).outputs[0]

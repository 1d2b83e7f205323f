"""Elementwise arithmetic with broadcasting: the binary ops, Neg, Log, Reciprocal, Select and
AddN, with TensorFlow's op names and the wrappers `tf.math.add`, `tf.math.truediv`, ...

Their gradients are in `math_grad.py`; Cast is in `cast.py`, Sum with the reductions.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape, as_shape, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic_docs, array_core, array_gather
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.comparison import (
    REAL,
    broadcast_pair,
    broadcast_shape,
    composite_name,
    unchanged_shape,
)
from ndflow.ops.op_def import BROADCASTING, POINTWISE, op_def

NUMERIC = REAL
FLOAT = "T: {half, bfloat16, float, double}"
# The ops TensorFlow also registers for complex64/complex128.
WITH_COMPLEX = REAL[:-1] + ", complex64, complex128}"
# Ops TensorFlow declares for the signed types only (Neg, Reciprocal), and SquaredDifference's.
SIGNED = "T: {half, bfloat16, float, double, int8, int16, int32, int64, complex64, complex128}"
SQUARED_DIFFERENCE = "T: {half, bfloat16, float, double, int32, int64, complex64, complex128}"
FLOAT_COMPLEX = "T: {half, bfloat16, float, double, complex64, complex128}"


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


# -- binary arithmetic ---------------------------------------------------------------------------

def _binary_op(name, attrs=NUMERIC, commutative=False):
    return op_def(name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[attrs],
                  shape=broadcast_shape, commutative=commutative, tags=[BROADCASTING])


AddV2 = _binary_op("AddV2", attrs=WITH_COMPLEX, commutative=True)
Add = _binary_op("Add", attrs=WITH_COMPLEX[:-1] + ", string}")
Sub = _binary_op("Sub", attrs=WITH_COMPLEX)
Mul = _binary_op("Mul", attrs=WITH_COMPLEX, commutative=True)
RealDiv = _binary_op("RealDiv", attrs=WITH_COMPLEX)
FloorDiv = _binary_op("FloorDiv")
FloorMod = _binary_op("FloorMod")
Pow = _binary_op("Pow", attrs="T: {half, bfloat16, float, double, int32, int64, complex64, "
                              "complex128}")
Maximum = _binary_op("Maximum")
Minimum = _binary_op("Minimum")
SquaredDifference = _binary_op("SquaredDifference", attrs=SQUARED_DIFFERENCE,
                               commutative=True)
TruncateDiv = _binary_op("TruncateDiv")
TruncateMod = op_def("TruncateMod", inputs=["x: T", "y: T"], outputs=["z: T"],
                     attrs=["T: {int32, int64, bfloat16, half, float, double}"],
                     shape=broadcast_shape, gradient_undefined=True, tags=[BROADCASTING])


@tf_export("add", "math.add")
def add(x, y, name=None) -> Tensor:
    """`tf.math.add` (op AddV2, named "Add" as in TF)."""
    strings = any(isinstance(v, (str, bytes)) or getattr(v, "dtype", None) is dtypes.string
                  for v in (x, y))
    return _binary(Add if strings else AddV2, x, y, name or "Add")


@tf_export("math.subtract", "subtract")
def subtract(x, y, name=None) -> Tensor:
    """`tf.math.subtract`."""
    return _binary(Sub, x, y, name)


@tf_export("math.multiply", "multiply")
def multiply(x, y, name=None) -> Tensor:
    """`tf.math.multiply`."""
    return _binary(Mul, x, y, name)


@tf_export("realdiv")
def real_div(x, y, name=None) -> Tensor:
    """`tf.realdiv`: x / y for real types (integers truncate)."""
    return _binary(RealDiv, x, y, name)


def floor_div(x, y, name=None) -> Tensor:
    """`tf.math.floordiv` (named "floordiv" by default): x / y rounded toward -inf."""
    return _binary(FloorDiv, x, y, name or "floordiv")


@tf_export(v1=["floor_div"])
def floor_div_v1(x, y, name=None) -> Tensor:
    """`tf.compat.v1.floor_div`: the FloorDiv op (named after it, as TF's generated wrapper)."""
    return _binary(FloorDiv, x, y, name)


@tf_export("math.floormod", "math.mod", v1=["floormod", "math.floormod", "math.mod", "mod"])
def floormod(x, y, name=None) -> Tensor:
    """`tf.math.floormod`: remainder of floor division (sign of `y`)."""
    return _binary(FloorMod, x, y, name)


@tf_export("math.pow", "pow")
def pow(x, y, name=None) -> Tensor:  # noqa: A001 - TF's name
    """`tf.math.pow`."""
    return _binary(Pow, x, y, name or "Pow")


@tf_export("math.maximum", "maximum")
def maximum(x, y, name=None) -> Tensor:
    """`tf.math.maximum`."""
    return _binary(Maximum, x, y, name)


@tf_export("math.minimum", "minimum")
def minimum(x, y, name=None) -> Tensor:
    """`tf.math.minimum`."""
    return _binary(Minimum, x, y, name)


@tf_export("math.squared_difference", v1=["math.squared_difference", "squared_difference"])
def squared_difference(x, y, name=None) -> Tensor:
    """`tf.math.squared_difference`: (x - y)**2."""
    return _binary(SquaredDifference, x, y, name)


@tf_export("truncatediv")
def truncatediv(x, y, name=None) -> Tensor:
    """`tf.truncatediv`: x / y rounded toward zero (C semantics) for integers."""
    return _binary(TruncateDiv, x, y, name)


@tf_export("truncatemod")
def truncatemod(x, y, name=None) -> Tensor:
    """`tf.truncatemod`: the remainder of truncated division (sign of `x`, C's fmod)."""
    return _binary(TruncateMod, x, y, name)


_TRUEDIV_TYPES = {dtypes.int8: dtypes.float32, dtypes.int16: dtypes.float32,
                  dtypes.uint8: dtypes.float32, dtypes.uint16: dtypes.float32,
                  dtypes.int32: dtypes.float64, dtypes.uint32: dtypes.float64,
                  dtypes.int64: dtypes.float64, dtypes.uint64: dtypes.float64}


@tf_export("math.truediv", "truediv")
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


@tf_export("divide", "math.divide")
def divide(x, y, name=None) -> Tensor:
    """`tf.math.divide`: Python 3 division (`x / y`)."""
    return truediv(x, y, name)


@tf_export(v1=["div"])
def div(x, y, name=None) -> Tensor:
    """`tf.compat.v1.div`: Python 2 division, FloorDiv for integers and RealDiv otherwise."""
    with composite_name(name, "div") as final:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype_hint=x.dtype)
        if x.dtype is not y.dtype:
            raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype!r} != "
                            f"{y.dtype!r}.")
    return _binary(RealDiv if x.dtype.is_floating or x.dtype.is_complex else FloorDiv, x, y,
                   final)


DivNoNan = op_def("DivNoNan", inputs=["x: T", "y: T"], outputs=["z: T"],
                  attrs=[FLOAT_COMPLEX], shape=broadcast_shape, tags=[BROADCASTING])


@tf_export("math.divide_no_nan", v1=["div_no_nan", "math.divide_no_nan"])
def div_no_nan(x, y, name: str | None = None) -> Tensor:
    """`tf.math.divide_no_nan`: x / y, and 0 wherever y is 0."""
    x, y = binary_operands(x, y)
    return apply_op(DivNoNan, [x, y], name=name).outputs[0]


MulNoNan = op_def("MulNoNan", inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[FLOAT_COMPLEX],
                  shape=broadcast_shape, tags=[BROADCASTING])


def mul_no_nan(x, y, name=None) -> Tensor:
    """The MulNoNan op (`tf.math.multiply_no_nan` without its conversions)."""
    return _binary(MulNoNan, x, y, name)


@tf_export("math.multiply_no_nan")
def multiply_no_nan(x, y, name=None) -> Tensor:
    """`tf.math.multiply_no_nan`: x * y, and 0 wherever y is 0 (even for an inf or NaN x)."""
    with composite_name(name, "multiply_no_nan") as final:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, x.dtype, name="y")
    return apply_op(MulNoNan, [x, y], name=final).outputs[0]


@tf_export("math.reciprocal_no_nan")
def reciprocal_no_nan(x, name=None) -> Tensor:
    """`tf.math.reciprocal_no_nan`: 1 / x, and 0 wherever x is 0 (DivNoNan of a constant 1)."""
    with composite_name(name, "reciprocal_no_nan") as final:
        x = convert_to_tensor(x, name="x")
        one = convert_to_tensor(1, x.dtype, name="one")
    return apply_op(DivNoNan, [one, x], name=final).outputs[0]


# -- Neg, Log, Reciprocal --------------------------------------------------------------------------

Neg = op_def("Neg", inputs=["x: T"], outputs=["y: T"], attrs=[SIGNED],
             shape=unchanged_shape, tags=[POINTWISE])
Log = op_def("Log", inputs=["x: T"], outputs=["y: T"], attrs=[FLOAT_COMPLEX],
             shape=unchanged_shape, tags=[POINTWISE])
Reciprocal = op_def("Reciprocal", inputs=["x: T"], outputs=["y: T"], attrs=[SIGNED],
                    shape=unchanged_shape, tags=[POINTWISE])
ReciprocalGrad = op_def("ReciprocalGrad", inputs=["y: T", "dy: T"], outputs=["z: T"],
                        attrs=[FLOAT_COMPLEX], shape=unchanged_shape, tags=[POINTWISE])


@tf_export("math.negative", "negative")
def negative(x, name=None) -> Tensor:
    """`tf.math.negative`: -x."""
    return apply_op(Neg, [x], name=name).outputs[0]


@tf_export("math.log", v1=["log", "math.log"])
def log(x, name=None) -> Tensor:
    """`tf.math.log`: natural logarithm."""
    return apply_op(Log, [x], name=name).outputs[0]


@tf_export("math.reciprocal", v1=["math.reciprocal", "reciprocal"])
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


def _select_v2_shape(ctx):
    c, x, y = ctx.shapes
    return [broadcast_pair(c, broadcast_pair(x, y))]


SelectV2 = op_def("SelectV2", inputs=["condition: bool", "t: T", "e: T"],
                  outputs=["output: T"], attrs=["T: type"], shape=_select_v2_shape,
                  tags=[BROADCASTING])


def select(condition, x, y, name=None) -> Tensor:
    """`tf.compat.v1.where(c, x, y)` / `tf.compat.v1.select` (op Select)."""
    return apply_op(Select, [condition, x, y], name=name).outputs[0]


def select_v2(condition, x, y, name=None) -> Tensor:
    """`tf.where(c, x, y)` (op SelectV2): broadcasts condition, x and y."""
    return apply_op(SelectV2, [condition, x, y], name=name).outputs[0]


@tf_export("where", v1=["where_v2"])
def where(condition, x=None, y=None, name=None) -> Tensor:
    """`tf.where`: with x and y, elementwise selection (SelectV2); without, the indices of
    the true elements (Where)."""
    if x is None and y is None:
        return array_gather.where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return select_v2(condition, x, y, name=name)


@tf_export(v1=["where"])
def where_v1(condition, x=None, y=None, name=None) -> Tensor:
    """`tf.compat.v1.where`: with x and y, Select (same shapes, or a vector condition picking
    rows; no broadcasting); without, the indices of the true elements."""
    if x is None and y is None:
        return array_gather.where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return select(condition, x, y, name=name)


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
              attrs=["N: int >= 1", WITH_COMPLEX[:-1] + ", variant}"],
              shape=_add_n_shape, commutative=True, tags=[POINTWISE])


@tf_export("add_n", "math.add_n")
def add_n(inputs, name=None) -> Tensor:
    """`tf.math.add_n`: elementwise sum of a list of same-shaped tensors."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the "
                         "same dtype and shape")
    inputs = list(inputs)
    if len(inputs) == 1:
        return inputs[0] if name is None else array_core.identity(inputs[0], name=name)
    return apply_op(AddN, [inputs], name=name).outputs[0]


@tf_export("math.accumulate_n", v1=["math.accumulate_n", "accumulate_n"])
def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None) -> Tensor:
    """`tf.math.accumulate_n`: `add_n` after TF's checks (same dtype, shapes merging with
    `shape`, `tensor_dtype` equal to the inputs' dtype)."""
    def input_error():
        return ValueError("inputs must be a list of at least one Tensor with the same dtype "
                          "and shape")
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise input_error()
    inputs = [convert_to_tensor(x) for x in inputs]
    if not all(x.dtype is inputs[0].dtype for x in inputs):
        raise input_error()
    merged = TensorShape(None) if shape is None else as_shape(shape)
    for x in inputs:
        merged = merged.merge_with(x.shape)
    if tensor_dtype is not None and dtypes.as_dtype(tensor_dtype) is not inputs[0].dtype:
        raise TypeError(f"The `tensor_dtype` argument is {dtypes.as_dtype(tensor_dtype)}, "
                        f"but `input` is of type {inputs[0].dtype}. These must be equal. "
                        "Try casting the input to the desired type.")
    return add_n(inputs, name=name)


attach(globals(), arithmetic_docs.DOCS)

"""Unary elementwise math ops (Abs ... Erf, Ceil/Round/Rint, Expm1, Softsign, with TF's *Grad
ops), CheckNumerics and assert_all_finite, the math composites (`clip_by_value`,
`reduce_logsumexp`, `count_nonzero`, `polyval`, `zero_fraction`, `is_non_decreasing`, ...)
and the Python operator overloads (`x + y` is an AddV2 named "add", as TF names it).
Gradients are in math_grad.py.

The math family is split by dependency (each file imports only the ones above it):
`comparison` (comparisons, logical ops, shared shape rules) -> `cast` -> `arithmetic`
(binary arithmetic, Neg/Log/Reciprocal, Select, AddN, DivNoNan/MulNoNan, TruncateDiv/Mod)
-> `reduction` (Sum, Mean, Max, ..., ArgMax) and `linalg` (MatMul, BatchMatMulV2) -> this
module. Beside it, by concept: `math_trig` (Sin ... Atanh, Atan2) and `math_special` (Lgamma,
Digamma, Igamma, Betainc, Erfinv, Bessel, Xlogy, ...; gradients in math_special_grad.py).
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.core.tensor import OPERATORS, Tensor
from ndflow.ops import array_core, array_fill, math_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import (
    FLOAT,
    FLOAT_COMPLEX,
    WITH_COMPLEX,
    Add,
    AddV2,
    FloorMod,
    Mul,
    Pow,
    Sub,
    add,
    div_no_nan,
    floor_div,
    log,
    maximum,
    minimum,
    multiply,
    negative,
    select_v2,
    subtract,
    truediv,
)
from ndflow.ops.array_slicing import strided_slice
from ndflow.ops.cast import cast
from ndflow.ops.comparison import (
    Equal,
    Greater,
    GreaterEqual,
    Less,
    LessEqual,
    LogicalAnd,
    LogicalOr,
    NotEqual,
    composite_name,
    greater,
    greater_equal,
    is_finite,
    logical_not,
    logical_xor,
    not_equal,
    unchanged_shape,
)
from ndflow.ops.complex_ops import complex_abs
from ndflow.ops.linalg import matmul
from ndflow.ops.op_def import POINTWISE, op_def
from ndflow.ops.reduction import reduce_all, reduce_max, reduce_sum

_SIGNED = "T: {half, bfloat16, float, double, int8, int16, int32, int64}"
_SIGNED_COMPLEX = _SIGNED[:-1] + ", complex64, complex128}"


def _unary(name, attrs=FLOAT):
    return op_def(name, inputs=["x: T"], outputs=["y: T"], attrs=[attrs], shape=unchanged_shape,
                  tags=[POINTWISE])


def _grad_op(name, attrs=FLOAT):
    return op_def(name, inputs=["y: T", "dy: T"], outputs=["z: T"], attrs=[attrs],
                  shape=unchanged_shape, tags=[POINTWISE])


def _run(op, *inputs, name=None):
    return apply_op(op, list(inputs), name=name).outputs[0]


Abs = _unary("Abs", _SIGNED)
Sign = _unary("Sign", _SIGNED_COMPLEX)
Square = _unary("Square", WITH_COMPLEX)
Exp = _unary("Exp", FLOAT_COMPLEX)
Floor = _unary("Floor")
Ceil = _unary("Ceil")
Round = _unary("Round", _SIGNED)
Rint = _unary("Rint")
Expm1 = _unary("Expm1", FLOAT_COMPLEX)
Log1p = _unary("Log1p", FLOAT_COMPLEX)
Erf = _unary("Erf")
Sqrt = _unary("Sqrt", FLOAT_COMPLEX)
SqrtGrad = _grad_op("SqrtGrad", FLOAT_COMPLEX)
Rsqrt, RsqrtGrad = _unary("Rsqrt", FLOAT_COMPLEX), _grad_op("RsqrtGrad", FLOAT_COMPLEX)
Tanh, TanhGrad = _unary("Tanh", FLOAT_COMPLEX), _grad_op("TanhGrad", FLOAT_COMPLEX)
Sigmoid = _unary("Sigmoid", FLOAT_COMPLEX)
SigmoidGrad = _grad_op("SigmoidGrad", FLOAT_COMPLEX)
# Softsign is an nn op in TF (gen_nn_ops), declared here with the other elementwise ops.
Softsign = op_def("Softsign", inputs=["features: T"], outputs=["activations: T"],
                  attrs=[FLOAT], shape=unchanged_shape, tags=[POINTWISE])
SoftsignGrad = op_def("SoftsignGrad", inputs=["gradients: T", "features: T"],
                      outputs=["backprops: T"], attrs=[FLOAT], shape=unchanged_shape,
                      gradient_undefined=True, tags=[POINTWISE])


@tf_export("abs", "math.abs")
def abs(x, name=None) -> Tensor:  # noqa: A001 - TF's name
    """`tf.math.abs` (ComplexAbs, a real tensor, for a complex one)."""
    with composite_name(name, "Abs") as final:
        x = convert_to_tensor(x, name="x")
    if x.dtype.is_complex:
        return complex_abs(x, name=final)
    return _run(Abs, x, name=final)


@tf_export("math.sign", "sign")
def sign(x, name=None) -> Tensor:
    """`tf.math.sign`: -1, 0 or 1 (NaN stays NaN); x / |x| (0 at 0) for a complex x, composed
    as TensorFlow composes it (DivNoNan of ComplexAbs)."""
    with composite_name(name, "Sign") as final:
        x = convert_to_tensor(x, name="x")
    if x.dtype.is_complex:
        return div_no_nan(x, cast(complex_abs(x), x.dtype), name=name)
    return _run(Sign, x, name=final)


@tf_export("math.square", "square")
def square(x, name=None) -> Tensor:
    """`tf.math.square`: x * x."""
    return _run(Square, x, name=name)


@tf_export("math.sqrt", "sqrt")
def sqrt(x, name=None) -> Tensor:
    """`tf.math.sqrt`."""
    return _run(Sqrt, x, name=name)


@tf_export("math.rsqrt", v1=["math.rsqrt", "rsqrt"])
def rsqrt(x, name=None) -> Tensor:
    """`tf.math.rsqrt`: 1 / sqrt(x)."""
    return _run(Rsqrt, x, name=name)


@tf_export("exp", "math.exp")
def exp(x, name=None) -> Tensor:
    """`tf.math.exp`."""
    return _run(Exp, x, name=name)


@tf_export("math.floor", "floor")
def floor(x, name=None) -> Tensor:
    """`tf.math.floor`: the largest integer not greater than x, elementwise."""
    return _run(Floor, x, name=name)


@tf_export("math.ceil", v1=["ceil", "math.ceil"])
def ceil(x, name=None) -> Tensor:
    """`tf.math.ceil`: the smallest integer not less than x, elementwise."""
    return _run(Ceil, x, name=name)


@tf_export("math.round", "round")
def round(x, name=None) -> Tensor:  # noqa: A001 - TF's name
    """`tf.math.round`: to the nearest integer, halves to even (banker's rounding); an
    integer tensor is returned as it is, as TF does."""
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return _run(Round, x, name=name)


@tf_export("math.rint", v1=["math.rint", "rint"])
def rint(x, name=None) -> Tensor:
    """`tf.math.rint`: to the nearest integer, halves to even."""
    return _run(Rint, x, name=name)


@tf_export("math.expm1", v1=["math.expm1", "expm1"])
def expm1(x, name=None) -> Tensor:
    """`tf.math.expm1`: exp(x) - 1, accurate for small x."""
    return _run(Expm1, x, name=name)


@tf_export("math.softsign", "nn.softsign")
def softsign(features, name=None) -> Tensor:
    """`tf.nn.softsign`: features / (abs(features) + 1)."""
    return _run(Softsign, features, name=name)


def softsign_grad(gradients, features, name=None) -> Tensor:
    """Gradient op of Softsign: gradients / (1 + abs(features))**2."""
    return _run(SoftsignGrad, gradients, features, name=name)


@tf_export("math.log1p", v1=["log1p", "math.log1p"])
def log1p(x, name=None) -> Tensor:
    """`tf.math.log1p`: log(1 + x), accurate for small x."""
    return _run(Log1p, x, name=name)


@tf_export("math.tanh", "nn.tanh", "tanh")
def tanh(x, name=None) -> Tensor:
    """`tf.math.tanh`."""
    return _run(Tanh, x, name=name)


@tf_export("math.sigmoid", "nn.sigmoid", "sigmoid")
def sigmoid(x, name=None) -> Tensor:
    """`tf.math.sigmoid`: 1 / (1 + exp(-x))."""
    return _run(Sigmoid, x, name=name)


@tf_export("math.erf", v1=["erf", "math.erf"])
def erf(x, name=None) -> Tensor:
    """`tf.math.erf`: the Gauss error function."""
    return _run(Erf, x, name=name)


def sqrt_grad(y, dy, name=None) -> Tensor:
    """Gradient op of Sqrt: dy * 0.5 / y."""
    return _run(SqrtGrad, y, dy, name=name)


def rsqrt_grad(y, dy, name=None) -> Tensor:
    """Gradient op of Rsqrt: dy * -0.5 * y**3."""
    return _run(RsqrtGrad, y, dy, name=name)


def tanh_grad(y, dy, name=None) -> Tensor:
    """Gradient op of Tanh: dy * (1 - y**2)."""
    return _run(TanhGrad, y, dy, name=name)


def sigmoid_grad(y, dy, name=None) -> Tensor:
    """Gradient op of Sigmoid: dy * y * (1 - y)."""
    return _run(SigmoidGrad, y, dy, name=name)


# -- CheckNumerics -------------------------------------------------------------------------------

CheckNumerics = op_def("CheckNumerics", inputs=["tensor: T"], outputs=["output: T"],
                       attrs=[FLOAT, "message: string"], shape=unchanged_shape, stateful=True)


@tf_export("debugging.check_numerics", v1=["check_numerics", "debugging.check_numerics"])
def check_numerics(tensor, message, name=None) -> Tensor:
    """`tf.debugging.check_numerics`: raises InvalidArgumentError on NaN or Inf values."""
    if isinstance(message, bytes):
        message = message.decode()
    return apply_op(CheckNumerics, [tensor], {"message": message}, name=name).outputs[0]


@tf_export("debugging.assert_all_finite", v1=[])
def assert_all_finite(x, message, name=None) -> Tensor:
    """`tf.debugging.assert_all_finite`: x, after a CheckNumerics of it (a control input of
    the Identity returned in a graph, as TF builds it)."""
    with name_scope(name, "VerifyFinite"):
        x = convert_to_tensor(x, name="t")
        verify = check_numerics(x, message=message)
        with composite_name(None, "control_dependency") as final:
            pass
        with control_dependencies([verify]):
            return array_core.identity(x, name=final)


@tf_export(v1=["debugging.assert_all_finite", "verify_tensor_all_finite"])
def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None) -> Tensor:
    """`tf.compat.v1.verify_tensor_all_finite` (`t`/`msg`: TF1's names for `x`/`message`)."""
    x = deprecated_argument_lookup("x", x, "t", t)
    message = deprecated_argument_lookup("message", message, "msg", msg)
    return assert_all_finite(x, message, name)


# -- composites -------------------------------------------------------------------------------

@tf_export("clip_by_value")
def clip_by_value(t, clip_value_min, clip_value_max, name=None) -> Tensor:
    """`tf.clip_by_value`: min(max(t, lo), hi) as Minimum then Maximum, as TF builds it."""
    with composite_name(name, "clip_by_value") as final:
        t = convert_to_tensor(t, name="t") if not isinstance(t, Tensor) else t
        t_min = minimum(t, clip_value_max)
        # TF refuses bounds that would broadcast t to another shape
        t.shape.assert_is_compatible_with(t_min.shape)
    t_max = maximum(t_min, clip_value_min, name=final)
    t.shape.assert_is_compatible_with(t_max.shape)
    return t_max


@tf_export("math.scalar_mul", "scalar_mul")
def scalar_mul(scalar, x, name=None) -> Tensor:
    """`tf.math.scalar_mul`."""
    return multiply(scalar, x, name=name)


@tf_export("math.floordiv", v1=["floordiv", "math.floordiv"])
def floordiv(x, y, name=None) -> Tensor:
    """`tf.math.floordiv`: x // y (floor toward -inf, also for integers)."""
    return floor_div(x, y, name=name)


@tf_export("math.polyval")
def polyval(coeffs, x, name=None) -> Tensor:
    """`tf.math.polyval`: coeffs[0] * x**(n-1) + ... + coeffs[n-1] by Horner's rule."""
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    if not coeffs:
        return array_fill.zeros_like(convert_to_tensor(x, name="x"), name=name or "polyval")
    with name_scope(name, "polyval"):
        x = convert_to_tensor(x, name="x")
        coeffs = [convert_to_tensor(c, name=f"coeff_{i}") for i, c in enumerate(coeffs)]
        p = coeffs[0]
        for c in coeffs[1:]:
            p = c + p * x
        return p


@tf_export("math.zero_fraction", "nn.zero_fraction")
def zero_fraction(value, name=None) -> Tensor:
    """`tf.math.zero_fraction`: the fraction of zeros in `value`, as float32 (counted in
    int64; TF picks an int32 count under a cond for small tensors, with the same value)."""
    with name_scope(name, "zero_fraction"):
        value = convert_to_tensor(value, name="value")
        size = array_core.size(value, out_type=dtypes.int64)
        num_nonzero = count_nonzero(value, dtype=dtypes.int64)
        num_zero = subtract(size, num_nonzero)
        fraction = truediv(cast(num_zero, dtypes.float32), cast(size, dtypes.float32))
        return array_core.identity(fraction, name="fraction")


@tf_export("debugging.is_numeric_tensor", v1=["debugging.is_numeric_tensor",
                                               "is_numeric_tensor"])
def is_numeric_tensor(tensor) -> bool:
    """`tf.debugging.is_numeric_tensor`: a Tensor of a floating or integer dtype (a Python
    value is not a tensor: False)."""
    return isinstance(tensor, Tensor) and (tensor.dtype.is_floating or tensor.dtype.is_integer)


def _monotonic(x, compare, default, name) -> Tensor:
    """All of compare(x[i+1], x[i]) over the flattened x (True for fewer than 2 entries)."""
    with name_scope(name, default):
        x = convert_to_tensor(x, name="x")
        if not is_numeric_tensor(x):
            raise TypeError(f"Expected x to be numeric, instead found: {x}")
        flat = array_core.reshape(x, [-1])
        later = strided_slice(flat, [1], [0], end_mask=1)
        earlier = strided_slice(flat, [0], [-1])
        return reduce_all(compare(later, earlier))


@tf_export("math.is_non_decreasing",
           v1=["math.is_non_decreasing", "debugging.is_non_decreasing", "is_non_decreasing"])
def is_non_decreasing(x, name=None) -> Tensor:
    """`tf.math.is_non_decreasing`: x[i] <= x[i+1] throughout the flattened x."""
    return _monotonic(x, greater_equal, "is_non_decreasing", name)


@tf_export("math.is_strictly_increasing", v1=[
    "math.is_strictly_increasing", "debugging.is_strictly_increasing", "is_strictly_increasing"])
def is_strictly_increasing(x, name=None) -> Tensor:
    """`tf.math.is_strictly_increasing`: x[i] < x[i+1] throughout the flattened x."""
    return _monotonic(x, greater, "is_strictly_increasing", name)


@tf_export("math.reduce_logsumexp", "reduce_logsumexp", v1=[])
def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """`tf.math.reduce_logsumexp`: log(sum(exp(x))) computed stably."""
    with composite_name(name, "ReduceLogSumExp") as final:
        raw_max = reduce_max(input_tensor, axis, keepdims=True)
        finite = is_finite(raw_max)
        zeros = array_fill.zeros_like(raw_max)
        my_max = array_core.stop_gradient(select_v2(finite, raw_max, zeros))
        result = log(reduce_sum(exp(subtract(input_tensor, my_max)), axis, keepdims=keepdims))
        if not keepdims:
            my_max = array_core.reshape(my_max, array_core.shape(result))
    return add(result, my_max, name=final)


@tf_export("math.count_nonzero", v1=[])
def count_nonzero(input, axis=None, keepdims=False, dtype=dtypes.int64,  # noqa: A002
                  name=None) -> Tensor:
    """`tf.math.count_nonzero`."""
    with composite_name(name, "count_nonzero") as final:
        t = convert_to_tensor(input)
        # the dtype's zero (False, b"" for strings: non-empty strings count), as TF's
        nonzero = not_equal(t, array_fill.zeros([], dtype=t.dtype))
        counts = reduce_sum(cast(nonzero, dtypes.int64), axis, keepdims)
    return cast(counts, dtype, name=final)


@tf_export(v1=["math.reduce_logsumexp", "reduce_logsumexp"])
def reduce_logsumexp_v1(input_tensor, axis=None, keepdims=None, name=None,
                        reduction_indices=None, keep_dims=None) -> Tensor:
    """`tf.compat.v1.reduce_logsumexp` (`reduction_indices`, `keep_dims`: TF1's names)."""
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return reduce_logsumexp(input_tensor, axis, bool(keepdims), name)


@tf_export(v1=["count_nonzero", "math.count_nonzero"])
def count_nonzero_v1(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64,
                     name=None, reduction_indices=None, keep_dims=None,
                     input=None) -> Tensor:  # noqa: A002
    """`tf.compat.v1.count_nonzero` (TF1's `reduction_indices`, `keep_dims`, `input`)."""
    input_tensor = deprecated_argument_lookup("input", input, "input_tensor", input_tensor)
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return count_nonzero(input_tensor, axis, bool(keepdims), dtype, name)


# -- Python operator overloads (TF's op names for them) ---------------------------------------

def _overload(fn, op_name):
    return lambda x, y: fn(x, y, name=op_name)


def _binary_overload(op, op_name):
    # The non-tensor operand converts to the tensor's dtype inside apply_op (`x + 1`).
    return lambda x, y: apply_op(op, [x, y], name=op_name).outputs[0]


def _floordiv_overload(x, y):
    return floor_div(x, y, name="floordiv")


def _add_overload(x, y):
    """`x + y`: AddV2, or Add for strings (concatenation), as TF's math_ops.add."""
    op = Add if dtypes.string in (getattr(x, "dtype", None), getattr(y, "dtype", None)) \
        else AddV2
    return apply_op(op, [x, y], name="add").outputs[0]


OPERATORS.update(
    add=_add_overload,
    subtract=_binary_overload(Sub, "sub"),
    multiply=_binary_overload(Mul, "mul"),
    truediv=_overload(truediv, "truediv"),
    floordiv=_floordiv_overload,
    floormod=_binary_overload(FloorMod, "mod"),
    pow=_binary_overload(Pow, "pow"),
    matmul=_overload(matmul, "matmul"),
    logical_and=_binary_overload(LogicalAnd, "and"),
    logical_or=_binary_overload(LogicalOr, "or"),
    logical_xor=_overload(logical_xor, "xor"),
    less=_binary_overload(Less, None),
    less_equal=_binary_overload(LessEqual, None),
    greater=_binary_overload(Greater, None),
    greater_equal=_binary_overload(GreaterEqual, None),
    equal=_binary_overload(Equal, None),
    not_equal=_binary_overload(NotEqual, None),
    negative=lambda x: negative(x),
    abs=lambda x: abs(x),
    logical_not=lambda x: logical_not(x),
)


attach(globals(), math_docs.DOCS)

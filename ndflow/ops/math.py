"""Math ops: the public face of the math family, plus the unary elementwise ops.

The family is split by dependency (each file imports only the ones above it):
`comparison` (comparisons, logical ops, shared shape rules) -> `arithmetic` (Cast, binary
arithmetic, Select, AddN, Sum and broadcast-gradient reduction) -> `reduction`
(Mean/Max/Min/Prod/All/Any, ArgMax/ArgMin) and `linalg` (MatMul, BatchMatMulV2) -> this
module: unary ops (Abs ... Erf with TF's *Grad ops), CheckNumerics, `clip_by_value`, and
the Python operator overloads (`x + y` is an AddV2 named "add", as TF names it).
"""

from __future__ import annotations

import math as _pymath

from ndflow.core import dtypes
from ndflow.core.tensor import OPERATORS, Tensor
from ndflow.ops import array
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import (  # noqa: F401 - re-exported
    FLOAT,
    NUMERIC,
    Add,
    AddN,
    AddV2,
    BroadcastGradientArgs,
    Cast,
    FloorDiv,
    FloorMod,
    Log,
    Maximum,
    Minimum,
    Mul,
    Neg,
    Pow,
    RealDiv,
    Reciprocal,
    ReciprocalGrad,
    Select,
    SelectV2,
    SquaredDifference,
    Sub,
    Sum,
    add,
    add_n,
    binary_operands,
    broadcast_gradient_args,
    cast,
    divide,
    floor_div,
    floormod,
    log,
    maximum,
    minimum,
    multiply,
    negative,
    pow,
    real_div,
    reciprocal,
    reciprocal_grad,
    reduce_gradient_args,
    reduce_sum,
    reduce_to_shape,
    select,
    select_v2,
    squared_difference,
    subtract,
    to_double,
    to_float,
    to_int32,
    to_int64,
    truediv,
    where,
)
from ndflow.ops.comparison import (  # noqa: F401 - re-exported
    Equal,
    Greater,
    GreaterEqual,
    IsFinite,
    IsInf,
    IsNan,
    Less,
    LessEqual,
    LogicalAnd,
    LogicalNot,
    LogicalOr,
    NotEqual,
    broadcast_shape,
    composite_name,
    equal,
    greater,
    greater_equal,
    is_finite,
    is_inf,
    is_nan,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    not_equal,
    unchanged_shape,
)
from ndflow.ops.linalg import BatchMatMulV2, MatMul, batch_matmul, matmul  # noqa: F401
from ndflow.ops.op_def import op_def
from ndflow.ops.reduction import (  # noqa: F401 - re-exported
    All,
    Any,
    ArgMax,
    ArgMin,
    Max,
    Mean,
    Min,
    Prod,
    argmax,
    argmin,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
)

_SIGNED = "T: {half, bfloat16, float, double, int8, int16, int32, int64}"


def _unary(name, attrs=FLOAT, grad=None):
    return op_def(name, inputs=["x: T"], outputs=["y: T"], attrs=[attrs],
                  shape=unchanged_shape, grad=grad)


def _grad_op(name):
    return op_def(name, inputs=["y: T", "dy: T"], outputs=["z: T"], attrs=[FLOAT],
                  shape=unchanged_shape)


def _run(op, *inputs, name=None):
    return apply_op(op, list(inputs), name=name).outputs[0]


Abs = _unary("Abs", _SIGNED, lambda op, grad: [multiply(grad, sign(op.inputs[0]))])
Sign = _unary("Sign", _SIGNED, lambda op, grad: [array.zeros_like(op.inputs[0])])
Square = _unary("Square", NUMERIC,
                lambda op, grad: [multiply(grad, multiply(op.inputs[0], 2.0))])
Exp = _unary("Exp", grad=lambda op, grad: [multiply(grad, op.outputs[0])])
Log1p = _unary("Log1p", grad=lambda op, grad: [multiply(grad,
                                                        reciprocal(add(op.inputs[0], 1.0)))])
_TWO_OVER_ROOT_PI = 2.0 / _pymath.sqrt(_pymath.pi)
Erf = _unary("Erf", grad=lambda op, grad: [
    multiply(multiply(grad, _TWO_OVER_ROOT_PI), exp(negative(square(op.inputs[0]))))])

Sqrt, SqrtGrad = _unary("Sqrt"), _grad_op("SqrtGrad")
Rsqrt, RsqrtGrad = _unary("Rsqrt"), _grad_op("RsqrtGrad")
Tanh, TanhGrad = _unary("Tanh"), _grad_op("TanhGrad")
Sigmoid, SigmoidGrad = _unary("Sigmoid"), _grad_op("SigmoidGrad")
Sqrt.def_grad(lambda op, grad: [sqrt_grad(op.outputs[0], grad)])
Rsqrt.def_grad(lambda op, grad: [rsqrt_grad(op.outputs[0], grad)])
Tanh.def_grad(lambda op, grad: [tanh_grad(op.outputs[0], grad)])
Sigmoid.def_grad(lambda op, grad: [sigmoid_grad(op.outputs[0], grad)])


@SqrtGrad.def_grad
def _sqrt_grad_grad(op, grad):
    ga = real_div(grad, op.inputs[0])
    return [negative(multiply(ga, op.outputs[0])), multiply(ga, 0.5)]


@RsqrtGrad.def_grad
def _rsqrt_grad_grad(op, grad):
    a, b = op.inputs
    return [multiply(multiply(multiply(grad, -1.5), b), square(a)), rsqrt_grad(a, grad)]


@TanhGrad.def_grad
def _tanh_grad_grad(op, grad):
    a, b = op.inputs
    return [multiply(multiply(multiply(grad, -2.0), b), a), tanh_grad(a, grad)]


@SigmoidGrad.def_grad
def _sigmoid_grad_grad(op, grad):
    a, b = op.inputs
    gb = multiply(grad, b)
    return [subtract(gb, multiply(multiply(gb, 2.0), a)), sigmoid_grad(a, grad)]


def abs(x, name=None) -> Tensor:  # noqa: A001 - TF's name
    """`tf.math.abs`."""
    return _run(Abs, x, name=name)


def sign(x, name=None) -> Tensor:
    """`tf.math.sign`: -1, 0 or 1 (NaN stays NaN)."""
    return _run(Sign, x, name=name)


def square(x, name=None) -> Tensor:
    """`tf.math.square`: x * x."""
    return _run(Square, x, name=name)


def sqrt(x, name=None) -> Tensor:
    """`tf.math.sqrt`."""
    return _run(Sqrt, x, name=name)


def rsqrt(x, name=None) -> Tensor:
    """`tf.math.rsqrt`: 1 / sqrt(x)."""
    return _run(Rsqrt, x, name=name)


def exp(x, name=None) -> Tensor:
    """`tf.math.exp`."""
    return _run(Exp, x, name=name)


def log1p(x, name=None) -> Tensor:
    """`tf.math.log1p`: log(1 + x), accurate for small x."""
    return _run(Log1p, x, name=name)


def tanh(x, name=None) -> Tensor:
    """`tf.math.tanh`."""
    return _run(Tanh, x, name=name)


def sigmoid(x, name=None) -> Tensor:
    """`tf.math.sigmoid`: 1 / (1 + exp(-x))."""
    return _run(Sigmoid, x, name=name)


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


@CheckNumerics.def_grad
def _check_numerics_grad(op, grad):
    return [check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in "
                                 f"gradient. {op.get_attr('message')}")]


def check_numerics(tensor, message, name=None) -> Tensor:
    """`tf.debugging.check_numerics`: raises InvalidArgumentError on NaN or Inf values."""
    if isinstance(message, bytes):
        message = message.decode()
    return apply_op(CheckNumerics, [tensor], {"message": message}, name=name).outputs[0]


# -- composites -------------------------------------------------------------------------------

def clip_by_value(t, clip_value_min, clip_value_max, name=None) -> Tensor:
    """`tf.clip_by_value`: min(max(t, lo), hi) as Minimum then Maximum, as TF builds it."""
    with composite_name(name, "clip_by_value") as final:
        t = convert_to_tensor(t, name="t") if not isinstance(t, Tensor) else t
        t_min = minimum(t, clip_value_max)
        if not t.shape.is_compatible_with(t_min.shape) and t.shape.rank is not None \
                and t_min.shape.rank is not None and t.shape.rank != t_min.shape.rank:
            raise ValueError(f"Shapes {t.shape} and {t_min.shape} are incompatible")
    return maximum(t_min, clip_value_min, name=final)


def scalar_mul(scalar, x, name=None) -> Tensor:
    """`tf.math.scalar_mul`."""
    return multiply(scalar, x, name=name)


def floordiv(x, y, name=None) -> Tensor:
    """`tf.math.floordiv`: x // y (floor toward -inf, also for integers)."""
    return floor_div(x, y, name=name)


def mod(x, y, name=None) -> Tensor:
    """`tf.math.mod` (= floormod)."""
    return floormod(x, y, name=name)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """`tf.math.reduce_logsumexp`: log(sum(exp(x))) computed stably."""
    with composite_name(name, "ReduceLogSumExp") as final:
        raw_max = reduce_max(input_tensor, axis, keepdims=True)
        finite = is_finite(raw_max)
        my_max = array.stop_gradient(select_v2(finite, raw_max, array.zeros_like(raw_max)))
        result = log(reduce_sum(exp(subtract(input_tensor, my_max)), axis, keepdims=keepdims))
        if not keepdims:
            my_max = array.reshape(my_max, array.shape(result))
    return add(result, my_max, name=final)


def count_nonzero(input, axis=None, keepdims=False, dtype=dtypes.int64,  # noqa: A002
                  name=None) -> Tensor:
    """`tf.math.count_nonzero`."""
    with composite_name(name, "count_nonzero") as final:
        t = convert_to_tensor(input)
        nonzero = not_equal(t, convert_to_tensor(0, t.dtype) if not t.dtype.is_bool else False)
        counts = reduce_sum(cast(nonzero, dtypes.int64), axis, keepdims)
    return cast(counts, dtype, name=final)


# -- Python operator overloads (TF's op names for them) ---------------------------------------

def _overload(fn, op_name):
    return lambda x, y: fn(x, y, name=op_name)


def _binary_overload(op, op_name):
    # The non-tensor operand converts to the tensor's dtype inside apply_op (`x + 1`).
    return lambda x, y: apply_op(op, [x, y], name=op_name).outputs[0]


def _floordiv_overload(x, y):
    return floor_div(x, y, name="floordiv")


OPERATORS.update(
    add=_binary_overload(AddV2, "add"),
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

"""ATen kernels for elementwise math ops, Cast, Select, AddN, DivNoNan, CheckNumerics and the
loss-scale optimizers' finite check (`_AllFinite`).

Factories decide everything that depends on attrs and dtypes (integer vs float division,
NaN-propagating Sign, ...) once, so a call is one or two ATen calls. Results of our own
intermediate buffers may be updated in place (`q.floor_()`); inputs never are.
"""

from __future__ import annotations

import torch

from ndflow.core import narrow_dtypes
from ndflow.core.errors import InternalError, InvalidArgumentError
from ndflow.kernels import broadcast_layout, exact_sqrt, narrow_cast, tanh_numba
from ndflow.kernels import list_ops as tensor_lists
from ndflow.kernels.registry import kernel
from ndflow.kernels.select import select
from ndflow.ops import arithmetic as ar
from ndflow.ops import comparison as cmp
from ndflow.ops import math
from ndflow.ops import math_trig as trig
from ndflow.ops.cast import Cast

# the common binary ops: a short trailing broadcast in two steps (kernels/broadcast_layout.py)
_BINARY = {ar.AddV2: torch.add, ar.Add: torch.add, ar.Sub: torch.sub, ar.Mul: torch.mul,
           ar.Maximum: torch.maximum, ar.Minimum: torch.minimum}
_sub = broadcast_layout.binary(torch.sub)
_DIRECT = {
    ar.Neg: torch.neg, ar.Log: torch.log, ar.SelectV2: select,
    math.Abs: torch.abs, math.Square: torch.square,
    math.Rsqrt: torch.rsqrt, math.Exp: torch.exp, math.Floor: torch.floor, math.Log1p: torch.log1p,
    math.Sigmoid: torch.sigmoid, math.Erf: torch.erf,
    cmp.Less: torch.lt, cmp.LessEqual: torch.le,
    cmp.Greater: torch.gt, cmp.GreaterEqual: torch.ge, cmp.LogicalAnd: torch.logical_and,
    cmp.LogicalOr: torch.logical_or, cmp.LogicalNot: torch.logical_not,
    cmp.IsFinite: torch.isfinite, cmp.IsNan: torch.isnan, cmp.IsInf: torch.isinf,
    math.Ceil: torch.ceil, math.Rint: torch.round, math.Expm1: torch.expm1,  # round: halves to even
    trig.Sin: torch.sin, trig.Cos: torch.cos, trig.Tan: torch.tan, trig.Asin: torch.asin,
    trig.Acos: torch.acos, trig.Atan: torch.atan, trig.Atan2: torch.atan2,
    trig.Sinh: torch.sinh, trig.Cosh: torch.cosh, trig.Asinh: torch.asinh,
    trig.Acosh: torch.acosh, trig.Atanh: torch.atanh,
    math.TanhGrad: lambda y, dy: torch.ops.aten.tanh_backward(dy, y),
    math.SigmoidGrad: lambda y, dy: torch.ops.aten.sigmoid_backward(dy, y),
}


# ATen's transcendental loops vectorize over dense memory only: a sigmoid of a [8,16,16,16]
# channel slice (a Split of gates, as LSTM cells make) took 62 us, its copy and the sigmoid 11
_TRANSCENDENTAL = {ar.Log, math.Rsqrt, math.Exp, math.Log1p, math.Sigmoid, math.Erf,
                   math.Expm1, trig.Sin, trig.Cos, trig.Tan, trig.Asin, trig.Acos, trig.Atan,
                   trig.Sinh, trig.Cosh, trig.Asinh, trig.Acosh, trig.Atanh}


def _dense(x: torch.Tensor) -> bool:
    """Whether x's elements fill the memory they span (any order of the axes: a transpose or
    a channels-last tensor is dense, a slice of a wider axis is not)."""
    if x.is_contiguous():
        return True
    span = 1
    for size, stride in zip(x.shape, x.stride()):
        if size > 1:
            span += (size - 1) * abs(stride)
    return span == x.numel()


def dense_input(fn):
    """`fn` of x, made contiguous first where x is not dense (see _TRANSCENDENTAL)."""
    def run(x):
        return fn(x if _dense(x) else x.contiguous())
    return run


def _register_direct(op_def, fn):
    kernel(op_def)(lambda node: fn)


for _op, _fn in _DIRECT.items():
    _register_direct(_op, dense_input(_fn) if _op in _TRANSCENDENTAL else _fn)
for _op, _fn in _BINARY.items():
    kernel(_op)(broadcast_layout.binary_kernel(_fn))


@kernel(math.Tanh)
def _tanh(node):
    """float32 on the CPU as TF's Eigen computes it (kernels/tanh_numba.py, 6x ATen's speed)."""
    if node.device.type == "cpu" and node.input_dtypes[0].torch_dtype is torch.float32:
        return dense_input(tanh_numba.tanh_or_aten)
    return dense_input(torch.tanh)


@kernel(math.Sqrt)
def _sqrt(node):
    """TF's correctly rounded root (kernels/exact_sqrt.py): NumPy's on the CPU."""
    if node.device.type == "cpu" and node.input_dtypes[0].torch_dtype in (torch.float32,
                                                                          torch.float64):
        return exact_sqrt.numpy_sqrt
    return torch.sqrt


def _equality(fn, mismatch: bool):
    """Equal/NotEqual: with incompatible_shape_error=False, inputs whose shapes do not
    broadcast give one scalar, `mismatch` (False for Equal, True for NotEqual), as TF."""
    def factory(node):
        if node.attrs.get("incompatible_shape_error", True):
            return fn

        def compare(x, y):
            try:
                torch.broadcast_shapes(x.shape, y.shape)
            except RuntimeError:
                return torch.tensor(mismatch, device=x.device)
            return fn(x, y)
        return compare
    return factory


kernel(cmp.Equal)(_equality(torch.eq, False))
kernel(cmp.NotEqual)(_equality(torch.ne, True))


def _is_int(node) -> bool:
    return node.input_dtypes[0].is_integer


@kernel(ar.Pow)
def _pow(node):
    if not _is_int(node):
        return torch.pow

    def integer_pow(x, y):
        if bool((y < 0).any()):  # ATen would give 0 (or 1 / x rounded); TF refuses
            raise InvalidArgumentError(None, None, "Integers to negative integer powers are "
                                       "not allowed")
        return torch.pow(x, y)
    return integer_pow


def _checked_int_division(fn, error=InvalidArgumentError, message="Integer division by zero"):
    def divide(x, y):
        try:
            return fn(x, y)
        except RuntimeError as e:
            if "ZeroDivisionError" in str(e):
                raise error(None, None, message) from None
            raise
    return divide


@kernel(ar.RealDiv)
def _real_div(node):
    if _is_int(node):
        return _checked_int_division(lambda x, y: torch.div(x, y, rounding_mode="trunc"))
    return broadcast_layout.binary_kernel(torch.div)(node)


@kernel(ar.FloorDiv)
def _floor_div(node):
    if _is_int(node):
        return _checked_int_division(torch.floor_divide)
    return lambda x, y: torch.div(x, y).floor_()   # TF: floor(x / y) for floats


@kernel(ar.FloorMod)
def _floor_mod(node):
    if _is_int(node):
        return _checked_int_division(torch.remainder)
    return torch.remainder


def _checked_truncating(fn):
    # TensorFlow's CPU kernels fail integer TruncateDiv/TruncateMod by zero this way.
    return _checked_int_division(fn, InternalError, "Unexpected error in binary operator "
                                                    "(only integer div and mod should have errors)")


@kernel(ar.TruncateDiv)
def _truncate_div(node):
    if _is_int(node):
        return _checked_truncating(lambda x, y: torch.div(x, y, rounding_mode="trunc"))
    return lambda x, y: torch.div(x, y).trunc_()


@kernel(ar.TruncateMod)
def _truncate_mod(node):
    return _checked_truncating(torch.fmod) if _is_int(node) else torch.fmod


@kernel(math.Round)
def _round(node):
    return torch.clone if _is_int(node) else torch.round   # halves to even, as TF


@kernel(math.Softsign)
def _softsign(node):
    return lambda x: torch.abs(x).add_(1).reciprocal_().mul_(x)


@kernel(math.SoftsignGrad)
def _softsign_grad(node):
    return lambda g, x: torch.abs(x).add_(1).square_().reciprocal_().mul_(g)


@kernel(ar.SquaredDifference)
def _squared_difference(node):
    if node.input_dtypes[0].is_complex:  # TF: conj(x - y) (x - y)
        return lambda x, y: torch.abs(torch.sub(x, y)).square_().to(x.dtype)

    def squared_difference(x, y):
        d = _sub(x, y)
        return d.mul_(d)
    return squared_difference


@kernel(ar.Reciprocal)
def _reciprocal(node):
    if _is_int(node):
        return lambda x: torch.div(torch.ones_like(x), x, rounding_mode="trunc")
    return torch.reciprocal


@kernel(ar.ReciprocalGrad)
def _reciprocal_grad(node):
    if node.input_dtypes[0].is_complex:  # TF: -dy * conj(y * y)
        return lambda y, dy: torch.mul(dy, torch.conj_physical(y * y)).neg_()
    return lambda y, dy: torch.mul(dy, y).mul_(y).neg_()


@kernel(math.SqrtGrad)
def _sqrt_grad(node):
    if node.input_dtypes[0].is_complex:  # TF: dy * 0.5 / conj(y)
        return lambda y, dy: torch.div(dy, torch.conj_physical(y)).mul_(0.5)
    return lambda y, dy: torch.div(dy, y).mul_(0.5)


@kernel(math.RsqrtGrad)
def _rsqrt_grad(node):
    if node.input_dtypes[0].is_complex:  # TF: -0.5 * dy * conj(y)^3
        return lambda y, dy: torch.pow(torch.conj_physical(y), 3).mul_(dy).mul_(-0.5)
    return lambda y, dy: torch.pow(y, 3).mul_(dy).mul_(-0.5)


@kernel(math.Sign)
def _sign(node):
    if _is_int(node):
        return torch.sign
    if node.input_dtypes[0].is_complex:
        return torch.sgn  # x / |x|, and 0 at 0
    return lambda x: torch.where(torch.isnan(x), x, torch.sign(x))  # TF: sign(NaN) = NaN


@kernel(Cast)
def _cast(node):
    src_dt, dst_dt = node.input_dtypes[0], node.attrs["DstT"]
    if narrow_dtypes.is_extra(src_dt) or narrow_dtypes.is_extra(dst_dt) or \
            not narrow_dtypes.cast_supported(src_dt, dst_dt) or src_dt is dst_dt:
        return narrow_cast.cast_kernel(src_dt, dst_dt)
    dst = node.attrs["DstT"].torch_dtype
    if node.input_dtypes[0].is_complex and not node.attrs["DstT"].is_complex:
        if node.attrs["DstT"].is_bool:
            return lambda x: x != 0
        return lambda x: torch.real(x).to(dst)  # TF drops the imaginary part
    return lambda x: x.to(dst)


@kernel(ar.Select)
def _select(node):
    def select_rows(c, x, y):
        if c.dim() == 1 and x.dim() > 1:  # a vector condition picks rows
            c = c.reshape((-1,) + (1,) * (x.dim() - 1))
        return select(c, x, y)
    return select_rows


@kernel(ar.AddN)
def _add_n(node):
    if tensor_lists.is_variant(node):  # gradients of TensorLists add elementwise
        return tensor_lists.add_lists
    def add_n(*xs):
        out = torch.add(xs[0], xs[1]) if len(xs) > 1 else xs[0].clone()
        for x in xs[2:]:
            out.add_(x)  # `out` is our own fresh buffer, not an input
        return out
    return add_n


@kernel(math.CheckNumerics)
def _check_numerics(node):
    message = node.attrs["message"]

    def check_numerics(x):
        if not bool(torch.isfinite(x).all()):
            nan, inf = bool(torch.isnan(x).any()), bool(torch.isinf(x).any())
            what = "Inf and NaN" if nan and inf else "NaN" if nan else "Inf"
            raise InvalidArgumentError(None, None, f"{message} : Tensor had {what} values")
        return x
    return check_numerics


@kernel(ar.MulNoNan)
def _mul_no_nan(node):
    def mul_no_nan(x, y):
        return torch.where(y == 0, torch.zeros((), dtype=x.dtype, device=x.device), x * y)
    return mul_no_nan


@kernel(ar.DivNoNan)
def _div_no_nan(node):
    def div_no_nan(x, y):
        return torch.where(y == 0, torch.zeros((), dtype=x.dtype, device=x.device), x / y)
    return div_no_nan


_WIDE_SUM = {torch.float16: torch.float32, torch.bfloat16: torch.float32}


def _all_finite(x: torch.Tensor) -> torch.Tensor:
    """On the CPU one sum usually answers: a finite sum has no inf or NaN term. Only when it
    is not (a non-finite element, or finite ones overflowing) does the exact form run, and it
    is the only form on accelerators (no host sync): x * 0 is 0 exactly where x is finite, NaN
    elsewhere, so its sum is 0 iff all are finite (1.6M floats: 0.09 / 0.37 ms against 2.2 ms
    for isfinite().all())."""
    if x.numel() == 0:
        return torch.ones((), dtype=torch.bool, device=x.device)
    if x.device.type == "cpu" and bool(torch.isfinite(x.sum(dtype=_WIDE_SUM.get(x.dtype)))):
        return torch.ones((), dtype=torch.bool)
    return (x * 0).sum(dtype=_WIDE_SUM.get(x.dtype)) == 0


@kernel(cmp.AllFinite)
def _all_finite_kernel(node):
    return _all_finite



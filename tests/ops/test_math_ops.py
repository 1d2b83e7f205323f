"""Elementwise math ops, table-driven (see harness.py); plus build-time errors, CheckNumerics,
operator-overload naming and dynamic-shape broadcast gradients."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow import math as tfm
from ndflow.autodiff.gradients import gradients
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.kernels import math as math_kernels
from ndflow.ops import arithmetic, array_fill, math
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase, run_plan

rng = np.random.default_rng(42)


def _r(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape)


def _pos(*shape):
    return rng.uniform(0.5, 2.0, shape)


def _apart(*shape):
    """Values on a grid 1/8 apart: comparisons agree in every float precision."""
    return rng.integers(-8, 9, shape) / 8.0


def _quiet(fn):
    """A reference evaluated without NumPy's warnings (domain edges give NaN/inf, as in TF)."""
    def ref(*args):
        with np.errstate(all="ignore"):
            return fn(*args)
    return ref


_I32 = np.int32
_erf = np.vectorize(lambda v: __import__("math").erf(v))
_ints_a = np.array([[-7, -3, 0, 5], [7, 9, -1, 4]], _I32)
_ints_b = np.array([[2, -2, 3, 3], [-3, 4, 5, 2]], _I32)
_floor_x = np.array([[-7.5, -3.25, 0.5, 5.75], [7.25, 9.5, -1.25, 4.5]])
_floor_y = np.array([[2.0, -2.0, 3.0, 3.0], [-3.0, 4.0, 5.0, 2.0]])
_bools_a = np.array([[True, False, True], [False, False, True]])
_bools_b = np.array([True, False, False])
_EXACT = dict(dtypes=(tf.float32,), low_precision=False, grad=False)
_NO_LOW = dict(low_precision=False)

CASES = [
    # -- binary arithmetic (broadcasting, both orders) -----------------------------------------
    OpCase("add", lambda x, y: tfm.add(x, y), [_r(3, 4), _r(3, 4)], np.add),
    OpCase("add_broadcast", lambda x, y: tfm.add(x, y), [_r(3, 4), _r(4)], np.add),
    OpCase("add_broadcast_both", lambda x, y: x + y, [_r(3, 1), _r(1, 4)], np.add),
    OpCase("add_scalar", lambda x, y: tfm.add(x, y), [_r(), _r(2, 3)], np.add),
    OpCase("sub", lambda x, y: tfm.subtract(x, y), [_r(2, 3, 4), _r(3, 1)], np.subtract),
    OpCase("mul", lambda x, y: tfm.multiply(x, y), [_r(3, 4), _r(4)], np.multiply),
    OpCase("mul_overload", lambda x, y: x * y, [_r(2, 1, 3), _r(4, 1)], np.multiply),
    OpCase("realdiv", lambda x, y: tfm.divide(x, y), [_r(3, 4), _pos(4)], np.divide,
           rtol=1e-5, atol=1e-5),
    OpCase("truediv_overload", lambda x, y: x / y, [_r(3, 4), _pos(3, 1)], np.divide),
    OpCase("floordiv_float", lambda x, y: tfm.floordiv(x, y), [_floor_x, _floor_y],
           lambda x, y: np.floor(x / y), **_NO_LOW, grad=False),
    OpCase("floormod_float", lambda x, y: tfm.floormod(x, y), [_floor_x, _floor_y], np.mod,
           **_NO_LOW),
    OpCase("pow", lambda x, y: tfm.pow(x, y), [_pos(3, 4), _r(4)], np.power, rtol=1e-4,
           atol=1e-5),
    OpCase("pow_negative_base", lambda x, y: x ** y, [_r(2, 3), np.full((2, 3), 2.0)],
           np.power, grad=(0,)),
    OpCase("maximum", lambda x, y: tfm.maximum(x, y), [_r(3, 4), _r(4)], np.maximum),
    OpCase("minimum", lambda x, y: tfm.minimum(x, y), [_r(3, 4), _r(3, 1)], np.minimum),
    OpCase("squared_difference", lambda x, y: tfm.squared_difference(x, y),
           [_r(3, 4), _r(4)], lambda x, y: (x - y) ** 2),
    OpCase("add_n", lambda x, y, z: tfm.add_n([x, y, z]), [_r(2, 3), _r(2, 3), _r(2, 3)],
           lambda x, y, z: x + y + z),
    OpCase("multiply_no_nan", tf.math.multiply_no_nan,
           [_r(3, 4, lo=-2, hi=2), _r(4, lo=-2, hi=2)], np.multiply),
    OpCase("multiply_no_nan_zero_y", tf.math.multiply_no_nan,
           [np.array([np.inf, np.nan, 1.0, np.inf]), np.array([0.0, 0.0, 2.0, 1.0])],
           lambda x, y: np.array([0.0, 0.0, 2.0, np.inf]), grad=False),
    OpCase("reciprocal_no_nan", tf.math.reciprocal_no_nan,
           [np.array([2.0, 0.5, 0.0, 1.0, -4.0])],
           lambda x: np.array([0.5, 2.0, 0.0, 1.0, -0.25]), grad=False),
    OpCase("reciprocal_no_nan_grad", tf.math.reciprocal_no_nan, [_pos(3, 4)],
           np.reciprocal),
    OpCase("div_v1_float", tf.compat.v1.div, [_r(3, 4), _pos(4)], np.divide),
    OpCase("div_v1_int_floors", tf.compat.v1.div, [_ints_a, _ints_b], np.floor_divide,
           **_EXACT),
    OpCase("polyval", lambda c, x: tf.math.polyval([c, -c, c], x), [_r(4), _r(3, 4)],
           lambda c, x: (c * x - c) * x + c),
    OpCase("polyval_python_coeffs", lambda x: tf.math.polyval([2.0, -1.0, 0.5], x), [_r(3, 4)],
           lambda x: 2 * x * x - x + 0.5, dtypes=(tf.float32,), low_precision=False,
           grad=False),  # TF converts Python coefficients to float32 whatever x is
    OpCase("polyval_no_coeffs", lambda x: tf.math.polyval([], x), [_r(2, 3)], np.zeros_like),
    OpCase("zero_fraction", tf.math.zero_fraction,
           [np.array([[0.0, 1.5, 0.0], [-2.0, 0.0, 0.0]])], lambda x: np.float64(4 / 6),
           grad=False),
    OpCase("zero_fraction_int", tf.nn.zero_fraction, [_ints_a], lambda x: np.float64(1 / 8),
           **_EXACT),
    OpCase("is_non_decreasing", lambda x: [tf.math.is_non_decreasing(x),
                                           tf.math.is_strictly_increasing(x)],
           [np.array([[-1.0, 0.5], [0.5, 2.0]])], lambda x: [np.bool_(True), np.bool_(False)],
           grad=False),
    OpCase("is_strictly_increasing", lambda x: [tf.math.is_non_decreasing(x),
                                                tf.math.is_strictly_increasing(x)],
           [np.array([-1.0, 0.5, 0.75, 2.0])], lambda x: [np.bool_(True), np.bool_(True)],
           grad=False),
    OpCase("is_non_decreasing_no", lambda x: tf.math.is_non_decreasing(x),
           [np.array([3, 1, 2], _I32)], lambda x: np.bool_(False), **_EXACT),
    OpCase("is_non_decreasing_single_entry", lambda x: tf.math.is_strictly_increasing(x),
           [np.array([[4.0]])], lambda x: np.bool_(True), grad=False),
    OpCase("accumulate_n", lambda x, y: tf.math.accumulate_n([x, y, x], shape=[2, 3]),
           [_r(2, 3), _r(2, 3)], lambda x, y: 2 * x + y),
    OpCase("real_imag_angle_conj_of_real_tensors",
           lambda x: [tf.math.real(x), tf.math.imag(x), tf.math.angle(x), tf.math.conj(x)],
           [np.array([[-1.5, 0.25, 2.0], [0.5, -0.125, 3.0]])],
           lambda x: [x, np.zeros_like(x), np.where(x < 0, np.pi, 0.0), x],
           rtol=1e-6),
    OpCase("conj_int", tf.math.conj, [_ints_a], lambda x: x, **_EXACT),
    # -- integer arithmetic: TF's floor semantics -------------------------------------------
    OpCase("floordiv_int", lambda x, y: x // y, [_ints_a, _ints_b], np.floor_divide, **_EXACT),
    OpCase("floormod_int", lambda x, y: x % y, [_ints_a, _ints_b], np.mod, **_EXACT),
    OpCase("truediv_int", lambda x, y: x / y, [_ints_a, _ints_b], np.true_divide, **_EXACT),
    OpCase("mul_int_scalar", lambda x: x * 3 - 1, [_ints_a], lambda x: x * 3 - 1, **_EXACT),
    OpCase("pow_int", lambda x: tfm.pow(x, 2), [_ints_a], lambda x: x ** 2, **_EXACT),
    OpCase("abs_int", lambda x: abs(x), [_ints_a], np.abs, **_EXACT),
    OpCase("sign_int", lambda x: tfm.sign(x), [_ints_a], np.sign, **_EXACT),
    OpCase("neg_int", lambda x: -x, [_ints_a], np.negative, **_EXACT),
    # -- unary ---------------------------------------------------------------------------------
    OpCase("neg", lambda x: -x, [_r(3, 4)], np.negative),
    OpCase("abs", lambda x: tfm.abs(x), [_r(3, 4)], np.abs),
    OpCase("sign", lambda x: tfm.sign(x), [np.array([-2.0, -0.5, 0.0, 0.5, np.nan])], np.sign,
           grad=False),
    OpCase("sign_grad", lambda x: tfm.sign(x), [_r(3, 4)], np.sign),
    OpCase("square", lambda x: tfm.square(x), [_r(3, 4)], np.square),
    OpCase("sqrt", lambda x: tfm.sqrt(x), [_pos(3, 4)], np.sqrt),
    OpCase("rsqrt", lambda x: tfm.rsqrt(x), [_pos(3, 4)], lambda x: 1 / np.sqrt(x)),
    OpCase("exp", lambda x: tfm.exp(x), [_r(3, 4)], np.exp),
    OpCase("floor", tf.floor, [np.array([[-2.5, -1.3, -0.2, 0.3], [0.4, 1.7, 2.2, 3.9]])],
           np.floor),
    OpCase("log", lambda x: tfm.log(x), [_pos(3, 4)], np.log),
    OpCase("log1p", lambda x: tfm.log1p(x), [_r(3, 4, lo=-0.5)], np.log1p),
    OpCase("reciprocal", lambda x: tfm.reciprocal(x), [_pos(3, 4)], np.reciprocal),
    OpCase("tanh", lambda x: tfm.tanh(x), [_r(3, 4, lo=-3, hi=3)], np.tanh),
    OpCase("sigmoid", lambda x: tfm.sigmoid(x), [_r(3, 4, lo=-4, hi=4)],
           lambda x: 1 / (1 + np.exp(-x))),
    OpCase("erf", lambda x: tfm.erf(x), [_r(3, 4, lo=-2, hi=2)], _erf),
    OpCase("ceil", tf.math.ceil, [np.array([[-2.5, -1.3, -0.2, 0.3], [0.4, 1.7, 2.2, 3.9]])],
           np.ceil),
    OpCase("round_halves_to_even", tf.math.round,
           [np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6])], np.round, grad=False),
    OpCase("round", tf.round, [_r(3, 4, lo=-3, hi=3)], np.round),
    OpCase("round_int_is_identity", tf.math.round, [_ints_a], lambda x: x, **_EXACT),
    OpCase("rint", tf.math.rint, [np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6])], np.rint,
           grad=False),
    OpCase("expm1", tf.math.expm1, [_r(3, 4, lo=-2, hi=2)], np.expm1),
    OpCase("expm1_tiny", tf.math.expm1, [np.array([1e-12, -3e-10, 2e-7])], np.expm1,
           dtypes=(tf.float64,), low_precision=False, rtol=1e-12, atol=0.0),
    OpCase("softsign", tf.nn.softsign, [_r(3, 4, lo=-3, hi=3)], lambda x: x / (1 + abs(x))),
    OpCase("softsign_grad_op", math.softsign_grad, [_r(3, 4), _r(3, 4, lo=-3, hi=3)],
           lambda g, x: g / (1 + abs(x)) ** 2, grad=False),
    # -- trigonometric and hyperbolic ----------------------------------------------------------
    OpCase("sin", tf.sin, [_r(3, 4, lo=-4, hi=4)], np.sin),
    OpCase("cos", tf.math.cos, [_r(3, 4, lo=-4, hi=4)], np.cos),
    OpCase("tan", tf.math.tan, [_r(3, 4, lo=-1.2, hi=1.2)], np.tan, rtol=1e-4),
    OpCase("asin", tf.math.asin, [_r(3, 4, lo=-0.9, hi=0.9)], np.arcsin),
    OpCase("acos", tf.math.acos, [_r(3, 4, lo=-0.9, hi=0.9)], np.arccos),
    OpCase("asin_acos_domain_edges", lambda x: [tf.asin(x), tf.acos(x)],
           [np.array([-2.0, -1.0, 0.0, 1.0, 2.0, np.nan])],
           _quiet(lambda x: [np.arcsin(x), np.arccos(x)]), grad=False),
    OpCase("atan", tf.math.atan, [_r(3, 4, lo=-4, hi=4)], np.arctan),
    OpCase("atan2_broadcast", tf.math.atan2, [_r(3, 4), _r(3, 1)], np.arctan2),
    OpCase("atan2_signed_zeros_and_axes",
           tf.atan2, [np.array([0.0, 0.0, -0.0, 1.0, 0.0, -1.0]),
                      np.array([0.0, -1.0, -1.0, 0.0, -0.0, 0.0])], np.arctan2, grad=False),
    OpCase("sinh", tf.math.sinh, [_r(3, 4, lo=-3, hi=3)], np.sinh),
    OpCase("cosh", tf.math.cosh, [_r(3, 4, lo=-3, hi=3)], np.cosh),
    OpCase("asinh", tf.math.asinh, [_r(3, 4, lo=-4, hi=4)], np.arcsinh),
    OpCase("acosh", tf.math.acosh, [_r(3, 4, lo=1.2, hi=4)], np.arccosh),
    OpCase("atanh", tf.math.atanh, [_r(3, 4, lo=-0.9, hi=0.9)], np.arctanh),
    OpCase("acosh_atanh_domain_edges", lambda x: [tf.acosh(x), tf.atanh(x)],
           [np.array([-2.0, -1.0, 0.5, 1.0, 2.0, np.inf])],
           _quiet(lambda x: [np.arccosh(x), np.arctanh(x)]), grad=False),
    # -- truncating division (C semantics) -------------------------------------------------------
    OpCase("truncatediv_int", tf.truncatediv, [_ints_a, _ints_b],
           lambda x, y: np.trunc(x / y).astype(_I32), **_EXACT),
    OpCase("truncatemod_int", tf.truncatemod, [_ints_a, _ints_b], np.fmod, **_EXACT),
    OpCase("truncatediv_float", tf.truncatediv, [_floor_x, _floor_y],
           lambda x, y: np.trunc(x / y), **_NO_LOW),
    OpCase("truncatemod_float", tf.truncatemod, [_floor_x, _floor_y], np.fmod, **_NO_LOW,
           grad=False),
    # -- gradient ops (their own gradients are TF's second-order rules) ----------------------
    OpCase("tanh_grad", lambda y, dy: math.tanh_grad(y, dy), [_r(3, 4), _r(3, 4)],
           lambda y, dy: dy * (1 - y * y)),
    OpCase("sigmoid_grad", lambda y, dy: math.sigmoid_grad(y, dy), [_r(3, 4), _r(3, 4)],
           lambda y, dy: dy * y * (1 - y)),
    OpCase("sqrt_grad", lambda y, dy: math.sqrt_grad(y, dy), [_pos(3, 4), _r(3, 4)],
           lambda y, dy: dy * 0.5 / y),
    OpCase("rsqrt_grad", lambda y, dy: math.rsqrt_grad(y, dy), [_pos(3, 4), _r(3, 4)],
           lambda y, dy: dy * -0.5 * y ** 3),
    OpCase("reciprocal_grad", lambda y, dy: arithmetic.reciprocal_grad(y, dy),
           [_pos(3, 4), _r(3, 4)],
           lambda y, dy: -dy * y * y),
    # -- cast ---------------------------------------------------------------------------------
    OpCase("cast_to_float64", lambda x: tf.cast(x, tf.float64), [_r(3, 4)], lambda x: x),
    OpCase("cast_to_int32", lambda x: tf.cast(x, tf.int32), [_r(3, 4, lo=-5, hi=5)],
           lambda x: np.trunc(x).astype(np.int32), low_precision=False, grad=False),
    OpCase("cast_int_to_float", lambda x: tf.cast(x, tf.float32), [_ints_a],
           lambda x: x.astype(np.float64), **_EXACT),
    OpCase("cast_to_bool", lambda x: tf.cast(x, tf.bool), [np.array([0, 2, -1], _I32)],
           lambda x: x != 0, **_EXACT),
    # -- comparisons and logical ops ------------------------------------------------------------
    OpCase("equal", lambda x, y: tfm.equal(x, y), [_apart(3, 4), _apart(4)], np.equal,
           grad=False),
    OpCase("not_equal", lambda x, y: tfm.not_equal(x, y), [_apart(3, 4), _apart(3, 1)],
           np.not_equal, grad=False),
    OpCase("less", lambda x, y: x < y, [_apart(3, 4), _apart(4)], np.less, grad=False),
    OpCase("less_equal", lambda x, y: x <= y, [_apart(3, 4), _apart(4)], np.less_equal,
           grad=False),
    OpCase("greater", lambda x, y: tfm.greater(x, y), [_apart(3, 4), _apart(4)], np.greater,
           grad=False),
    OpCase("greater_equal", lambda x, y: x >= y, [_apart(3, 4), _apart(4)],
           np.greater_equal, grad=False),
    OpCase("less_int", lambda x, y: x < y, [_ints_a, _ints_b], np.less, **_EXACT),
    OpCase("equal_int_scalar", lambda x: tfm.equal(x, 7), [_ints_a], lambda x: x == 7,
           **_EXACT),
    OpCase("equal_bool", lambda x, y: tfm.equal(x, y), [_bools_a, _bools_b], np.equal,
           **_EXACT),
    OpCase("logical_and", lambda x, y: x & y, [_bools_a, _bools_b], np.logical_and, **_EXACT),
    OpCase("logical_or", lambda x, y: x | y, [_bools_a, _bools_b], np.logical_or, **_EXACT),
    OpCase("logical_xor", lambda x, y: x ^ y, [_bools_a, _bools_b], np.logical_xor, **_EXACT),
    OpCase("logical_not", lambda x: ~x, [_bools_a], np.logical_not, **_EXACT),
    OpCase("is_finite", lambda x: tfm.is_finite(x),
           [np.array([1.0, np.inf, -np.inf, np.nan, 0.0])], np.isfinite, grad=False),
    OpCase("is_nan", lambda x: tfm.is_nan(x), [np.array([1.0, np.inf, np.nan])], np.isnan,
           grad=False),
    OpCase("is_inf", lambda x: tfm.is_inf(x), [np.array([1.0, -np.inf, np.nan])], np.isinf,
           grad=False),
    # -- selection and clipping --------------------------------------------------------------
    OpCase("where_v2", lambda c, x, y: tf.where(c, x, y), [_bools_a, _r(2, 3), _r(3)], np.where),
    OpCase("where_v2_scalar", lambda c, x: tf.where(c, x, 0.0), [_bools_b, _r(2, 3)],
           lambda c, x: np.where(c, x, 0.0)),
    OpCase("select_v1_rows", lambda c, x, y: arithmetic.select(c, x, y),
           [np.array([True, False]), _r(2, 3), _r(2, 3)],
           lambda c, x, y: np.where(c[:, None], x, y)),
    OpCase("select_v1_same_shape", lambda c, x, y: arithmetic.select(c, x, y),
           [_bools_a, _r(2, 3), _r(2, 3)], np.where),
    OpCase("clip_by_value", lambda x: tf.clip_by_value(x, -0.5, 0.5),
           [_r(3, 4)], lambda x: np.clip(x, -0.5, 0.5)),
    OpCase("clip_by_value_tensors", lambda x, lo, hi: tf.clip_by_value(x, lo, hi),
           [_r(3, 4), _r(4, lo=-1, hi=-0.3), _r(4, lo=0.3, hi=1)], np.clip),
    OpCase("check_numerics", lambda x: math.check_numerics(x, "msg"), [_r(3, 4)], lambda x: x),
]



# -- plain tests ---------------------------------------------------------------------------------

def _graph():
    return Graph()


def test_incompatible_shapes_graph_error_names_op_and_shapes():
    with _graph().as_default():
        a, b = placeholder(tf.float32, [2, 3]), placeholder(tf.float32, [4])
        with pytest.raises(ValueError) as e:
            tfm.add(a, b)
    msg = str(e.value)
    assert "Dimensions must be equal, but are 3 and 4" in msg
    assert "{{node Add}} = AddV2" in msg and "[2,3], [4]" in msg


def test_incompatible_shapes_eager_error():
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes: \[2,3\] vs. \[4\]"):
        tfm.multiply(tf.constant(np.ones((2, 3), np.float32)), tf.constant([1.0, 2, 3, 4]))


def test_dtype_mismatch_type_error():
    with _graph().as_default():
        x = placeholder(tf.float32, [3])
        y = placeholder(tf.int32, [3])
        with pytest.raises(TypeError) as e:
            tfm.add(x, y)
    assert str(e.value) == ("Input 'y' of 'AddV2' Op has type int32 that does not match type "
                            "float32 of argument 'x'.")


def test_matmul_inner_dims_error():
    with _graph().as_default():
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            tf.matmul(placeholder(tf.float32, [2, 3]), placeholder(tf.float32, [4, 2]))


def test_check_numerics_raises_with_op_name():
    x = tf.constant([1.0, np.nan, 2.0])
    with pytest.raises(InvalidArgumentError) as e:
        math.check_numerics(x, "boom")
    assert "boom : Tensor had NaN values" in str(e.value)
    assert "CheckNumerics" in str(e.value)
    with pytest.raises(InvalidArgumentError, match="boom : Tensor had Inf values"):
        math.check_numerics(tf.constant([1.0, np.inf]), "boom")
    with pytest.raises(InvalidArgumentError, match="Tensor had Inf and NaN values"):
        math.check_numerics(tf.constant([np.nan, -np.inf]), "boom")
    np.testing.assert_array_equal(math.check_numerics(tf.constant([1.0]), "ok").numpy(), [1.0])


def test_check_numerics_in_graph_names_node():
    g = _graph()
    with g.as_default():
        x = placeholder(tf.float32, [2])
        y = math.check_numerics(x * 2.0, "bad input", name="checked")
    with pytest.raises(InvalidArgumentError) as e:
        run_plan(g, [x], [y], [np.array([1.0, np.inf], np.float32)])
    assert "bad input : Tensor had Inf values" in str(e.value) and "checked" in str(e.value)
    assert y.op.is_stateful


def test_check_numerics_gradient_checks_gradient():
    g = _graph()
    with g.as_default():
        x = placeholder(tf.float32, [2])
        y = math.check_numerics(x, "fwd")
        (gx,) = gradients([y], [x], grad_ys=[tf.constant([1.0, np.nan])])
    assert gx.op.type == "CheckNumerics"
    assert gx.op.get_attr("message") == ("Not a number (NaN) or infinity (Inf) values detected "
                                         "in gradient. fwd")
    with pytest.raises(InvalidArgumentError, match="detected in gradient. fwd"):
        run_plan(g, [x], [gx], [np.ones(2, np.float32)])


def test_operator_overload_names_in_graph():
    with _graph().as_default():
        x = placeholder(tf.float32, [3])
        y = placeholder(tf.float32, [3])
        i = placeholder(tf.int32, [3])
        b = placeholder(tf.bool, [3])
        got = {
            "add": x + y, "mul": x * y, "sub": x - y, "truediv": x / y, "Neg": -x,
            "floordiv": i // i, "mod": i % i, "pow": x ** 2.0, "Abs": abs(x), "Less": x < y,
            "GreaterEqual": x >= y, "and": b & b, "or": b | b, "xor": b ^ b,
            "LogicalNot": ~b, "add_1": 1.0 + x,
        }
        int_div = i / i
        mm = tf.matmul(placeholder(tf.float32, [2, 2]), placeholder(tf.float32, [2, 2]))
        at = placeholder(tf.float32, [2, 2]) @ placeholder(tf.float32, [2, 2])
    for name, t in got.items():
        assert t.op.name == name, (name, t.op.name)
    assert got["add"].op.type == "AddV2" and got["mul"].op.type == "Mul"
    assert got["truediv"].op.type == "RealDiv" and got["floordiv"].op.type == "FloorDiv"
    assert got["xor"].op.type == "LogicalAnd"
    assert got["add_1"].op.inputs[0].dtype is tf.float32
    assert int_div.op.name == "truediv_1" and int_div.op.type == "RealDiv"
    assert int_div.dtype is tf.float64
    assert [t.op.type for t in int_div.op.inputs] == ["Cast", "Cast"]
    assert int_div.op.inputs[0].op.name == "truediv_1/Cast"
    assert mm.op.name == "MatMul" and at.op.name == "matmul_1"  # names are case-insensitive


def test_public_wrapper_default_names():
    with _graph().as_default():
        x = placeholder(tf.float32, [3])
        assert tfm.add(x, x).op.name == "Add"
        assert tfm.multiply(x, x).op.name == "Mul"
        assert tfm.divide(x, x).op.name == "truediv"
        assert tfm.floordiv(x, x).op.name == "floordiv"
        clip = tf.clip_by_value(x, 0.0, 1.0)
        assert clip.op.name == "clip_by_value" and clip.op.type == "Maximum"
        assert clip.op.inputs[0].op.name == "clip_by_value/Minimum"
        c = tf.cast(x, tf.int32)
        assert c.op.type == "Cast" and c.op.get_attr("SrcT") is tf.float32
        assert c.op.get_attr("DstT") is tf.int32 and c.op.get_attr("Truncate") is False
        assert tf.cast(x, tf.float32) is x


def test_python_scalar_takes_tensor_dtype():
    x = tf.constant(np.array([1.0, 2.0]))
    assert (x * 2).dtype is tf.float64 and (2 + x).dtype is tf.float64
    i = tf.constant([7, -7])
    np.testing.assert_array_equal((i // 2).numpy(), [3, -4])
    assert (i / 2).dtype is tf.float64
    with pytest.raises(TypeError):
        tfm.truediv(i, tf.constant([1.0, 2.0]))


def test_integer_division_by_zero():
    with pytest.raises(InvalidArgumentError, match="Integer division by zero"):
        tf.constant([1]) // tf.constant([0])


@pytest.mark.parametrize("x_shape,y_shape,x_val,y_val", [
    ([None, 3], [None, 1], (4, 3), (4, 1)),        # undecidable statically: dynamic args
    ([None, None], [None], (2, 5), (5,)),
    ([None, 3], [3], (6, 3), (3,)),                 # decidable despite the unknown dim
    ([None, 1, None], [None, 1], (2, 1, 3), (4, 1)),
])
def test_dynamic_shape_broadcast_gradients(x_shape, y_shape, x_val, y_val):
    g = _graph()
    xv, yv = rng.uniform(-1, 1, x_val), rng.uniform(-1, 1, y_val)
    with g.as_default():
        x = placeholder(tf.float64, x_shape)
        y = placeholder(tf.float64, y_shape)
        z = tf.reduce_sum(tfm.add(tfm.multiply(x, y), tfm.maximum(x, y)) - y / (x * x + 1.0))
        gx, gy = gradients([z], [x, y])
    got_x, got_y = run_plan(g, [x, y], [gx, gy], [xv, yv])
    bx, by = np.broadcast_arrays(xv, yv)
    dz_dx = by + (bx >= by) + by * 2 * bx / (bx * bx + 1) ** 2
    dz_dy = bx + (bx < by) - 1 / (bx * bx + 1)

    def unbroadcast(gr, shape):
        gr = gr.sum(axis=tuple(range(gr.ndim - len(shape))))
        return gr.sum(axis=tuple(i for i, d in enumerate(shape) if d == 1), keepdims=True)

    np.testing.assert_allclose(got_x, unbroadcast(dz_dx, x_val), rtol=1e-10)
    np.testing.assert_allclose(got_y, unbroadcast(dz_dy, y_val), rtol=1e-10)


def test_broadcast_gradient_args_op():
    r0, r1 = array_fill.broadcast_gradient_args(tf.constant([1, 3]), tf.constant([1, 1]))
    np.testing.assert_array_equal(r0.numpy(), [0])
    np.testing.assert_array_equal(r1.numpy(), [0, 1])
    r0, r1 = array_fill.broadcast_gradient_args(tf.constant([2, 3, 4]), tf.constant([3, 1]))
    np.testing.assert_array_equal(r0.numpy(), [])
    np.testing.assert_array_equal(r1.numpy(), [0, 2])
    with pytest.raises(InvalidArgumentError, match="Incompatible shapes"):
        array_fill.broadcast_gradient_args(tf.constant([2, 3]), tf.constant([4]))


def test_static_broadcast_gradient_uses_no_shape_ops():
    g = _graph()
    with g.as_default():
        x = placeholder(tf.float32, [2, 3])
        y = placeholder(tf.float32, [3])
        gradients([tfm.multiply(x, y)], [x, y])
    types = {op.type for op in g.get_operations()}
    assert "BroadcastGradientArgs" not in types and "Shape" not in types


def test_python_constants_are_named_after_their_argument_as_in_tf():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2])
        y = x + 1.0
        tf.multiply(y, 2.0)
        tf.nn.relu(x) * 3
    # TensorFlow 2.21 builds exactly these names for the same program.
    assert [op.name for op in g.get_operations()] == [
        "Placeholder", "add/y", "add", "Mul/y", "Mul", "Relu", "mul_1/y", "mul_1"]


def test_monotonic_checks_refuse_non_numeric_input():
    with pytest.raises(TypeError, match="Expected x to be numeric, instead found"):
        tf.math.is_non_decreasing(tf.constant([True, False]))


def test_integer_truncating_division_by_zero_is_tensorflows_internal_error():
    for fn in (tf.truncatediv, tf.truncatemod):
        with pytest.raises(tf.errors.InternalError, match="only integer div and mod should"):
            fn(tf.constant([1]), tf.constant([0]))


def test_assert_all_finite_returns_x_after_check_numerics():
    np.testing.assert_array_equal(
        tf.debugging.assert_all_finite(tf.constant([1.0, 2.0]), "fine").numpy(), [1.0, 2.0])
    with pytest.raises(InvalidArgumentError, match="bad x : Tensor had NaN values"):
        tf.debugging.assert_all_finite(tf.constant([1.0, np.nan]), "bad x")
    with pytest.raises(InvalidArgumentError, match="old : Tensor had Inf values"):
        tf.compat.v1.verify_tensor_all_finite(t=tf.constant([np.inf]), msg="old")
    g = _graph()
    with g.as_default():
        x = placeholder(tf.float32, [2])
        y = tf.debugging.assert_all_finite(x, "m")
        y1 = tf.compat.v1.debugging.assert_all_finite(x=x, message="m")
    # TensorFlow 2.21 builds these names; the CheckNumerics is a control input of the Identity.
    assert [y.op.name, y1.op.name] == ["VerifyFinite/control_dependency",
                                       "VerifyFinite_1/control_dependency"]
    assert [op.name for op in y.op.control_inputs] == ["VerifyFinite/CheckNumerics"]
    with pytest.raises(InvalidArgumentError, match="Tensor had Inf values"):
        run_plan(g, [x], [y], [np.array([1.0, np.inf], np.float32)])


def test_is_numeric_tensor_and_v1_floor_div():
    assert tf.debugging.is_numeric_tensor(tf.constant([1]))
    assert tf.compat.v1.is_numeric_tensor(tf.constant([1.5]))
    assert not tf.debugging.is_numeric_tensor(tf.constant([True]))
    assert not tf.debugging.is_numeric_tensor([1])
    np.testing.assert_array_equal(tf.compat.v1.floor_div(tf.constant([7, -7]), 2).numpy(),
                                  [3, -4])
    with _graph().as_default():
        i = placeholder(tf.int32, [2])
        assert tf.compat.v1.floor_div(i, i).op.name == "FloorDiv"  # TF's generated wrapper


def test_accumulate_n_checks_as_tensorflow():
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="at least one Tensor with the same dtype and shape"):
        tf.math.accumulate_n([a, tf.constant([1, 2])])
    with pytest.raises(ValueError, match="at least one Tensor"):
        tf.math.accumulate_n([])
    with pytest.raises(ValueError, match=r"Shapes \(3, 2\) and \(2, 2\) are not compatible"):
        tf.math.accumulate_n([a, a], shape=[3, 2])
    with pytest.raises(TypeError, match="These must be equal. Try casting the input"):
        tf.math.accumulate_n([a], tensor_dtype=tf.int32)


def test_real_and_conj_refuse_non_numeric_tensors():
    with pytest.raises(TypeError, match="input must be a numeric tensor, but got tensor"):
        tf.math.real(tf.constant([True]))
    with pytest.raises(TypeError, match="Expected numeric or variant tensor, got dtype tf.bool"):
        tf.math.conj(tf.constant([True]))
    x = tf.constant([1.0, -2.0])
    assert tf.math.real(x) is x and tf.math.conj(x) is x


# -- transcendental kernels on strided views -----------------------------------------------------

@pytest.mark.parametrize("fn,ref", [(tf.sigmoid, lambda v: 1 / (1 + np.exp(-v))),
                                    (tf.tanh, np.tanh), (tf.exp, np.exp), (tf.sin, np.sin),
                                    (tf.math.log1p, lambda v: np.log1p(np.abs(v)))])
def test_transcendentals_of_split_gates_match_numpy(fn, ref):
    """A Split of gates along channels gives strided views (kernels/math.py copies them to
    dense memory first, where ATen's loops vectorize): values as NumPy's in float64."""
    x = np.random.default_rng(0).standard_normal((4, 5, 5, 12)).astype(np.float32)
    parts = tf.split(tf.constant(x), 4, axis=-1)
    for k, part in enumerate(parts):
        arg = tf.abs(part) if fn is tf.math.log1p else part
        want = ref(x[..., 3 * k:3 * (k + 1)].astype(np.float64))
        np.testing.assert_allclose(fn(arg).numpy(), want, rtol=2e-6, atol=1e-6)


def test_dense_input_copies_only_what_is_not_dense():
    seen = []
    run = math_kernels.dense_input(lambda v: seen.append(v) or v)
    x = torch.randn(2, 3, 4, 8)
    for view, copied in ((x, False), (x.permute(0, 3, 1, 2), False),
                         (x.contiguous(memory_format=torch.channels_last), False),
                         (x[..., :4], True), (x[:, :, ::2], True),
                         (torch.randn(3, 1).expand(3, 5), True)):
        run(view)
        assert (seen[-1] is not view) == copied
        assert seen[-1].is_contiguous() or not copied
        torch.testing.assert_close(seen[-1], view)

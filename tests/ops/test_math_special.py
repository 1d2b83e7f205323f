"""Special functions (ops/math_special.py), table-driven (see harness.py). References are
mpmath's arbitrary-precision values; edge values (poles, domain ends, x == 0 in the x * f(y)
ops) are TensorFlow 2.21's, which differ from ATen's in places (digamma(0), igamma(0, x),
xlogy(0, nan))."""

import math

import mpmath
import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops import math_special
from tests.ops.harness import OpCase

rng = np.random.default_rng(7)
_NAN, _INF = np.nan, np.inf
_F32_64 = dict(low_precision=False)       # ops TF registers for float and double only
_EDGE = dict(grad=False)


def _u(lo, hi, *shape):
    return rng.uniform(lo, hi, shape)


def _mp(fn):
    """An elementwise float64 reference from an mpmath function, broadcasting its inputs."""
    def ref(*args):
        args = np.broadcast_arrays(*args)
        out = [float(fn(*(mpmath.mpf(float(a)) for a in vals))) for vals in zip(
            *(a.reshape(-1) for a in args))]
        return np.array(out).reshape(args[0].shape)
    return ref


def _p(a, x):
    return mpmath.gammainc(a, 0, x, regularized=True)


def _ndtri(p):
    return mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1)


def _const(*outputs):
    return lambda *_: [np.array(v) for v in outputs]


_lgamma = np.vectorize(math.lgamma)
_erfc = np.vectorize(math.erfc)

CASES = [
    OpCase("lgamma", tf.math.lgamma, [_u(0.1, 6, 3, 4)], _lgamma, rtol=1e-5, atol=1e-5),
    OpCase("lgamma_negative", tf.math.lgamma, [np.array([-0.5, -2.5, -3.7, -0.1])], _lgamma,
           rtol=1e-5),
    OpCase("lgamma_poles", tf.math.lgamma, [np.array([0.0, -1.0, -2.0, _INF, -_INF])],
           _const([_INF] * 5), **_EDGE),
    OpCase("digamma", tf.math.digamma, [_u(0.2, 6, 3, 4)], _mp(mpmath.digamma), rtol=1e-5,
           atol=1e-5),
    OpCase("digamma_poles", tf.math.digamma, [np.array([0.0, -0.0, -1.0, -3.0, -0.5])],
           _const([_NAN, _NAN, _NAN, _NAN, 0.03648997397857652]), **_EDGE),
    OpCase("polygamma", tf.math.polygamma, [np.array([0.0, 1.0, 2.0, 3.0]), _u(0.5, 4, 3, 1)],
           _mp(lambda n, x: mpmath.polygamma(int(n), x)), grad=(1,), rtol=1e-5, **_F32_64),
    OpCase("polygamma_edges", tf.math.polygamma,  # a not a natural number; poles at x <= 0
           [np.array([1.5, -1.0, 0.5, 4.0, 0.0, 1.0, 2.0, 3.0]),
            np.array([2.0, 2.0, 2.0, 0.5, 0.0, -2.0, 0.0, -1.0])],
           _const([_NAN, _NAN, _NAN, -771.4742498266672, _NAN, _INF, _NAN, _INF]), rtol=1e-5,
           **_F32_64, **_EDGE),
    OpCase("zeta", tf.math.zeta, [np.array([2.0, 3.0, 4.5]), _u(0.5, 3, 2, 1)],
           _mp(mpmath.zeta), grad=(1,), rtol=1e-5, **_F32_64),
    OpCase("zeta_edges", tf.math.zeta,
           [np.array([1.0, 0.5, 2.0, 3.0, 4.0, 2.5]), np.array([1.0, 1.0, -1.0, 0.0, -2.0, -0.5])],
           _const([_INF, _NAN, _INF, _NAN, _INF, _NAN]), **_F32_64, **_EDGE),
    OpCase("igamma", tf.math.igamma, [_u(0.5, 4, 3, 1), _u(0.1, 5, 4)], _mp(_p), rtol=1e-5,
           atol=1e-5, grad_tol=1e-5),
    OpCase("igammac", tf.math.igammac, [_u(0.5, 4, 3, 4), _u(0.1, 5, 3, 4)],
           _mp(lambda a, x: 1 - _p(a, x)), rtol=1e-5, atol=1e-5),
    OpCase("igamma_igammac_edges", lambda a, x: [tf.math.igamma(a, x), tf.math.igammac(a, x)],
           [np.array([0.0, -1.0, 1.0, 1.0, 1.0, 1.0, _INF, 2.0]),
            np.array([1.0, 1.0, 0.0, -1.0, _INF, _NAN, 1.0, 0.0])],
           _const([_NAN, _NAN, 0.0, _NAN, 1.0, _NAN, 0.0, 0.0],
                  [_NAN, _NAN, 1.0, _NAN, 0.0, _NAN, 1.0, 1.0]), **_EDGE),
    OpCase("igamma_grad_a", math_special.igamma_grad_a,
           [np.array([0.5, 1.0, 2.0, 5.0, 0.1, 3.0, 0.02, 12.0, 1e-3, 1000.0, 50.0, 1.0]),
            np.array([0.3, 1.0, 3.0, 4.0, 2.0, 0.5, 0.7, 9.0, 0.1, 900.0, 80.0, 30.0])],
           _mp(lambda a, x: mpmath.diff(lambda t: _p(t, x), a)), rtol=1e-7, atol=1e-12,
           **_F32_64, **_EDGE),
    OpCase("betainc", tf.math.betainc, [_u(0.5, 5, 3, 4), _u(0.5, 5, 3, 4), _u(0.05, 0.95, 3, 4)],
           _mp(lambda a, b, x: mpmath.betainc(a, b, 0, x, regularized=True)), grad=(2,),
           rtol=1e-10, atol=1e-12, **_F32_64),
    OpCase("betainc_scalar_operands", tf.math.betainc,
           [np.array(2.0), _u(0.5, 5, 2, 3), np.array(0.4)],
           _mp(lambda a, b, x: mpmath.betainc(a, b, 0, x, regularized=True)), grad=(2,),
           rtol=1e-10, atol=1e-12, **_F32_64),
    OpCase("betainc_edges_and_large_orders", tf.math.betainc,  # values: TensorFlow 2.21's
           [np.array([0.0, -1.0, 1.0, 1.0, 2.0, 2.0, 0.5, 2.0, 1e-3, 500.0, 3.0, 5000.0]),
            np.array([1.0, 1.0, 0.0, 1.0, 3.0, 3.0, 0.5, 3.0, 2.0, 600.0, 3.0, 4000.0]),
            np.array([0.5, 0.5, 0.5, 1.5, 0.0, 1.0, 0.3, _NAN, 0.5, 0.45, 0.5, 0.555])],
           _const([_NAN, _NAN, _NAN, _NAN, 0.0, 1.0, 0.36901011956554536, _NAN,
                   0.9998067465369476, 0.38169373366484005, 0.5, 0.45745798151908595]),
           rtol=1e-10, **_F32_64, **_EDGE),
    OpCase("erfc", tf.math.erfc, [_u(-3, 3, 3, 4)], _erfc),
    OpCase("erfc_tail", tf.math.erfc, [np.array([4.0, 6.0, 9.0, 20.0])], _erfc,
           dtypes=(tf.float64,), rtol=1e-13, atol=0.0, low_precision=False),
    OpCase("erfinv", tf.math.erfinv, [_u(-0.95, 0.95, 3, 4)], _mp(mpmath.erfinv), rtol=1e-5),
    OpCase("erfinv_edges", tf.math.erfinv, [np.array([-1.0, 1.0, 2.0, 0.0])],
           _const([-_INF, _INF, _NAN, 0.0]), **_EDGE),
    OpCase("ndtri", tf.math.ndtri, [_u(0.05, 0.95, 3, 4)], _mp(_ndtri), rtol=1e-5),
    OpCase("ndtri_edges", tf.math.ndtri, [np.array([0.0, 1.0, 2.0, 0.5])],
           _const([-_INF, _INF, _NAN, 0.0]), **_EDGE),
    OpCase("xlogy", tf.math.xlogy, [_u(-2, 2, 3, 4), _u(0.2, 3, 4)],
           lambda x, y: x * np.log(y)),
    OpCase("xdivy", tf.math.xdivy, [_u(-2, 2, 3, 4), _u(0.5, 3, 3, 1)], lambda x, y: x / y),
    OpCase("xlog1py", tf.math.xlog1py, [_u(-2, 2, 3, 4), _u(-0.5, 3, 4)],
           lambda x, y: x * np.log1p(y)),
    OpCase("x_ops_are_zero_where_x_is_zero",
           lambda x, y: [tf.math.xlogy(x, y), tf.math.xdivy(x, y), tf.math.xlog1py(x, y)],
           [np.array([0.0, 0.0, 0.0, 0.0, 1.0, 2.0]),
            np.array([0.0, _NAN, -1.0, _INF, 0.0, -2.0])],
           _const([0.0, 0.0, 0.0, 0.0, -_INF, _NAN], [0.0, 0.0, 0.0, 0.0, _INF, -1.0],
                  [0.0, 0.0, 0.0, 0.0, 0.0, _NAN]), **_EDGE),
    OpCase("bessel_i0", tf.math.bessel_i0, [_u(-3, 3, 3, 4)], _mp(lambda x: mpmath.besseli(0, x))),
    OpCase("bessel_i1", tf.math.bessel_i1, [_u(-3, 3, 3, 4)], _mp(lambda x: mpmath.besseli(1, x))),
    OpCase("bessel_i0e", tf.math.bessel_i0e, [_u(-5, 5, 3, 4)],
           _mp(lambda x: mpmath.exp(-abs(x)) * mpmath.besseli(0, x))),
    OpCase("bessel_i1e", tf.math.bessel_i1e, [_u(-5, 5, 3, 4)],
           _mp(lambda x: mpmath.exp(-abs(x)) * mpmath.besseli(1, x))),
    OpCase("bessel_j0", tf.math.special.bessel_j0, [_u(-6, 6, 3, 4)],
           _mp(lambda x: mpmath.besselj(0, x))),
    OpCase("bessel_j1", tf.math.special.bessel_j1, [_u(-6, 6, 3, 4)],
           _mp(lambda x: mpmath.besselj(1, x))),
    OpCase("bessel_y0", tf.math.special.bessel_y0, [_u(0.3, 6, 3, 4)],
           _mp(lambda x: mpmath.bessely(0, x))),
    OpCase("bessel_y1", tf.math.special.bessel_y1, [_u(0.3, 6, 3, 4)],
           _mp(lambda x: mpmath.bessely(1, x))),
    OpCase("bessel_k0", tf.math.special.bessel_k0, [_u(0.2, 5, 3, 4)],
           _mp(lambda x: mpmath.besselk(0, x))),
    OpCase("bessel_k1", tf.math.special.bessel_k1, [_u(0.2, 5, 3, 4)],
           _mp(lambda x: mpmath.besselk(1, x))),
    OpCase("bessel_k0e", tf.math.special.bessel_k0e, [_u(0.2, 8, 3, 4)],
           _mp(lambda x: mpmath.exp(x) * mpmath.besselk(0, x))),
    OpCase("bessel_k1e", tf.math.special.bessel_k1e, [_u(0.2, 8, 3, 4)],
           _mp(lambda x: mpmath.exp(x) * mpmath.besselk(1, x))),
    # TF 2.21's values outside the second kinds' domain (Cephes'): Y -> -inf, K -> inf for
    # x < 0, Y1(0) NaN; Y(inf) is NaN and K(inf) 0 in both
    OpCase("bessel_second_kind_edges",
           lambda x: [f(x) for f in (tf.math.special.bessel_y0, tf.math.special.bessel_y1,
                                     tf.math.special.bessel_k0, tf.math.special.bessel_k1e)],
           [np.array([-1.0, 0.0, _INF, _NAN])],
           _const([-_INF, -_INF, _NAN, _NAN], [-_INF, _NAN, _NAN, _NAN],
                  [_INF, _INF, 0.0, _NAN], [_INF, _INF, 0.0, _NAN]), **_EDGE),
    OpCase("erfcinv", tf.math.erfcinv, [_u(0.05, 1.95, 3, 4)],
           _mp(lambda x: mpmath.erfinv(1 - x)), rtol=1e-5, atol=1e-5),
    OpCase("erfcinv_edges", tf.math.erfcinv, [np.array([0.0, 2.0, 1.0, 3.0])],
           _const([_INF, -_INF, 0.0, _NAN]), **_EDGE),
    OpCase("lbeta", tf.math.lbeta, [_u(0.3, 3, 3, 4)],
           lambda x: _lgamma(x).sum(-1) - _lgamma(x.sum(-1)), rtol=1e-5, atol=1e-5,
           low_precision=False),
    OpCase("lbeta_empty_last_axis", tf.math.lbeta, [np.zeros((2, 0))],
           _const([-_INF, -_INF]), low_precision=False, **_EDGE),
    OpCase("nextafter", tf.math.nextafter, [_u(-2, 2, 3, 4), _u(-2, 2, 4)], np.nextafter,
           dtypes=(tf.float64,), rtol=0.0, atol=0.0, low_precision=False),
]


def _gradient_at(fn, x):
    x = tf.constant(np.array(x, np.float64))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.gradient(y, x).numpy()


def test_bessel_i1_gradients_at_zero_are_tensorflows():
    # TF 2.21 imputes 1.0 for bessel_i1 (the derivative is 0.5) and 0.5 for bessel_i1e.
    np.testing.assert_array_equal(_gradient_at(tf.math.bessel_i1, [0.0]), [1.0])
    np.testing.assert_array_equal(_gradient_at(tf.math.bessel_i1e, [0.0]), [0.5])


def test_x_ops_gradients_where_x_is_zero():
    # TF's rules: x's partial is 0 where x == 0 (not log(y)); y's is xdivy(x, ...) = 0 there.
    x = tf.constant([0.0, 0.0, 1.0], tf.float64)
    y = tf.constant([0.0, 2.0, 2.0], tf.float64)
    for fn in (tf.math.xlogy, tf.math.xdivy, tf.math.xlog1py):
        with tf.GradientTape() as tape:
            tape.watch([x, y])
            z = fn(x, y)
        gx, gy = tape.gradient(z, [x, y])
        assert gx.numpy()[:2].tolist() == [0.0, 0.0] and gy.numpy()[:2].tolist() == [0.0, 0.0]
    with tf.GradientTape() as tape:
        tape.watch(x)
        z = tf.math.xlogy(x, tf.constant([0.0, 0.0, 0.0], tf.float64))
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [0.0, 0.0, -np.inf])


def test_nextafter_float32_steps_one_float32_ulp():
    x = np.array([1.0, 0.0, -3.5], np.float32)
    to = np.array([2.0, -1.0, -np.inf], np.float32)
    got = tf.math.nextafter(tf.constant(x), tf.constant(to)).numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.nextafter(x, to))


def test_wrappers_build_tensorflows_op_names():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [3])
        tf.math.erfinv(x)
        tf.math.bessel_i1e(x, name="b")
        tf.math.xdivy(x, x)
        tf.math.xlogy(x, x)
        tf.math.erfcinv(x)
        tf.math.lbeta(x)
        tf.math.erfinv(x)
        tf.math.erfcinv(x)
    names = [op.name for op in g.get_operations()]
    # TensorFlow 2.21 builds exactly these names for the same program.
    assert names == [
        "Placeholder", "erfinv/Erfinv", "b/BesselI1e", "xdivy/Xdivy", "Xlogy",
        "erfcinv/mul/x", "erfcinv/mul", "erfcinv/ndtri/Ndtri", "erfcinv/Neg", "erfcinv/mul_1/y",
        "erfcinv/mul_1", "lbeta/Lgamma", "lbeta/Sum/reduction_indices", "lbeta/Sum",
        "lbeta/Sum_1/reduction_indices", "lbeta/Sum_1", "lbeta/Lgamma_1", "lbeta/sub",
        "erfinv_1/Erfinv", "erfcinv_1/mul/x", "erfcinv_1/mul", "erfcinv_1/ndtri/Ndtri",
        "erfcinv_1/Neg", "erfcinv_1/mul_1/y", "erfcinv_1/mul_1"]


def test_betainc_shapes_are_tensorflows():
    g = tf.Graph()
    with g.as_default():
        a = tf.compat.v1.placeholder(tf.float32, [3])
        assert tf.math.betainc(1.0, a, a).shape.as_list() == [3]
        with pytest.raises(ValueError, match="Shapes must be equal rank, but are 1 and 2"):
            tf.math.betainc(a, a, tf.compat.v1.placeholder(tf.float32, [2, 3]))
    with pytest.raises(InvalidArgumentError,
                       match=r"Shapes of a and b are inconsistent: \[2\] vs. \[3\]"):
        tf.math.betainc(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0]), 0.5)
    with pytest.raises(InvalidArgumentError,
                       match=r"Shapes of b and x are inconsistent: \[2\] vs. \[1,2\]"):
        tf.math.betainc(1.0, tf.constant([1.0, 2.0]), tf.constant([[0.5, 0.2]]))


def test_second_order_gradients_are_tensorflows():
    x = tf.constant([0.3, 1.2], tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = (tf.sin(x) * tf.math.lgamma(x + 1) + tf.math.atan2(x, tf.constant(2.0, tf.float64))
                 + tf.math.xlogy(x, x) + tf.math.acosh(x + 1.5) * tf.math.erfinv(x / 2))
        g = inner.gradient(y, x)
    gg = outer.gradient(g, x)
    # TensorFlow 2.21's values for the same program.
    np.testing.assert_allclose(g.numpy(), [0.7591647744808219, 3.371673016989915], rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), [3.901438535507359, 2.694012994240766], rtol=1e-12)


def test_bessel_i0_values_are_tensorflows():
    # TF 2.21 at [0, -0, 1e-4, 0.5, 1, 3, 10]: exactly 1 at 0 (float32 too), and float16
    # computed in float32 then rounded:
    #   v = tf.constant([0., -0., 1e-4, .5, 1., 3., 10.], dt)
    #   tf.math.bessel_i0(v), tf.math.bessel_i0e(v)
    x = [0.0, -0.0, 1e-4, 0.5, 1.0, 3.0, 10.0]
    for dt in (tf.float32, tf.float64):
        v = tf.constant(x, dt)
        assert tf.math.bessel_i0(v).numpy()[:2].tolist() == [1.0, 1.0]
        assert tf.math.bessel_i0e(v).numpy()[:2].tolist() == [1.0, 1.0]
    v = tf.constant(x, tf.float16)
    assert tf.math.bessel_i0(v).numpy().tolist() == [1.0, 1.0, 1.0, 1.0634765625, 1.265625,
                                                     4.87890625, 2816.0]
    assert tf.math.bessel_i0e(v).numpy().tolist() == [1.0, 1.0, 1.0, 0.64501953125,
                                                      0.4658203125, 0.2430419921875,
                                                      0.1278076171875]

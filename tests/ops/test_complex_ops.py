"""Complex dtypes and ops: tf.complex64/complex128, Complex, Real, Imag, Angle, ComplexAbs,
Conj, casts, and the arithmetic TensorFlow registers for complex types (table-driven, see
harness.py; complex inputs run as complex64 in the float32 runs, complex128 in float64).

Gradient cases take real inputs through complex intermediates, so finite differences of
real functions check TF's convention (dL/dx + i dL/dy for z = x + iy); complex-input
gradients are compared with TensorFlow 2.21's values.
"""

import numpy as np
import pytest
from tensorboard.compat.proto import tensor_pb2, tensor_shape_pb2

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.core.graph_def import tensor_proto_to_ndarray
from tests.ops.harness import OpCase

rng = np.random.default_rng(7)


def _r(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape)


def _z(*shape):
    return rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)


def _fwd(id_, fn, inputs, ref, **kw):
    """A forward-only case on complex inputs (TF has no float16 complex)."""
    return OpCase(id_, fn, inputs, ref, low_precision=False, grad=False, **kw)


def _parts(g):
    """Real and imaginary parts of g(x + iy), a real function of real x, y."""
    def fn(x, y):
        w = g(tf.complex(x, y))
        return [tf.math.real(w), tf.math.imag(w)]

    def ref(x, y):
        w = g_np[g](x + 1j * y)
        return [w.real, w.imag]
    return fn, ref


_Z1, _Z2, _ZM1, _ZM2 = _z(2, 3), _z(2, 3), _z(2, 3), _z(3, 4)

CASES = [
    _fwd("complex_from_parts", tf.complex, [_r(2, 3), _r(3)], lambda x, y: x + 1j * y),
    _fwd("real_imag_angle_abs_conj", lambda z: [tf.math.real(z), tf.math.imag(z),
                                                tf.math.angle(z), tf.abs(z), tf.math.conj(z)],
         [_Z1], lambda z: [z.real, z.imag, np.angle(z), np.abs(z), np.conj(z)]),
    _fwd("add_sub_mul_div", lambda a, b: [a + b, a - b, a * b, a / b, -a, tf.math.divide(a, b)],
         [_Z1, _Z2], lambda a, b: [a + b, a - b, a * b, a / b, -a, a / b]),
    _fwd("exp_log_sqrt_square", lambda z: [tf.exp(z), tf.math.log(z), tf.sqrt(z),
                                           tf.square(z), tf.math.reciprocal(z)],
         [_Z1], lambda z: [np.exp(z), np.log(z), np.sqrt(z), z * z, 1 / z]),
    _fwd("matmul", tf.matmul, [_ZM1, _ZM2], np.matmul),
    _fwd("matmul_adjoint", lambda a, b: tf.matmul(a, b, adjoint_a=True),
         [_z(3, 2), _ZM2], lambda a, b: np.conj(a).T @ b),
    _fwd("batch_matmul_adjoint", lambda a, b: tf.matmul(a, b, adjoint_b=True),
         [_z(2, 2, 3), _z(2, 4, 3)], lambda a, b: a @ np.conj(np.swapaxes(b, -1, -2))),
    _fwd("conjugate_transpose_adjoint",
         lambda z: [tf.transpose(z, conjugate=True), tf.linalg.adjoint(z),
                    tf.linalg.matrix_transpose(z), tf.transpose(z, [1, 0])],
         [_Z1], lambda z: [np.conj(z).T, np.conj(z).T, z.T, z.T]),
    _fwd("equal_not_equal", lambda a, b: [tf.equal(a, b), tf.not_equal(a, a)],
         [np.array([1 + 2j, 3j, 2.0]), np.array([1 + 2j, 3.0, 2.0])],
         lambda a, b: [a == b, a != a]),
    _fwd("norm_std_variance", lambda z: [tf.norm(z), tf.math.reduce_euclidean_norm(z, 1),
                                         tf.math.reduce_std(z), tf.math.reduce_variance(z, 0)],
         [_Z1], lambda z: [np.sqrt(np.sum(np.abs(z) ** 2)) + 0j,
                           np.sqrt(np.sum(np.abs(z) ** 2, 1)) + 0j, np.std(z), np.var(z, 0)]),
    _fwd("reduce_sum_mean", lambda z: [tf.reduce_sum(z, axis=1), tf.reduce_mean(z),
                                       tf.add_n([z, z, z])],
         [_Z1], lambda z: [z.sum(1), z.mean(), 3 * z]),
    _fwd("cast_complex_to_real", lambda z: [tf.cast(z, tf.float64), tf.cast(z, tf.int32)],
         [np.array([1.5 + 2j, -2.25 - 1j, 3.75 + 0.5j])],
         lambda z: [z.real, z.real.astype(np.int32)]),
]

# Real-to-real functions through complex intermediates: forward and gradients.
g_np = {}


def _holo(name, g, gn, x, y):
    g_np[g] = gn
    fn, ref = _parts(g)
    return OpCase(name, fn, [x, y], ref, low_precision=False, rtol=1e-5, atol=1e-5)


_X, _Y = _r(2, 3, lo=0.3, hi=1.0), _r(2, 3, lo=0.3, hi=1.0)
CASES += [
    _holo("grad_mul", lambda z: z * tf.constant(0.5 - 2j, z.dtype),
          lambda z: z * (0.5 - 2j), _X, _Y),
    _holo("grad_div", lambda z: tf.constant(1.5 + 0.5j, z.dtype) / z,
          lambda z: (1.5 + 0.5j) / z, _X, _Y),
    _holo("grad_exp_log", lambda z: tf.exp(z) + tf.math.log(z), lambda z: np.exp(z) + np.log(z),
          _X, _Y),
    _holo("grad_sqrt_square", lambda z: tf.sqrt(z) + tf.square(z), lambda z: np.sqrt(z) + z * z,
          _X, _Y),
    _holo("grad_conj_neg_sub", lambda z: tf.math.conj(z) * z - (-z),
          lambda z: np.conj(z) * z + z, _X, _Y),
    _holo("grad_reduce_sum_mean", lambda z: tf.reduce_sum(z * z, axis=0) + tf.reduce_mean(z),
          lambda z: (z * z).sum(0) + z.mean(), _X, _Y),
    _holo("grad_matmul", lambda z: tf.matmul(z, tf.transpose(z) * tf.constant(1j, z.dtype)),
          lambda z: z @ (z.T * 1j), _X, _Y),
    OpCase("grad_abs_angle", lambda x, y: [tf.abs(tf.complex(x, y)),
                                           tf.math.angle(tf.complex(x, y))],
           [_r(2, 3), _r(2, 3)], lambda x, y: [np.abs(x + 1j * y), np.angle(x + 1j * y)],
           low_precision=False),
    _holo("grad_trig", lambda z: tf.sin(z) + tf.cos(z) * tf.math.tan(z) + tf.sinh(z) - tf.cosh(z),
          lambda z: np.sin(z) + np.cos(z) * np.tan(z) + np.sinh(z) - np.cosh(z), _X, _Y),
    _holo("grad_tanh_sigmoid_expm1_log1p",
          lambda z: tf.tanh(z) + tf.sigmoid(z) + tf.math.expm1(z) * tf.math.log1p(z),
          lambda z: np.tanh(z) + 1 / (1 + np.exp(-z)) + np.expm1(z) * np.log1p(z), _X, _Y),
    _holo("grad_pow", lambda z: tf.pow(z, tf.constant(2.5 - 0.5j, z.dtype)) + tf.pow(
          tf.constant(1.5 + 1j, z.dtype), z), lambda z: z ** (2.5 - 0.5j) + (1.5 + 1j) ** z,
          _X, _Y),
    _holo("grad_reciprocal_div_no_nan",
          lambda z: tf.math.reciprocal(z) + tf.math.divide_no_nan(tf.constant(2 - 1j, z.dtype), z),
          lambda z: 1 / z + (2 - 1j) / z, _X, _Y),
    _holo("grad_inverse_trig", lambda z: tf.math.asin(z) + tf.math.acos(z) * tf.math.atan(z)
          + tf.math.asinh(z) - tf.math.acosh(z + 1) + tf.math.atanh(z) + tf.math.rsqrt(z),
          lambda z: np.arcsin(z) + np.arccos(z) * np.arctan(z) + np.arcsinh(z)
          - np.arccosh(z + 1) + np.arctanh(z) + 1 / np.sqrt(z), _X, _Y),
    _holo("grad_sign", lambda z: tf.sign(z) * z, lambda z: z / np.abs(z) * z, _X, _Y),
    _fwd("mul_no_nan", lambda a, b: tf.math.multiply_no_nan(a, b),
         [_Z1, np.where(np.abs(_Z2) < 0.5, 0, _Z2)],
         lambda a, b: np.where(b == 0, 0, a * b)),
    _holo("grad_gather_segments",
          lambda z: tf.gather(z, [2, 0, 2], axis=1) * tf.math.segment_sum(z, [0, 0])
          + tf.math.unsorted_segment_sum(z, [1, 0], 2) - tf.math.segment_mean(z, [0, 1]),
          lambda z: z[:, [2, 0, 2]] * z.sum(0, keepdims=True) + z[::-1] - z, _X, _Y),
    _holo("grad_conjugate_transpose",
          lambda z: tf.matmul(z, tf.transpose(z, conjugate=True) + tf.linalg.adjoint(z)),
          lambda z: z @ (2 * np.conj(z).T), _X, _Y),
    OpCase("grad_cast_through_complex",
           lambda x: tf.cast(tf.cast(x, tf.complex128) * tf.constant(2 + 1j, tf.complex128),
                             x.dtype),
           [_r(2, 3)], lambda x: 2 * x, low_precision=False, dtypes=(tf.float64,)),
]


def test_complex_dtypes():
    assert (tf.complex64.as_datatype_enum, tf.complex128.as_datatype_enum) == (8, 18)
    assert tf.complex64.is_complex and not tf.complex64.is_floating
    assert not tf.float32.is_complex
    assert tf.complex64.real_dtype is tf.float32 and tf.complex128.real_dtype is tf.float64
    assert tf.float32.real_dtype is tf.float32
    assert tf.as_dtype("complex64") is tf.complex64 and tf.as_dtype(8) is tf.complex64
    assert tf.as_dtype(np.complex128) is tf.complex128
    assert tf.as_dtype(np.dtype("complex64")) is tf.complex64
    assert (tf.complex64.size, tf.complex128.size) == (8, 16)
    assert tf.dtypes.complex64 is tf.complex64
    with pytest.raises(TypeError):
        tf.as_dtype(complex)  # as TF: the Python type is not a dtype
    with pytest.raises(TypeError):
        _ = tf.complex64.min


def test_python_and_numpy_complex_values():
    c = tf.constant(1 + 2j)
    assert c.dtype is tf.complex128 and c.numpy() == 1 + 2j and complex(c) == 1 + 2j
    assert tf.constant(np.complex64(1j)).dtype is tf.complex64
    assert tf.constant(1j, dtype=tf.complex64).numpy().dtype == np.complex64
    assert tf.constant([1 + 1j, 2]).dtype is tf.complex128
    with pytest.raises(ValueError, match="Python sequence with mixed types"):
        tf.constant([2, 1j])  # as TF: a complex after a real number
    with pytest.raises(TypeError, match="Cannot convert"):
        tf.constant(1 + 2j, tf.float32)
    np.testing.assert_array_equal(tf.cast(tf.constant([1.5, -2.0]), tf.complex64).numpy(),
                                  np.array([1.5, -2.0], np.complex64))
    np.testing.assert_array_equal(tf.cast(tf.constant([0j, 1j]), tf.bool).numpy(),
                                  [False, True])


def test_complex_checks_its_operands_as_tensorflow():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(TypeError, match=r"The `real` and `imag` components have incorrect "
                                        r"types: float32 float64. They must be consistent"):
        tf.complex(x, tf.constant([1.0, 2.0], tf.float64))
    with pytest.raises(TypeError, match="incorrect types: int32 int32"):
        tf.complex(tf.constant([1]), tf.constant([2]))
    with pytest.raises(TypeError, match="input must be a numeric tensor, but got tensor"):
        tf.math.real(tf.constant([True]))
    with pytest.raises(TypeError, match="Expected numeric or variant tensor"):
        tf.math.conj(tf.constant([True]))
    z = tf.complex(x, x)
    assert z.dtype is tf.complex64
    assert tf.math.real(x) is x and tf.math.conj(x) is x
    np.testing.assert_array_equal(tf.math.imag(x).numpy(), [0.0, 0.0])


def test_complex_ops_in_a_graph_have_tensorflow_names_and_round_trip():
    g = Graph()
    with g.as_default():
        z = tf.complex(tf.constant([1.0]), tf.constant([2.0]))
        r, i = tf.math.real(z), tf.math.imag(z)
        a, c = tf.abs(z), tf.math.conj(z)
        k = tf.constant([1 + 1j], tf.complex128)
    assert [t.op.type for t in (z, r, i, a, c)] == ["Complex", "Real", "Imag", "ComplexAbs",
                                                    "Conj"]
    assert (z.op.name, r.op.name, i.op.name) == ("Complex", "Real", "Imag")
    assert r.dtype is tf.float32 and a.dtype is tf.float32 and c.dtype is tf.complex64
    g2 = Graph()
    with g2.as_default():
        tf.import_graph_def(g.as_graph_def(), name="")
    with tf.compat.v1.Session(graph=g2) as sess:
        got = sess.run([t.name for t in (z, r, a, c, k)])
    np.testing.assert_allclose(got[0], [1 + 2j])
    np.testing.assert_allclose(got[1:3], [[1.0], [np.sqrt(5)]], rtol=1e-6)
    np.testing.assert_allclose(got[3], [1 - 2j])
    assert got[4].dtype == np.complex128 and got[4][0] == 1 + 1j


def test_complex_input_gradients_match_tensorflow():
    # Values printed by TensorFlow 2.21 for the same expressions (GradientTape, complex128).
    z = tf.constant([1 + 2j, -0.5 + 0.25j], tf.complex128)
    w = tf.constant([0.3 - 1j, 2 + 0.5j], tf.complex128)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([z, w])
        ys = [tf.math.real(z * w), tf.abs(z), tf.math.angle(z), tf.math.imag(tf.exp(z)),
              tf.math.real(tf.math.log(z) / w), tf.math.real(tf.sqrt(z)),
              tf.reduce_sum(tf.abs(tf.square(z)))]
    expected = [[0.3 + 1j, 2 - 0.5j], [0.4472136 + 0.89442719j, -0.89442719 + 0.4472136j],
                [-0.4 + 0.2j, -0.8 - 1.6j], [2.47172667 - 1.13120438j, 0.15005809 + 0.58767509j],
                [0.42201835 - 0.0733945j, -0.84705882 + 0.18823529j],
                [0.28443224 + 0.17578879j, 0.15364504 + 0.65085083j], [2 + 4j, -1 + 0.5j]]
    for y, e in zip(ys, expected):
        np.testing.assert_allclose(tape.gradient(y, z).numpy(), e, rtol=1e-7)
    np.testing.assert_allclose(tape.gradient(ys[0], w).numpy(), [1 - 2j, -0.5 - 0.25j])


def test_complex_abs_gradient_at_zero_is_zero():
    z = tf.constant([0j, 3 + 4j])
    with tf.GradientTape() as tape:
        tape.watch(z)
        y = tf.abs(z)
    np.testing.assert_allclose(tape.gradient(y, z).numpy(), [0, 0.6 + 0.8j])


def test_integer_complex_ops_are_refused():
    with pytest.raises((TypeError, InvalidArgumentError)):
        tf.math.floordiv(tf.constant([1j]), tf.constant([1j]))


def test_tensorflow_graph_def_complex_constants_import():
    # TF writes small complex constants as (real, imag) pairs in scomplex_val / dcomplex_val
    # (a TF 2.21 GraphDef of tf.constant([1j, 2], tf.complex64) and tf.constant(1j)).
    shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=2)])
    value, dtype = tensor_proto_to_ndarray(tensor_pb2.TensorProto(
        dtype=8, tensor_shape=shape, scomplex_val=[0, 1, 2, 0]))
    assert dtype is tf.complex64 and value.dtype == np.complex64
    np.testing.assert_array_equal(value, [1j, 2])
    value, dtype = tensor_proto_to_ndarray(tensor_pb2.TensorProto(
        dtype=18, tensor_shape=tensor_shape_pb2.TensorShapeProto(), dcomplex_val=[0, 1]))
    assert dtype is tf.complex128 and value == 1j


def test_v1_to_complex():
    x = tf.constant([1.5, -2.0])
    assert tf.compat.v1.to_complex64(x).dtype is tf.complex64
    np.testing.assert_array_equal(tf.compat.v1.to_complex128(x).numpy(), [1.5 + 0j, -2 + 0j])


def test_complex_variables_train_with_keras_sgd_as_tensorflow():
    w = tf.Variable(tf.constant([1 + 1j], tf.complex64))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.abs(w) ** 2)  # tf.abs reads the variable: ComplexAbs
    grads = tape.gradient(loss, [w])
    np.testing.assert_allclose(grads[0].numpy(), [2 + 2j], rtol=1e-6)
    tf.keras.optimizers.SGD(0.1).apply_gradients(zip(grads, [w]))
    np.testing.assert_allclose(w.numpy(), [0.8 + 0.8j], rtol=1e-6)  # TF 2.21's value


def test_cumulative_ops_take_complex_as_tensorflow():
    z = tf.constant([1j, 2, 3j])
    np.testing.assert_allclose(tf.cumsum(z).numpy(), [1j, 2 + 1j, 2 + 4j])
    np.testing.assert_allclose(tf.math.cumprod(z).numpy(), [1j, 2j, -6])


def test_complex_second_order_gradients_match_tensorflow():
    # Values printed by TensorFlow 2.21: the gradient of real(c * grad f(z)) for f in
    # reciprocal, sqrt, abs (cast back) and divide_no_nan(c, z) (ReciprocalGrad's, SqrtGrad's
    # and DivNoNan's gradients with their conjugates)
    z = tf.constant([1 + 2j, -0.5 + 0.25j], tf.complex128)
    c = tf.constant([0.3 - 1j, 2 + 0.5j], tf.complex128)
    fns = [tf.math.reciprocal, tf.sqrt, lambda z: tf.cast(tf.abs(z), z.dtype),
           lambda z: tf.math.divide_no_nan(c, z)]
    expected = [[-0.19184 - 0.03488j, -8.704 + 47.872j],
                [0.00731884 - 0.08116721j, 1.62883953 + 1.95169624j],
                [-0.02146625 + 0.01073313j, 0.71554175 + 1.43108351j],
                [-0.022672 - 0.202304j, 6.528 + 100.096j]]
    # and Tanh/Sigmoid (TanhGrad/SigmoidGrad's gradients), Exp, Log, Sin, Tan, Expm1, Pow, Log1p
    # and Angle
    fns += [tf.tanh, tf.sigmoid, tf.exp, tf.math.log, tf.sin, tf.math.tan, tf.math.expm1,
            lambda z: tf.pow(z, c), tf.math.log1p, lambda z: tf.cast(tf.math.angle(z), z.dtype) * c]
    expected += [[0.46662219 + 1.60524552j, 3.63961555 + 0.55913514j],
                 [-0.53016647 - 0.35431317j, 0.25880275 + 0.10389014j],
                 [-1.23301278 - 2.69418207j, 2.49761913 - 0.63774687j],
                 [0.1308 - 0.1744j, -8.16 + 10.88j],
                 [-3.45069858 + 2.13596514j, 2.10156457 + 0.9421747j],
                 [-0.15393084 + 0.05835067j, -4.12401959 - 4.42407308j],
                 [-1.23301278 - 2.69418207j, 2.49761913 - 0.63774687j],
                 [1.06032909 - 0.14450824j, 2.34671898 - 1.04190231j],
                 [-0.13625j, -8.16 - 10.88j],
                 [-0.15288 + 0.11284j, -15.6 - 19.2j]]
    # and the inverse trigonometric and hyperbolic functions, Rsqrt (RsqrtGrad's gradient) and
    # Sign (TF's DivNoNan of ComplexAbs for complex)
    fns += [tf.math.asin, tf.math.acos, tf.math.atan, tf.math.asinh, tf.math.acosh,
            tf.math.atanh, tf.math.rsqrt, lambda z: tf.sign(z) * c]
    expected += [[-0.11869271 - 0.13685385j, -1.85704571 - 2.39574142j],
                 [0.11869271 + 0.13685385j, 1.85704571 + 2.39574142j],
                 [0.2398 - 0.0436j, 3.22276242 + 0.15692786j],
                 [0.09408695 - 0.23992594j, 1.75660708 + 0.2698048j],
                 [0.13685385 - 0.11869271j, 2.39574142 - 1.85704571j],
                 [-0.13625 - 0.068125j, -3.21075237 - 5.73802776j],
                 [-0.10179195 + 0.03991771j, 12.50250075 + 5.45892709j],
                 [0.1859693 - 0.13627493j, 2.25395652 + 4.86568392j]]
    for f, e in zip(fns, expected):
        with tf.GradientTape() as outer:
            outer.watch(z)
            with tf.GradientTape() as inner:
                inner.watch(z)
                y = tf.math.real(f(z) * c)
            h = tf.math.real(inner.gradient(y, z) * c)
        np.testing.assert_allclose(outer.gradient(h, z).numpy(), e, rtol=1e-6, atol=1e-8)


def _check_against_tensorflow(x, fns, expected, reduced=True, atol=1e-8):
    """For each f: the value (of real(sum(f(x))) when `reduced`, else of f(x)) and the gradient
    of real(sum(f(x))) w.r.t. x equal TensorFlow's."""
    for f, (value, grad) in zip(fns, expected):
        with tf.GradientTape() as tape:
            tape.watch(x)
            v = f(x)
            y = tf.math.real(tf.reduce_sum(v))
        np.testing.assert_allclose((y if reduced else v).numpy(), value, rtol=1e-7)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), grad, rtol=1e-6, atol=atol)


def test_complex_inverse_solve_and_determinants_match_tensorflow():
    # Values and gradients printed by TensorFlow 2.21 for the same expressions.
    a = tf.constant([[2 + 1j, 0.5 - 0.3j], [0.2 + 0.4j, 1.5 - 1j]], tf.complex128)
    b = tf.constant([[1 - 1j], [0.5 + 2j]], tf.complex128)
    c = tf.constant([[0.3 - 1j, 2 + 0.5j], [1j, -1.0]], tf.complex128)
    fns = [lambda a: tf.linalg.inv(a) * c, lambda a: tf.linalg.solve(a, b) * c[:, :1],
           lambda a: tf.linalg.det(a) * c[0, 0], lambda a: tf.linalg.slogdet(a)[1] * c[0, 1],
           lambda a: tf.linalg.slogdet(a)[0] * c[0, 1],
           lambda a: tf.linalg.solve(a, b, adjoint=True) * c[:, :1]]
    expected = [
        (-0.73329705, [[0.21596195 - 0.17003706j, -0.42545224 + 0.32556908j],
                       [-0.10603136 + 0.33345982j, 0.18184999 - 0.39685441j]]),
        (-1.89622398, [[0.45399691 - 0.07162857j, -0.51069696 + 0.3621319j],
                       [-0.53305733 + 0.32568699j, 0.45344536 - 0.72001542j]]),
        (0.494, [[0.07319227 + 1.88072935j, -0.46069669 + 0.07588515j],
                 [-0.05258103 - 0.60649422j, 2.07044224 + 1.07854946j]]),
        (2.68771143, [[0.95455164 + 0.16907062j, -0.01224656 + 0.24016873j],
                      [-0.31099469 - 0.03993741j, 0.76949245 - 0.92393523j]]),
        (2.05540352, [[0, 0], [0, 0]]),
        (-0.99115526, [[-0.01507828 + 0.28950304j, -0.30420161 - 0.09382302j],
                       [-0.7126936 + 0.0513947j, 0.13672532 - 0.77265555j]])]
    _check_against_tensorflow(a, fns, expected)
    assert tf.linalg.slogdet(a)[1].dtype is tf.complex128  # as TF: both outputs complex


def test_complex_cholesky_and_triangular_solves_match_tensorflow():
    # Values and gradients printed by TensorFlow 2.21 for the same expressions.
    m = tf.constant([[2 + 1j, 0.5 - 0.3j], [0.2 + 0.4j, 1.5 - 1j]], tf.complex128)
    b = tf.constant([[1 - 1j], [0.5 + 2j]], tf.complex128)
    c = tf.constant([[0.3 - 1j, 2 + 0.5j], [1j, -1.0]], tf.complex128)
    gram = lambda m: tf.matmul(m, m, adjoint_b=True)  # noqa: E731 - Hermitian PD
    fns = [lambda m: tf.linalg.cholesky(gram(m) + tf.eye(2, dtype=m.dtype)) * c,
           lambda m: tf.linalg.triangular_solve(m, b) * c[:, :1],
           lambda m: tf.linalg.triangular_solve(m, b, lower=False, adjoint=True) * c[:, :1],
           lambda m: tf.cast(tf.linalg.logdet(gram(m)), m.dtype) * c[1, 1],
           lambda m: tf.linalg.cholesky_solve(tf.linalg.cholesky(gram(m)), b) * c[:, :1]]
    expected = [
        (-1.42836657, [[0.10138021 + 0.23643623j, 0.62894316 + 0.34910731j],
                       [0.54819295 - 0.76107539j, -0.79490261 + 0.28777734j]]),
        (-1.54923077, [[0.29323077 - 0.11415385j, 0], [-0.21538462 + 0.27692308j,
                                                         0.30390533 - 0.55337278j]]),
        (-0.86307692, [[-0.13261538 + 0.35907692j, -0.27692308 - 0.21538462j],
                       [0, 0.18745562 - 0.56189349j]]),
        (-2.68771143, [[-0.85862022 - 0.38372568j, 0.06803647 - 0.22315961j],
                       [0.28330385 + 0.11076337j, -0.94162471 + 0.68852905j]]),
        (-1.25374201, [[0.51382665 + 0.11097462j, -0.60407824 + 0.48389398j],
                       [-0.86410272 - 0.26881834j, 0.94889028 - 0.67307587j]])]
    _check_against_tensorflow(m, fns, expected)
    assert tf.linalg.logdet(gram(m)).dtype is tf.float64  # as TF: real for complex input


def test_complex_prod_and_squared_difference_match_tensorflow():
    # Values and gradients printed by TensorFlow 2.21 (Prod's gradient in the conjugate
    # direction; SquaredDifference is conj(x - y)(x - y)).
    z = tf.constant([[1 + 2j, -0.5 + 0.25j, 0.3 - 1j], [2j, 1.5, -1 - 1j]], tf.complex128)
    c = tf.constant([0.3 - 1j, 2 + 0.5j], tf.complex128)
    w = tf.constant([[0.5 + 1j, 1 - 1j, 2j], [1.0, -1j, 0.5]], tf.complex128)
    fns = [lambda z: tf.reduce_prod(z, axis=1) * c, lambda z: tf.math.squared_difference(z, w),
           lambda z: tf.reduce_prod(z) * c[0]]
    expected = [
        ([0.46 + 1.2825j, 7.5 - 4.5j], [[0.605 - 0.0725j, 0.29 + 2.42j, -1.05 - 0.775j],
                                        [-2.25 + 3.75j, 5 + 3j, -1.5 - 6j]]),
        ([[1.25, 3.8125, 9.09], [5, 3.25, 3.25]], [[1 + 2j, -3 + 2.5j, 0.6 - 6j],
                                                   [-2 + 4j, 3 + 2j, -3 - 2j]]),
        (5.2275 + 2.4675j, [[2.0325 + 1.5975j, -6.39 + 8.13j, -0.825 - 5.475j],
                            [1.23375 + 2.61375j, 3.485 - 1.645j, -3.8475 - 1.38j]])]
    _check_against_tensorflow(z, fns, expected, reduced=False)


def test_complex_self_adjoint_eig_matches_tensorflow():
    # Values and gradients printed by TensorFlow 2.21; the eigenvector loss uses v * conj(v),
    # which does not depend on the eigenvectors' phases.
    m = tf.constant([[2 + 1j, 0.5 - 0.3j, 0.1j], [0.2 + 0.4j, 1.5 - 1j, 0.3],
                     [-0.7, 0.2 + 0.2j, 1j]], tf.complex128)
    c = tf.constant([[0.3 - 1j, 2 + 0.5j, 1.0], [1j, -1.0, 0.5 + 0.5j], [0.2, 0.1 - 0.4j, 2.0]],
                    tf.complex128)
    herm = lambda m: m + tf.linalg.adjoint(m)  # noqa: E731
    fns = [lambda m: tf.linalg.eigh(herm(m))[0] * c[0],
           lambda m: tf.linalg.eigvalsh(herm(m)) * c[1],
           lambda m: (lambda e, v: v * tf.math.conj(v) * c)(*tf.linalg.eigh(herm(m)))]
    expected = [
        (9.76115209, [[2.4080579, -0.431682 + 0.6333463j, -0.4188152 + 0.261495j],
                      [-0.431682 - 0.6333463j, 3.3485366, 0.6980983 + 0.0030907j],
                      [-0.4188152 - 0.261495j, 0.6980983 - 0.0030907j, 0.8434055]]),
        (-0.24962778, [[0.2696064, 0.768978 - 0.9693512j, 0.0760744 - 0.211241j],
                       [0.768978 + 0.9693512j, -1.1506509, -0.4507294 - 0.1002308j],
                       [0.0760744 + 0.211241j, -0.4507294 + 0.1002308j, -0.1189555]]),
        (0.84600312, [[-0.8086396, 0.2688404 - 0.3700408j, 0.1936217 - 0.1288606j],
                      [0.2688404 + 0.3700408j, 0.8220135, 0.0984953 - 0.1810787j],
                      [0.1936217 + 0.1288606j, 0.0984953 + 0.1810787j, -0.0133739]])]
    _check_against_tensorflow(m, fns, expected, atol=2e-7)  # TF's values to 7 digits
    assert tf.linalg.eigvalsh(herm(m)).dtype is tf.complex128  # as TF


def test_complex_qr_matches_tensorflow():
    # Values and gradients printed by TensorFlow 2.21 (its QR gradient has a correction term
    # for complex matrices); tall and square inputs.
    m = tf.constant([[2 + 1j, 0.5 - 0.3j], [0.2 + 0.4j, 1.5 - 1j], [-0.7, 0.2 + 0.2j]],
                    tf.complex128)
    c = tf.constant([[0.3 - 1j, 2 + 0.5j], [1j, -1.0], [0.2, 0.1 - 0.4j]], tf.complex128)
    fns = [lambda m: tf.linalg.qr(m)[0] * c, lambda m: tf.linalg.qr(m)[1] * c[:2],
           lambda m: tf.linalg.qr(m[:2])[0] * c[:2]]
    expected = [
        (0.46187854, [[-0.0857012 - 0.1560251j, -0.2041679 - 0.0725119j],
                      [0.8532314 + 0.3715099j, 0.3539101 + 0.3739262j],
                      [-0.0116818 + 0.1935618j, -0.3721359 - 0.0109067j]]),
        (0.17445462, [[-0.376048 + 0.1521917j, -1.8983635 - 0.2218445j],
                      [-1.7296559 + 0.2943539j, 0.5353966 - 0.8574198j],
                      [-0.1606889 - 0.2611993j, 0.7375487 - 0.1766489j]]),
        (0.47349039, [[-0.05884 - 0.2055185j, -0.1032532 - 0.0314796j],
                      [0.9343917 + 0.3408004j, 0.3185738 + 0.4356779j], [0, 0]])]
    _check_against_tensorflow(m, fns, expected, atol=2e-7)


def test_complex_svd_matches_tensorflow():
    # Values and gradients printed by TensorFlow 2.21 (with its phase term for complex
    # matrices); the losses on u and v use |u|^2, |v|^2, which do not depend on the singular
    # vectors' phases. tf.linalg.svd's s is real for a complex matrix, as TF's.
    m = tf.constant([[2 + 1j, 0.5 - 0.3j], [0.2 + 0.4j, 1.5 - 1j], [-0.7, 0.2 + 0.2j]],
                    tf.complex128)
    c = tf.constant([[0.3 - 1j, 2 + 0.5j], [1j, -1.0], [0.2, 0.1 - 0.4j]], tf.complex128)
    absq = lambda x: x * tf.math.conj(x)  # noqa: E731
    fns = [lambda m: tf.cast(tf.linalg.svd(m)[0], m.dtype) * c[0],
           lambda m: absq(tf.linalg.svd(m)[1]) * c,
           lambda m: absq(tf.linalg.svd(m)[2]) * c[:2],
           lambda m: tf.cast(tf.linalg.svd(m, compute_uv=False), m.dtype) * c[1],
           lambda m: absq(tf.linalg.svd(tf.transpose(m))[1]) * c[:2],
           lambda m: (lambda s, u, v: tf.matmul(u * tf.cast(s, m.dtype), v, adjoint_b=True)
                      * c)(*tf.linalg.svd(m))]
    expected = [
        (3.86478803, [[0.6831587 + 0.223551j, -0.274569 + 0.6368549j],
                      [-0.60908 - 0.4859232j, 1.217339 - 0.9091909j],
                      [-0.2336522 - 0.1280134j, 0.2757488 - 0.1722982j]]),
        (-0.03243356, [[-0.7038914 - 0.3333886j, 0.0474666 - 0.1027083j],
                       [0.3721665 + 0.6487999j, 0.6956424 - 0.4510238j],
                       [0.3985737 + 0.0257251j, 0.2979477 + 0.3879855j]]),
        (0.06287868, [[-0.8510556 - 0.3753428j, 0.5579085 - 0.5354852j],
                      [0.2029195 + 0.0944959j, 0.8058836 - 0.4957433j],
                      [0.2955507 + 0.0544306j, 0.0592184 + 0.2497255j]]),
        (-1.53546477, [[-0.2499655 - 0.0603424j, 0.1814173 - 0.3674118j],
                       [0.3459915 + 0.2909603j, -0.5735636 + 0.4358454j],
                       [0.0845013 + 0.0701089j, -0.1386009 + 0.10678j]]),
        (0.06287868, [[-0.8510556 - 0.3753428j, 0.5579085 - 0.5354852j],
                      [0.2029195 + 0.0944959j, 0.8058836 - 0.4957433j],
                      [0.2955507 + 0.0544306j, 0.0592184 + 0.2497255j]]),
        (0.81, [[0.3 + 1j, 2 - 0.5j], [-1j, -1], [0.2, 0.1 + 0.4j]])]
    _check_against_tensorflow(m, fns, expected, atol=2e-7)
    assert tf.linalg.svd(m)[0].dtype is tf.float64

"""tf.signal.fftnd/ifftnd/rfftnd/irfftnd and the FFTND ops: values against numpy.fft in
float64 (TF's CPU build has no kernel for these ops: ndflow computes them), graph-mode static
shapes, dtypes and the wrappers' errors against TF 2.21 (tests/fixtures/fftnd), the kernel's
checks, and TF's lack of a gradient."""

import json
import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "fftnd", "cases.json")
with open(FIXTURE) as _f:
    CASES = json.load(_f)

rng = np.random.default_rng(7)


def _data(shape, dtype):
    x = rng.uniform(-1, 1, shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.uniform(-1, 1, shape)
    return x.astype(dtype)


NP = {"fftnd": np.fft.fftn, "ifftnd": np.fft.ifftn, "rfftnd": np.fft.rfftn,
      "irfftnd": np.fft.irfftn}

# (fn, shape, dtype, fft_length, axes, norm)
VALUE_CASES = [
    ("fftnd", (4, 6), "complex128", None, None, None),
    ("fftnd", (3, 4, 5), "complex128", None, None, "ortho"),
    ("fftnd", (2, 4, 6), "complex128", [5, 8], [1, 2], "forward"),
    ("fftnd", (2, 4, 6), "complex128", [3, 4], [-2, -1], None),
    ("fftnd", (2, 4, 6), "complex64", [7], [-1], "ortho"),
    ("ifftnd", (3, 5), "complex128", None, None, None),
    ("ifftnd", (2, 3, 5), "complex128", [4, 2, 7], [0, 1, 2], "ortho"),
    ("ifftnd", (2, 3, 5), "complex64", [6, 4], [1, 2], "forward"),
    ("rfftnd", (4, 6), "float64", None, None, None),
    ("rfftnd", (2, 4, 7), "float64", [5, 9], [1, 2], "ortho"),
    ("rfftnd", (2, 4, 6), "float64", [3, 4], [1, 2], "forward"),
    ("rfftnd", (3, 4, 6), "float32", None, None, None),
    ("irfftnd", (4, 4), "complex128", None, None, None),
    ("irfftnd", (2, 4, 4), "complex128", [6, 9], [1, 2], "ortho"),
    ("irfftnd", (2, 4, 5), "complex128", [3, 5], [1, 2], "forward"),
    ("irfftnd", (3, 4, 5), "complex64", [3, 4, 7], [0, 1, 2], None),
]


@pytest.mark.parametrize("fn,shape,dtype,fft_length,axes,norm", VALUE_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(VALUE_CASES)])
def test_values_match_numpy(fn, shape, dtype, fft_length, axes, norm):
    x = _data(shape, dtype)
    # A tensor keeps its dtype; NumPy float64/complex128 would convert to the 32-bit preferred
    # dtypes, as in TF.
    got = getattr(tf.signal, fn)(tf.constant(x), fft_length=fft_length, axes=axes,
                                 norm=norm).numpy()
    axes_np = list(range(len(shape))) if axes is None else [a % len(shape) for a in axes]
    if fn == "irfftnd" and fft_length is None:
        fft_length = list(shape[:-1]) + [2 * (shape[-1] - 1)]
    want = NP[fn](x.astype(np.complex128 if dtype.startswith("complex") else np.float64),
                  s=fft_length, axes=axes_np, norm=norm)
    tol = 1e-12 if dtype.endswith("128") or dtype == "float64" else 2e-5
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
    real_out = fn == "irfftnd"
    assert got.dtype == (np.dtype(dtype).type(0).real.dtype if real_out else
                         np.result_type(np.dtype(dtype), np.complex64))


def test_raw_ops_crop_and_pad_inner_dims():
    z = _data((2, 4, 6), "complex128")
    got = tf.fftnd(tf.constant(z), [3, 9], [1, 2]).numpy()
    np.testing.assert_allclose(got, np.fft.fftn(z, s=[3, 9], axes=[1, 2]), atol=1e-12)
    x = _data((2, 4, 6), "float64")
    got = tf.rfftnd(tf.constant(x), [3, 5], [-2, -1], Tcomplex=tf.complex128).numpy()
    np.testing.assert_allclose(got, np.fft.rfftn(x, s=[3, 5], axes=[1, 2]), atol=1e-12)
    y = np.fft.rfftn(x, axes=[1, 2])
    got = tf.irfftnd(tf.constant(y), [4, 3], [1, 2], Treal=tf.float64).numpy()
    np.testing.assert_allclose(got, np.fft.irfftn(y, s=[4, 3], axes=[1, 2]), atol=1e-12)
    assert tf.compat.v1.fftnd is tf.fftnd and tf.compat.v1.signal.rfftnd is tf.signal.rfftnd


def test_empty_inputs_pass_through():
    z = np.zeros((2, 0, 3), np.complex64)
    assert tf.signal.fftnd(z, fft_length=[4, 5], axes=[1, 2]).shape == (2, 4, 5)
    assert tf.rfftnd(np.zeros((0, 6), np.float32), [0, 6], [0, 1]).shape == (0, 4)
    assert tf.rfftnd(np.ones((2, 6), np.float32), [2, 0], [0, 1]).shape == (2, 0)


def _graph_input(shape, dtype):
    return tf.compat.v1.placeholder(tf.as_dtype(dtype), shape)


def _record(build):
    try:
        y = build()
    except Exception as e:  # noqa: BLE001 - comparing with TF's recorded error
        return {"error": type(e).__name__, "message": str(e)}
    return {"shape": None if y.shape.rank is None else y.shape.as_list(), "dtype": y.dtype.name}


def _expected(case):
    keys = ("error", "message") if "error" in case else ("shape", "dtype")
    return {k: case[k] for k in keys}


@pytest.mark.parametrize("case", CASES["wrappers"],
                         ids=[f"{c['fn']}-{i}" for i, c in enumerate(CASES["wrappers"])])
def test_wrapper_graph_shapes_and_errors_match_tf(case):
    with tf.Graph().as_default():
        x = _graph_input(case["in_shape"], case["in_dtype"])
        got = _record(lambda: getattr(tf.signal, case["fn"])(x, **case["kwargs"]))
    assert got == _expected(case)


@pytest.mark.parametrize("case", CASES["raw"],
                         ids=[f"{c['op']}-{i}" for i, c in enumerate(CASES["raw"])])
def test_raw_op_graph_shapes_match_tf(case):
    with tf.Graph().as_default():
        x = _graph_input(case["in_shape"], case["in_dtype"])
        got = _record(lambda: getattr(tf.raw_ops, case["op"])(
            input=x, fft_length=case["fft_length"], axes=case["axes"]))
    assert got == _expected(case)


def test_eager_tf_has_no_cpu_kernel_ndflow_computes():
    # The documented difference: TF 2.21's CPU build raises NotFoundError eagerly.
    assert CASES["eager"]["error"] == "NotFoundError"
    z = np.ones((2, 3), np.complex64)
    np.testing.assert_allclose(tf.signal.fftnd(z).numpy(), np.fft.fftn(z), atol=1e-6)


def test_graph_run_gives_runtime_shape():
    x = _data((2, 4, 6), "float64")

    @tf.function
    def f(a):
        return tf.signal.rfftnd(a, fft_length=[5, 9], axes=[1, 2])

    out = f(tf.constant(x))
    # TF's shape function keeps the (padded) input's static shape; the value is the spectrum.
    assert f.get_concrete_function(tf.TensorSpec([2, 4, 6], tf.float64)).structured_outputs \
        .shape.as_list() == [2, 5, 9]
    np.testing.assert_allclose(out.numpy(), np.fft.rfftn(x, s=[5, 9], axes=[1, 2]), atol=1e-12)


@pytest.mark.parametrize("call,message", [
    (lambda: tf.signal.fftnd(np.ones((2, 3), np.complex64), axes=[1]),
     "fft_length must have shape [1], but got: 2."),
    (lambda: tf.fftnd(np.ones((2, 3, 4), np.complex64), [3, 4], [0, 2]),
     "axes must be successive and ascending."),
    (lambda: tf.fftnd(np.ones((2, 3, 4), np.complex64), [2, 3], [0, 1]),
     "The last axis to perform transform on must be -1."),
    (lambda: tf.fftnd(np.ones((3,), np.complex64), [2, 3], [0, 1]),
     "Input must have rank of at least 2 but got: [3]"),
    (lambda: tf.fftnd(np.ones((2, 3), np.complex64), [2, -3], [0, 1]),
     "fft_length[1] must >= 0, but got: -3"),
    (lambda: tf.rfftnd(np.ones((2, 3), np.float32), [2, 5], [0, 1]),
     "Input dimension 1 must have length of at least 5 but got: 3"),
    (lambda: tf.irfftnd(np.ones((2, 3), np.complex64), [2, 6], [0, 1]),
     "Input dimension 1 must have length of at least 4 but got: 3"),
    (lambda: tf.rfftnd(np.ones((2, 3), np.float32), [2, 3], [0, 1], Tcomplex=tf.complex128),
     "Wrong types for forward real FFT: in=float out=complex128"),
])
def test_kernel_errors(call, message):
    with pytest.raises(InvalidArgumentError) as e:
        call()
    assert message in str(e.value)


def test_no_gradient_registered_as_in_tf():
    x = tf.constant(_data((3, 4), "complex64"))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.signal.fftnd(x)
    with pytest.raises(LookupError, match="FFTND"):
        tape.gradient(y, x)

"""Property-based tests (hypothesis) over everyday ops: for generated shapes, dtypes, values
and arguments, valid or not, every call either matches a NumPy reference or raises a
TensorFlow-typed error (InvalidArgumentError / ValueError / TypeError) - never a crash, a
leaked Python or torch exception, or a wrong value - eagerly, in tf.function and in a
Session."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ndflow as tf
from ndflow.core.errors import OpError

TYPED = (OpError, ValueError, TypeError)
DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64}
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def arrays(dtype_name: str, max_rank: int = 3):
    dtype = np.dtype(DTYPES[dtype_name])
    elements = st.floats(-8, 8, width=32) if dtype.kind == "f" else st.integers(-20, 20)
    return hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=max_rank, min_side=0,
                                              max_side=4), elements=elements)


def _modes(fn, *arrays_):
    """fn's result in eager mode, in tf.function and in a Session (None: a typed error)."""
    results = []
    for mode in ("eager", "function", "session"):
        try:
            if mode == "eager":
                out = fn(*[tf.constant(a) for a in arrays_])
            elif mode == "function":
                out = tf.function(fn)(*[tf.constant(a) for a in arrays_])
            else:
                with tf.Graph().as_default():
                    phs = [tf.compat.v1.placeholder(tf.as_dtype(a.dtype), a.shape) for a in arrays_]
                    t = fn(*phs)
                    with tf.compat.v1.Session() as sess:
                        out = sess.run(t, dict(zip(phs, arrays_)))
            results.append(np.asarray(out.numpy() if hasattr(out, "numpy") else out))
        except TYPED as e:
            assert str(e), f"{mode}: empty error message"
            results.append(e)
    return results


def _check(results, expected, rtol=1e-5, atol=1e-5):
    """Each mode: the NumPy value (when NumPy has one) or a typed error where NumPy fails."""
    for got in results:
        if isinstance(got, Exception):
            assert expected is None or isinstance(expected, Exception), \
                f"raised {type(got).__name__}: {got} but NumPy gives {expected}"
            continue
        assert not isinstance(expected, Exception), f"NumPy raised {expected!r}, ndflow gave {got}"
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def _numpy(fn):
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn())
    except (ValueError, IndexError, TypeError, np.exceptions.AxisError) as e:
        return e


BINARY = {"add": (tf.add, np.add), "subtract": (tf.subtract, np.subtract),
          "multiply": (tf.multiply, np.multiply), "maximum": (tf.maximum, np.maximum),
          "minimum": (tf.minimum, np.minimum)}


@SETTINGS
@given(st.sampled_from(sorted(BINARY)), st.sampled_from(sorted(DTYPES)), st.data())
def test_broadcasting_binary_ops(name, dtype, data):
    x, y = data.draw(arrays(dtype)), data.draw(arrays(dtype))
    ours, ref = BINARY[name]
    expected = _numpy(lambda: ref(x, y).astype(x.dtype))
    _check(_modes(ours, x, y), expected)


REDUCTIONS = {"reduce_sum": (tf.reduce_sum, np.sum), "reduce_max": (tf.reduce_max, np.max),
              "reduce_min": (tf.reduce_min, np.min)}


@SETTINGS
@given(st.sampled_from(sorted(REDUCTIONS)), st.sampled_from(["float32", "int32"]), st.data(),
       st.booleans())
def test_reductions_with_any_axis(name, dtype, data, keepdims):
    x = data.draw(arrays(dtype))
    axis = data.draw(st.one_of(st.none(), st.integers(-4, 4),
                               st.lists(st.integers(-4, 4), max_size=3)))
    ours, ref = REDUCTIONS[name]

    def numpy_reduction():
        axes = axis if axis is None or isinstance(axis, int) else tuple(axis)
        if x.ndim == 0 and axes not in (None, ()):
            raise ValueError("a scalar has no axis")  # TF: NumPy allows axis 0 here
        if isinstance(axes, tuple) and len({a % max(x.ndim, 1) for a in axes}) != len(axes):
            raise ValueError("duplicate axis")  # TF refuses repeated axes too
        if x.size == 0 and ref is not np.sum:
            raise ValueError("empty")  # NumPy has no identity here; TF gives +-inf: skip
        return ref(x, axis=axes, keepdims=keepdims)
    expected = _numpy(numpy_reduction)
    if isinstance(expected, ValueError) and str(expected) == "empty":
        return
    results = _modes(lambda t: ours(t, axis=axis, keepdims=keepdims), x)
    _check(results, expected)


@SETTINGS
@given(st.sampled_from(["float32", "int64"]), st.data())
def test_reshape_to_any_shape(dtype, data):
    x = data.draw(arrays(dtype))
    target = data.draw(st.lists(st.integers(-2, 5), max_size=3))
    expected = _numpy(lambda: x.reshape(target) if target.count(-1) <= 1 and
                      all(d >= -1 for d in target) else
                      (_ for _ in ()).throw(ValueError("bad shape")))
    if not isinstance(expected, Exception) and x.size == 0 and -1 in target:
        return  # TF's zero-size rule for -1 differs from NumPy's (tested in test_edges)
    _check(_modes(lambda t: tf.reshape(t, target), x), expected)


@SETTINGS
@given(st.sampled_from(["float32", "int32"]), st.data())
def test_gather_with_any_indices(dtype, data):
    x = data.draw(arrays(dtype, max_rank=2))
    indices = np.array(data.draw(st.lists(st.integers(-2, 6), max_size=4)), np.int32)
    axis = data.draw(st.integers(-3, 2))

    def numpy_gather():
        if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
            raise ValueError("axis")
        n = x.shape[axis]
        if np.any((indices < 0) | (indices >= n)):
            raise IndexError("index")  # TF refuses negative indices on CPU too
        return np.take(x, indices, axis=axis)
    _check(_modes(lambda t: tf.gather(t, indices, axis=axis), x), _numpy(numpy_gather))


@SETTINGS
@given(st.sampled_from(["float32", "int32"]), st.data())
def test_transpose_with_any_perm(dtype, data):
    x = data.draw(arrays(dtype))
    perm = data.draw(st.lists(st.integers(-1, 3), max_size=3))
    expected = _numpy(lambda: np.transpose(x, perm) if sorted(perm) == list(range(x.ndim))
                      else (_ for _ in ()).throw(ValueError("perm")))
    _check(_modes(lambda t: tf.transpose(t, perm), x), expected)

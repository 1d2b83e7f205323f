"""Gradient checking: the theoretical Jacobian (ndflow's gradients, one backward pass per
output element) beside central finite differences, as TensorFlow's gradient checkers.

- `tf.test.compute_gradient(f, x, delta=1/1024)` (TF2): per argument, Jacobians of shape
  (y_size, x_size); eagerly through a GradientTape, in a graph through `tf.gradients` run by
  the default Session.
- `tf.compat.v1.test.compute_gradient(x, x_shape, y, y_shape, ...)` (TF1): the graph version,
  feeding `x` (any tensor) and the output gradient; Jacobians of shape (x_size, y_size).
  `compute_gradient_error` is the largest absolute difference between them.
"""

from __future__ import annotations

import numpy as np

from ndflow.autodiff.gradients import gradients
from ndflow.autodiff.tape import GradientTape
from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import identity, placeholder
from ndflow.ops.array_fill import ones
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.runtime.session import get_default_session

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def _numpy(value):
    if isinstance(value, IndexedSlices):
        value = convert_to_tensor(value)
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def _check_float(dtype, what: str) -> None:
    if dtype not in _FLOATS:
        raise AssertionError(f"Cannot compute gradient for unsupported type {dtype.name} of "
                             f"{what}")


class _Spec:
    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape


def _as_array(value) -> np.ndarray:
    """A NumPy copy of an argument, typed as convert_to_tensor types it (Python floats are
    float32), built outside any graph."""
    if hasattr(value, "numpy"):
        return np.array(value.numpy())
    a = np.array(value)
    return a.astype(np.float32) if a.dtype == np.float64 and not isinstance(
        value, (np.ndarray, np.generic)) else a


def _runner(f, xs):
    """(f on NumPy arguments -> NumPy, its backward pass (dy, param, args) -> dx NumPy)."""
    if context.executing_eagerly():
        def forward(*args):
            return _numpy(f(*map(convert_to_tensor, args)))

        def backward(dy, param, args):
            args = [convert_to_tensor(a) for a in args]
            with GradientTape() as tape:
                tape.watch(args[param])
                y = f(*args)
            return tape.gradient(y, args[param], output_gradients=convert_to_tensor(dy))
        return forward, backward
    phs = [placeholder(x.dtype, x.shape) for x in xs]
    y = f(*phs)
    dy = placeholder(y.dtype, y.shape)
    dxs = gradients(y, phs, grad_ys=dy)
    sess = get_default_session()

    def forward(*args):
        return sess.run(y, dict(zip(phs, args)))

    def backward(dy_value, param, args):
        if dxs[param] is None:
            return None
        return sess.run(dxs[param], {**dict(zip(phs, args)), dy: dy_value})
    return forward, backward


@tf_export("test.compute_gradient", v1=[])
def compute_gradient(f, x, delta=None):
    """(theoretical Jacobians, numerical Jacobians), one (y_size, x_size) array per argument."""
    if not isinstance(x, (list, tuple)):
        raise ValueError("`x` must be a list or tuple of values convertible to a Tensor "
                         f"(arguments to `f`), not a {type(x)}")
    delta = 1.0 / 1024 if delta is None else delta
    args = [_as_array(v) for v in x]
    xs = [_Spec(dtypes.as_dtype(a.dtype), list(a.shape)) for a in args]
    forward, backward = _runner(f, xs)
    y = np.asarray(forward(*args))
    y_dtype = dtypes.as_dtype(y.dtype)
    theoretical, numerical = [], []
    for param, xt in enumerate(xs):
        _check_float(xt.dtype, f"argument {param}")
        _check_float(y_dtype, "y")
        real = xt.dtype.np_dtype
        jt = np.zeros((y.size, args[param].size), dtype=real)
        dy = np.zeros(y.shape, dtype=y.dtype)
        for row in range(y.size):
            dy.flat[row] = 1
            grad = backward(dy, param, args)
            if grad is not None:
                jt[row] = _numpy(grad).ravel()
            dy.flat[row] = 0
        jn = np.zeros_like(jt)
        flat = args[param].reshape(-1)
        for col in range(flat.size):
            original = flat[col]
            flat[col] = original + delta
            y_pos = np.asarray(forward(*args))
            flat[col] = original - delta
            y_neg = np.asarray(forward(*args))
            flat[col] = original
            jn[:, col] = ((y_pos - y_neg) / np.asarray(2 * delta, y.dtype)).ravel()
        theoretical.append(jt)
        numerical.append(jn)
    return tuple(theoretical), tuple(numerical)


def _v1_jacobians(x, x_shape, x_data, y, y_shape, delta, extra_feed_dict):
    _check_float(x.dtype, "x")
    _check_float(y.dtype, "y")
    dy = identity(ones(y_shape, dtype=y.dtype))
    (dx,) = gradients(y, [x], grad_ys=dy)
    sess = get_default_session()
    extra = dict(extra_feed_dict or {})
    x_size, y_size = int(np.prod(x_shape)), int(np.prod(y_shape))
    jt = np.zeros((x_size, y_size), dtype=x.dtype.np_dtype)
    dy_data = np.zeros(y_shape, dtype=y.dtype.np_dtype)
    for col in range(y_size):
        dy_data.flat[col] = 1
        if dx is not None:
            jt[:, col] = _numpy(sess.run(dx, {**extra, x: x_data, dy: dy_data})).ravel()
        dy_data.flat[col] = 0
    jn = np.zeros_like(jt)
    for row in range(x_size):
        pos, neg = x_data.copy(), x_data.copy()
        pos.flat[row] += delta
        neg.flat[row] -= delta
        diff = sess.run(y, {**extra, x: pos}) - sess.run(y, {**extra, x: neg})
        jn[row] = (np.asarray(diff) / (2 * delta)).ravel()
    return jt, jn


@tf_export(v1=["test.compute_gradient"])
def compute_gradient_v1(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                        init_targets=None, extra_feed_dict=None):
    """TF1's: (theoretical, numerical) Jacobians of shape (x_size, y_size) for a tensor `x`
    (lists of pairs for a list of tensors), x fed `x_init_value` or uniform [0, 1) values."""
    sess = get_default_session()
    if sess is None:
        raise ValueError("compute_gradient needs a default Session (`with sess.as_default()`)")
    if init_targets is not None:
        sess.run(init_targets)
    xs, shapes = (x, x_shape) if isinstance(x, (list, tuple)) else ([x], [x_shape])
    inits = x_init_value if isinstance(x, (list, tuple)) else [x_init_value]
    inits = inits if inits is not None else [None] * len(xs)
    out = []
    for xi, shape, init in zip(xs, shapes, inits):
        data = (np.asarray(init, dtype=xi.dtype.np_dtype) if init is not None
                else np.random.random_sample(shape).astype(xi.dtype.np_dtype))
        if list(data.shape) != list(shape):
            raise ValueError(f"x_init_value has shape {list(data.shape)}, expected "
                             f"{list(shape)}")
        out.append(_v1_jacobians(xi, shape, data, y, y_shape, delta, extra_feed_dict))
    return out if isinstance(x, (list, tuple)) else out[0]


@tf_export(v1=["test.compute_gradient_error"])
def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           init_targets=None, extra_feed_dict=None):
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    grads = compute_gradient_v1(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                                extra_feed_dict)
    pairs = grads if isinstance(grads, list) else [grads]
    return max((float(np.max(np.abs(t - n))) if t.size else 0.0) for t, n in pairs)

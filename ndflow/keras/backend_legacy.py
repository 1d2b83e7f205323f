"""`tf.keras.backend`'s Keras 1/2 functions (`from tensorflow.keras import backend as K`),
which older programs' custom losses, metrics and layers call: tensor math and reductions,
shapes, comparisons, variables and their updates, random draws, activations. Each is the
TensorFlow computation Keras 3.15's legacy backend performs (keras/src/legacy/backend.py),
so values, dtypes and defaults are the same (e.g. `K.mean` of booleans as floatx, `K.clip`
with max < min clipping to min, `K.epsilon()` in the cross-entropies). The nn, convolution
and loss functions are in backend_legacy_nn.py."""

from __future__ import annotations

import builtins
import math as py_math

import numpy as np

from ndflow.core import dtypes, scopes
from ndflow.core.api_export import keras_export
from ndflow.core.tensor import Tensor
from ndflow.keras import backend_legacy_docs, backend_legacy_math_docs, docstrings
from ndflow.keras.backend_functions import floatx, get_value
from ndflow.ops import (
    arithmetic,
    array_builders,
    array_core,
    array_fill,
    array_gather,
    array_range,
    array_reorder,
    array_slicing,
    array_transpose,
    comparison,
    einsum,
    gather_batch,
    linalg,
    math,
    math_cumulative,
    math_trig,
    norms,
    random,
    reduction,
    sort,
)
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast as _cast
from ndflow.ops.sparse_tensor import SparseTensor, sparse_tensor_to_dense
from ndflow.ops.variables import Variable

_UIDS: dict = {}


def _floatx_if_bool(x):
    return _cast(x, floatx()) if x.dtype == dtypes.bool else x


# -- elementwise -----------------------------------------------------------------------------
def _unary_of(fn):
    """A closure with Keras' signature (x) (no default-argument capture in the signature)."""
    def unary(x):
        return fn(x)
    return unary


def _binary_of(fn):
    def binary(x, y):
        return fn(x, y)
    return binary


for _name, _fn in (("abs", math.abs), ("exp", math.exp), ("log", arithmetic.log),
                   ("sqrt", math.sqrt), ("square", math.square), ("sign", math.sign),
                   ("round", math.round), ("sin", math_trig.sin), ("cos", math_trig.cos),
                   ("tanh", math.tanh), ("sigmoid", math.sigmoid), ("softsign", math.softsign)):
    _unary = _unary_of(_fn)
    _unary.__name__ = _unary.__qualname__ = _name
    globals()[_name] = keras_export(f"keras.backend.{_name}")(_unary)

for _name, _fn in (("equal", comparison.equal), ("not_equal", comparison.not_equal),
                   ("greater", comparison.greater), ("greater_equal", comparison.greater_equal),
                   ("less", comparison.less), ("less_equal", comparison.less_equal),
                   ("maximum", arithmetic.maximum), ("minimum", arithmetic.minimum)):
    _binary = _binary_of(_fn)
    _binary.__name__ = _binary.__qualname__ = _name
    globals()[_name] = keras_export(f"keras.backend.{_name}")(_binary)


@keras_export("keras.backend.pow")
def pow(x, a):  # noqa: A001 - Keras' name
    return arithmetic.pow(x, a)


@keras_export("keras.backend.clip")
def clip(x, min_value, max_value):
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)) and \
            max_value < min_value:
        max_value = min_value
    min_value = -np.inf if min_value is None else min_value
    max_value = np.inf if max_value is None else max_value
    return math.clip_by_value(x, min_value, max_value)


# -- reductions ------------------------------------------------------------------------------
def _reduction_of(fn, prepare):
    def reduce(x, axis=None, keepdims=False):
        return fn(prepare(x), axis=axis, keepdims=keepdims)
    return reduce


def _as_floatx(x):
    return _floatx_if_bool(convert_to_tensor(x))


def _as_bool(x):
    return _cast(x, dtypes.bool)


# (Keras name, TF reduction, how the input is taken: mean/std/var of booleans as floatx,
# all/any of anything as booleans)
for _name, _fn, _prepare in (
        ("sum", reduction.reduce_sum, None), ("prod", reduction.reduce_prod, None),
        ("mean", reduction.reduce_mean, _as_floatx), ("max", reduction.reduce_max, None),
        ("min", reduction.reduce_min, None), ("std", norms.reduce_std, _as_floatx),
        ("var", norms.reduce_variance, _as_floatx), ("all", reduction.reduce_all, _as_bool),
        ("any", reduction.reduce_any, _as_bool)):
    _reduce = _reduction_of(_fn, _prepare or (lambda x: x))
    _reduce.__name__ = _reduce.__qualname__ = _name
    globals()[_name] = keras_export(f"keras.backend.{_name}")(_reduce)


@keras_export("keras.backend.argmax")
def argmax(x, axis=-1):
    return reduction.argmax(x, axis)


@keras_export("keras.backend.argmin")
def argmin(x, axis=-1):
    return reduction.argmin(x, axis)


@keras_export("keras.backend.cumsum")
def cumsum(x, axis=0):
    return math_cumulative.cumsum(x, axis=axis)


@keras_export("keras.backend.cumprod")
def cumprod(x, axis=0):
    return math_cumulative.cumprod(x, axis=axis)


@keras_export("keras.backend.l2_normalize")
def l2_normalize(x, axis=None):
    return norms.l2_normalize(x, axis=axis)


@keras_export("keras.backend.in_top_k")
def in_top_k(predictions, targets, k):
    return sort.in_top_k(targets, predictions, k)


# -- shapes and layout -----------------------------------------------------------------------
@keras_export("keras.backend.shape")
def shape(x):
    return array_core.shape(x)


@keras_export("keras.backend.ndim")
def ndim(x):
    return x.shape.rank if isinstance(x, Tensor) else len(x.shape)


@keras_export("keras.backend.dtype")
def dtype(x):
    return dtypes.as_dtype(x.dtype).name


@keras_export("keras.backend.reshape")
def reshape(x, shape):  # noqa: F811 - Keras' argument name
    return array_core.reshape(x, shape)


@keras_export("keras.backend.flatten")
def flatten(x):
    return array_core.reshape(x, [-1])


@keras_export("keras.backend.batch_flatten")
def batch_flatten(x):
    x = convert_to_tensor(x)
    rest = x.shape.as_list()[1:]
    size = py_math.prod(rest) if None not in rest else -1
    return array_core.reshape(x, [-1, size]) if size != -1 else \
        array_core.reshape(x, array_core.stack([-1, reduction.reduce_prod(
            array_core.shape(x)[1:])]))


@keras_export("keras.backend.expand_dims")
def expand_dims(x, axis=-1):
    return array_core.expand_dims(x, axis)


@keras_export("keras.backend.squeeze")
def squeeze(x, axis):
    return array_core.squeeze(x, [axis])


@keras_export("keras.backend.stack")
def stack(x, axis=0):
    return array_core.stack(x, axis=axis)


@keras_export("keras.backend.concatenate")
def concatenate(tensors, axis=-1):
    dense = [sparse_tensor_to_dense(t) if isinstance(t, SparseTensor) else t for t in tensors]
    if axis < 0:
        rank = ndim(convert_to_tensor(dense[0]))
        axis = axis % rank if rank else 0
    return array_slicing.concat(dense, axis)


@keras_export("keras.backend.permute_dimensions")
def permute_dimensions(x, pattern):
    return array_transpose.transpose(x, perm=pattern)


@keras_export("keras.backend.transpose")
def transpose(x):
    return array_transpose.transpose(x)


@keras_export("keras.backend.reverse")
def reverse(x, axes):
    return array_reorder.reverse(x, [axes] if isinstance(axes, int) else list(axes))


@keras_export("keras.backend.tile")
def tile(x, n):
    return array_fill.tile(x, [n] if isinstance(n, int) else n)


@keras_export("keras.backend.repeat")
def repeat(x, n):
    if convert_to_tensor(x).shape.rank != 2:
        raise ValueError(f"`x` must be a 2D tensor. Received: x.shape={x.shape}")
    return array_fill.tile(array_core.expand_dims(x, 1), [1, n, 1])


@keras_export("keras.backend.repeat_elements")
def repeat_elements(x, rep, axis):
    return array_builders.repeat(x, rep, axis=axis)


@keras_export("keras.backend.gather")
def gather(reference, indices):
    return gather_batch.gather(reference, indices)


@keras_export("keras.backend.one_hot")
def one_hot(indices, num_classes):
    return array_gather.one_hot(indices, num_classes, axis=-1)


@keras_export("keras.backend.dot")
def dot(x, y):
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    if x.shape.rank is not None and (x.shape.rank > 2 or (y.shape.rank or 0) > 2):
        x_shape, y_shape = x.shape.as_list(), y.shape.as_list()
        y_perm = list(range(len(y_shape)))
        y_perm = [y_perm[-2]] + y_perm[:-2] + y_perm[-1:]
        x2 = array_core.reshape(x, [-1, x_shape[-1]])
        y2 = array_core.reshape(array_transpose.transpose(y, perm=y_perm), [y_shape[-2], -1])
        out_shape = [d if d is not None else -1 for d in x_shape[:-1]] + \
            y_shape[:-2] + y_shape[-1:]
        return array_core.reshape(linalg.matmul(x2, y2), out_shape)
    return linalg.matmul(x, y)


@keras_export("keras.backend.batch_dot")
def batch_dot(x, y, axes=None):
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    xn, yn = x.shape.rank, y.shape.rank
    if xn < 2 or yn < 2:
        raise ValueError("Cannot do batch_dot on inputs with rank < 2. Received inputs with "
                         f"tf.shapes {x.shape} and {y.shape}.")
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [xn - 1, yn - 1 if yn == 2 else yn - 2]
    a0, a1 = axes[0] % xn, axes[1] % yn
    if 0 in (a0, a1):
        raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not "
                         "batched, add a dummy batch dimension to your inputs using "
                         "K.expand_dims(x, 0)")
    letters = iter("acdefghijklmnopqrstuvwxy")   # "b": the batch axis, "z": an added one
    xs = ["b"] + [next(letters) for _ in range(xn - 1)]
    ys = ["b"] + [next(letters) for _ in range(yn - 1)]
    ys[a1] = xs[a0]
    out = [c for c in xs if c != xs[a0]] + [c for i, c in enumerate(ys) if i and i != a1]
    if len(out) == 1:   # both 2-D: a (batch, 1) result, as Keras gives
        out = out + ["z"]
        ys = ys + ["z"]
        y = array_core.expand_dims(y, -1)
    return einsum.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y)


# -- building tensors ------------------------------------------------------------------------
@keras_export("keras.backend.constant")
def constant(value, dtype=None, shape=None, name=None):
    return array_core.constant(value, dtype=dtype or floatx(), shape=shape, name=name)


@keras_export("keras.backend.arange")
def arange(start, stop=None, step=1, dtype="int32"):
    if stop is None and start < 0:
        start = 0
    out = array_range.range(start, stop, step)
    return out if dtype == "int32" else _cast(out, dtype)


@keras_export("keras.backend.zeros")
def zeros(shape, dtype=None, name=None):
    return variable(array_fill.zeros(shape, dtype=dtype or floatx()), dtype, name)


@keras_export("keras.backend.ones")
def ones(shape, dtype=None, name=None):
    return variable(array_fill.ones(shape, dtype=dtype or floatx()), dtype, name)


@keras_export("keras.backend.eye")
def eye(size, dtype=None, name=None):
    return variable(array_builders.eye(size, dtype=dtype or floatx()), dtype, name)


@keras_export("keras.backend.zeros_like")
def zeros_like(x, dtype=None, name=None):
    return array_fill.zeros_like(x, dtype=dtype, name=name)


@keras_export("keras.backend.ones_like")
def ones_like(x, dtype=None, name=None):
    return array_fill.ones_like(x, dtype=dtype, name=name)


@keras_export("keras.backend.cast")
def cast(x, dtype):
    return _cast(x, dtype)


@keras_export("keras.backend.cast_to_floatx")
def cast_to_floatx(x):
    if isinstance(x, (Tensor, Variable, SparseTensor)):
        return _cast(x, floatx())
    return np.asarray(x, dtype=floatx())


@keras_export("keras.backend.to_dense")
def to_dense(tensor):
    return sparse_tensor_to_dense(tensor) if isinstance(tensor, SparseTensor) else tensor


@keras_export("keras.backend.is_sparse")
def is_sparse(tensor):
    return isinstance(tensor, SparseTensor)


@keras_export("keras.backend.stop_gradient")
def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return [array_core.stop_gradient(v) for v in variables]
    return array_core.stop_gradient(variables)


# -- variables -------------------------------------------------------------------------------
@keras_export("keras.backend.variable")
def variable(value, dtype=None, name=None, constraint=None):
    if isinstance(value, SparseTensor):
        return value
    return Variable(value, dtype=dtype or floatx(), name=name, constraint=constraint)


@keras_export("keras.backend.eval")
def eval(x):  # noqa: A001 - Keras' name
    return get_value(to_dense(x))


@keras_export("keras.backend.batch_get_value")
def batch_get_value(tensors):
    return [get_value(t) for t in tensors]


@keras_export("keras.backend.batch_set_value")
def batch_set_value(tuples):
    for x, value in tuples:
        x.assign(np.asarray(value, dtype=dtypes.as_dtype(x.dtype).as_numpy_dtype))


@keras_export("keras.backend.update")
def update(x, new_x):
    return x.assign(new_x)


@keras_export("keras.backend.update_add")
def update_add(x, increment):
    return x.assign_add(increment)


@keras_export("keras.backend.update_sub")
def update_sub(x, decrement):
    return x.assign_sub(decrement)


@keras_export("keras.backend.moving_average_update")
def moving_average_update(x, value, momentum):
    momentum = _cast(momentum, x.dtype)
    value = _cast(value, x.dtype)
    return x.assign_sub((x - value) * (1 - momentum))


@keras_export("keras.backend.get_uid")
def get_uid(prefix=""):
    _UIDS[prefix] = _UIDS.get(prefix, 0) + 1
    return _UIDS[prefix]


@keras_export("keras.backend.name_scope")
def name_scope(name):
    return scopes.name_scope(name)


@keras_export("keras.backend.backend")
def backend():
    return "tensorflow"


@keras_export("keras.backend.is_float_dtype")
def is_float_dtype(dtype):
    return dtypes.as_dtype(dtype).is_floating


@keras_export("keras.backend.is_int_dtype")
def is_int_dtype(dtype):
    return dtypes.as_dtype(dtype).is_integer


@keras_export("keras.backend.result_type")
def result_type(*dtype_args):
    strong = [dtypes.as_dtype(d).name for d in dtype_args if d not in (int, float, bool)]
    weak = [d for d in dtype_args if d in (int, float, bool)]
    floats = [d for d in strong if dtypes.as_dtype(d).is_floating]
    if floats:
        if set(floats) >= {"float16", "bfloat16"}:
            floats.append("float32")
        return builtins.max(floats, key=lambda d: (dtypes.as_dtype(d).size, d == "float32"))
    if float in weak:
        return floatx()
    ints = [d for d in strong if d != "bool"]
    if ints:
        return str(np.result_type(*[np.dtype(d) for d in ints]))
    if strong:
        return "bool"
    return "int32" if int in weak else ("bool" if weak else floatx())


# -- random ----------------------------------------------------------------------------------
def _seed(seed):
    return int(np.random.randint(10e6)) if seed is None else seed


@keras_export("keras.backend.random_normal")
def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return random.random_normal(shape, mean=mean, stddev=stddev, dtype=dtype or floatx(),
                                seed=_seed(seed))


@keras_export("keras.backend.random_uniform")
def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return random.random_uniform(shape, minval=minval, maxval=maxval, dtype=dtype or floatx(),
                                 seed=_seed(seed))


@keras_export("keras.backend.truncated_normal")
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return random.truncated_normal(shape, mean, stddev, dtype=dtype or floatx(),
                                   seed=_seed(seed))


@keras_export("keras.backend.random_bernoulli")
def random_bernoulli(shape, p=0.0, dtype=None, seed=None):
    dtype = dtype or floatx()
    return arithmetic.where(random_uniform(shape, dtype=dtype, seed=seed) <= p,
                            array_fill.ones(shape, dtype=dtype),
                            array_fill.zeros(shape, dtype=dtype))


@keras_export("keras.backend.random_normal_variable")
def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    return variable(random_normal(shape, mean, scale, dtype, seed), dtype, name)


@keras_export("keras.backend.random_uniform_variable")
def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    return variable(random_uniform(shape, low, high, dtype, seed), dtype, name)



docstrings.attach(globals(), backend_legacy_docs.DOCS)
docstrings.attach(globals(), backend_legacy_math_docs.DOCS)

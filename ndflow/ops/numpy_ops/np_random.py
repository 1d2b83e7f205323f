"""`tnp.random`: NumPy's random API on TF's stateful random ops (the global seed applies)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes
from ndflow.ops.numpy_ops.np_arrays import asarray


def _export(name):
    return tf_export(f"experimental.numpy.random.{name}", v1=[])


def _is_scalar(size) -> bool:
    if isinstance(size, Tensor):
        return size.shape.rank == 0
    return np.isscalar(size)


@_export("seed")
def seed(s):
    """Sets the global seed (tf.random.set_seed)."""
    try:
        s = int(s)
    except TypeError:
        raise ValueError(f"Argument `s` got an invalid value {s}. Only integers are "
                         "supported.") from None
    tfo.set_seed(s)


@_export("standard_normal")
def standard_normal(size=None):
    if size is None:
        size = ()
    elif _is_scalar(size):
        size = (size,)
    return tfo.random_normal(size, dtype=np_dtypes.result_type(float))


@_export("randn")
def randn(*args):
    return standard_normal(size=args)


@_export("uniform")
def uniform(low=0.0, high=1.0, size=None):
    dtype = np_dtypes.result_type(float)
    low, high = asarray(low, dtype=dtype), asarray(high, dtype=dtype)
    if size is None:
        size = tfo.broadcast_dynamic_shape(tfo.shape(low), tfo.shape(high))
    return tfo.random_uniform(size, minval=low, maxval=high, dtype=dtype)


@_export("random")
def random(size=None):
    return uniform(0.0, 1.0, size)


@_export("rand")
def rand(*size):
    return uniform(0.0, 1.0, size)


@_export("poisson")
def poisson(lam=1.0, size=None):
    if size is None:
        size = ()
    elif _is_scalar(size):
        size = (size,)
    return tfo.random_poisson(size, lam=lam, dtype=np_dtypes.int_)


@_export("randint")
def randint(low, high=None, size=None, dtype=np.int64):
    low = int(low)
    if high is None:
        low, high = 0, low
    if size is None:
        size = ()
    elif isinstance(size, int):
        size = (size,)
    dtype_orig = dtype
    dtype = np_dtypes.result_type(dtype)
    if dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"Argument `dtype` got an invalid value {dtype_orig}. Only those "
                         f"convertible to {(np.int32, np.int64)} are supported.")
    return tfo.random_uniform(size, minval=low, maxval=high, dtype=dtype)

"""TensorFlow's SparseTensor dispatch for the unary APIs that keep zeros zero:
`tf.math.abs(st)` is `SparseTensor(st.indices, tf.math.abs(st.values), st.dense_shape)`
(TF's sparse_ops._UNARY_OPS), and so are `tf.cast(st, dtype)` (math_ops.cast) and
`tf.identity(st)` (identity of each component, as TF's for composites).

As ragged_dispatch.py does, the public objects of these APIs are replaced in the export
declarations as they are made (wrapping the ragged wrappers): the plain path
pays one isinstance check of the first argument. Other elementwise APIs refuse a
SparseTensor as TF does (it converts to no tensor).
"""

from __future__ import annotations

import functools
import inspect

from ndflow.core import api_export
from ndflow.ops.sparse_tensor import SparseTensor

# TF 2.21's sparse_ops._UNARY_OPS, in its order
_VALUES_APIS = """math.abs math.negative math.asinh math.sin math.tan math.atan math.asin
math.atanh math.sign math.square math.sqrt math.erf math.tanh math.bessel_i0e
math.bessel_i1e cast""".split()
_COMPONENTS_APIS = ("identity",)


def _dispatching(fn, whole: bool):
    first = next(iter(inspect.signature(fn).parameters))

    @functools.wraps(fn)
    def api(*args, **kwargs):
        if args:
            if not isinstance(args[0], SparseTensor):
                return fn(*args, **kwargs)
            x, rest = args[0], args[1:]
        else:
            if not isinstance(kwargs.get(first), SparseTensor):
                return fn(*args, **kwargs)
            kwargs = dict(kwargs)
            x, rest = kwargs.pop(first), ()
        if whole:
            return SparseTensor(fn(x.indices, *rest, **kwargs), fn(x.values, *rest, **kwargs),
                                fn(x.dense_shape, *rest, **kwargs))
        return SparseTensor(x.indices, fn(x.values, *rest, **kwargs), x.dense_shape)

    return api


_WRAPPERS: dict = {}   # id of a declared object -> (the object, its wrapper)
_WANTED = {**{p: False for p in _VALUES_APIS}, **{p: True for p in _COMPONENTS_APIS}}


def _wrap(e: api_export.Export):
    """The wrapper of a declaration of one of the APIs (one per object, so that every path
    of it, `tf.abs` and `tf.math.abs`, gets the same), else None."""
    path = next((p for p in e.v2 if p in _WANTED), None)
    if path is None:
        return None
    if id(e.obj) not in _WRAPPERS:
        _WRAPPERS[id(e.obj)] = (e.obj, _dispatching(e.obj, _WANTED[path]))
    return _WRAPPERS[id(e.obj)][1]


api_export.add_dispatcher(_wrap)

"""TensorFlow's ragged dispatch for elementwise APIs: `tf.math.square(rt)`,
`tf.strings.lower(rt)`, `tf.add(rt, 1)`, `tf.cast(rt, tf.float32)` apply the function to the
flat values and keep the row partitions (`tf.ragged.map_flat_values`).

The public objects of these APIs are replaced, in the export declarations, by wrappers that
check their arguments for RaggedTensors (a few hundred nanoseconds on the plain path), as
each is declared (`api_export.add_dispatcher`: a family declares when it first loads);
ndflow's own code imports the unwrapped functions and pays
nothing. Dense tensor arguments must be scalars: broadcasting a dense tensor against the
rows of a RaggedTensor is refused rather than computed wrongly.
"""

from __future__ import annotations

import functools

import numpy as np

from ndflow.core import api_export
from ndflow.core.tensor import Tensor
from ndflow.ops.ragged_math import map_flat_values
from ndflow.ops.ragged_tensor import RaggedTensor

_UNARY = """math.abs math.acos math.acosh math.asin math.asinh math.atan math.atanh math.ceil
math.cos math.cosh math.exp math.expm1 math.floor math.log math.log1p math.logical_not
math.negative math.reciprocal math.round math.rsqrt math.sigmoid math.sign math.sin math.sinh
math.softplus math.softsign math.sqrt math.square math.tan math.tanh math.is_nan math.is_inf
math.is_finite math.erf math.real math.imag math.conj cast saturate_cast identity zeros_like
ones_like nn.relu nn.relu6 nn.leaky_relu nn.elu nn.selu nn.gelu nn.silu strings.length
strings.lower strings.upper strings.strip strings.regex_replace strings.regex_full_match
strings.to_number strings.substr strings.as_string strings.to_hash_bucket_fast
strings.to_hash_bucket_strong strings.to_hash_bucket"""
_BINARY = """math.add math.subtract math.multiply math.divide math.truediv math.floordiv
math.floormod math.maximum math.minimum math.pow math.equal math.not_equal math.less
math.less_equal math.greater math.greater_equal math.logical_and math.logical_or
math.logical_xor math.squared_difference math.divide_no_nan math.multiply_no_nan
math.atan2"""
APIS = frozenset((_UNARY + " " + _BINARY).split())


def _is_dense_nonscalar(x) -> bool:
    if isinstance(x, Tensor):
        return x.shape.rank != 0
    if isinstance(x, (list, tuple, np.ndarray)):
        return np.ndim(x) > 0
    return False


def _dispatching(fn):
    @functools.wraps(fn)
    def api(*args, **kwargs):
        if not any(isinstance(a, RaggedTensor) for a in args) and \
                not any(isinstance(v, RaggedTensor) for v in kwargs.values()):
            return fn(*args, **kwargs)
        values = list(args) + list(kwargs.values())
        if any(_is_dense_nonscalar(v) for v in values if not isinstance(v, RaggedTensor)):
            raise ValueError(f"{fn.__name__}: ndflow applies elementwise functions to "
                             "RaggedTensors with scalars or RaggedTensors of the same row "
                             "partitions; convert the dense operand with "
                             "tf.RaggedTensor.from_tensor first.")
        return map_flat_values(fn, *args, **kwargs)

    api._ragged_dispatch_of = fn
    return api


_WRAPPERS: dict = {}   # id of a declared object -> (the object, its wrapper)


def _wrap(e: api_export.Export):
    """The wrapper of a declaration of one of `APIS` (one per object, so that every path of
    it gets the same: `tf.add is tf.math.add` still holds), else None."""
    if not (APIS.intersection(e.v2) or APIS.intersection(e.v1)):
        return None
    if id(e.obj) not in _WRAPPERS:
        _WRAPPERS[id(e.obj)] = (e.obj, _dispatching(e.obj))
    return _WRAPPERS[id(e.obj)][1]


api_export.add_dispatcher(_wrap)

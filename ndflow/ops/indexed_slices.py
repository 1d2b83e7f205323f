"""`tf.IndexedSlices`: the sparse gradient of a gather — rows `values` at `indices` of a
tensor of shape `dense_shape` — kept sparse through gradient aggregation and applied to
variables as scatter updates, so a step touches only the rows it used. Converting one to a
tensor (any op taking it) sums the rows into a dense tensor, as TensorFlow 2.21 does."""

from __future__ import annotations

import collections
import warnings

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import NativeObject
from ndflow.ops.apply import constant_value, register_tensor_conversion_function
from ndflow.ops.array_gather import unsorted_segment_sum
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast

_LARGE_SPARSE_NUM_ELEMENTS = 100_000_000

# What Session.run returns for a fetched IndexedSlices (TF's IndexedSlicesValue).
IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])


@tf_export("IndexedSlices", v1=["IndexedSlices"])
class IndexedSlices(NativeObject):
    """Rows `values[i]` at positions `indices[i]` of a tensor of shape `dense_shape`."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        """The slices: a tensor of shape `[len(indices)] + dense_shape[1:]`."""
        return self._values

    @property
    def indices(self):
        """The row of the dense tensor each slice belongs to (a vector; rows may repeat:
        their slices then add up)."""
        return self._indices

    @property
    def dense_shape(self):
        """The shape of the dense tensor the slices represent (an int tensor), or None."""
        return self._dense_shape

    @property
    def dtype(self):
        """The `tf.DType` of the values."""
        return self._values.dtype

    @property
    def shape(self) -> TensorShape:
        """The dense shape as a `tf.TensorShape` (from `dense_shape` when it is constant,
        else `[None] + values.shape[1:]`)."""
        static = None if self._dense_shape is None else constant_value(self._dense_shape)
        if static is not None:
            return TensorShape([int(d) for d in np.asarray(static).reshape(-1)])
        rows = self._values.shape
        return TensorShape(None) if rows.rank is None else TensorShape([None] + rows.as_list()[1:])

    @property
    def name(self) -> str:
        """The name of the values tensor."""
        return self._values.name

    @property
    def device(self) -> str:
        """The device of the values tensor."""
        return self._values.device

    @property
    def op(self):
        """Graph mode: the op that makes the values."""
        return self._values.op

    @property
    def graph(self):
        """Graph mode: the `tf.Graph` of the values."""
        return self._values.graph

    def __neg__(self):
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __repr__(self):
        return (f"IndexedSlices(indices={self._indices}, values={self._values}"
                + (f", dense_shape={self._dense_shape})" if self._dense_shape is not None
                   else ")"))


def densify(value: IndexedSlices):
    """The dense tensor: rows summed at their indices (repeated indices add up). As TF 2.21,
    only a graph conversion to a statically known shape of 100M elements or more warns."""
    if value.dense_shape is None:
        raise ValueError("Tensor conversion requested for IndexedSlices for argument `value` "
                         f"without dense_shape: {value!s}")
    if not context.executing_eagerly():
        static = constant_value(value.dense_shape)
        if static is not None:
            n = int(np.prod(np.asarray(static), dtype=np.int64))
            if n >= _LARGE_SPARSE_NUM_ELEMENTS:
                warnings.warn(f"Converting sparse IndexedSlices to a dense Tensor with {n} "
                              "elements. This may consume a large amount of memory.",
                              stacklevel=2)
    shape = value.shape
    rows = value.dense_shape[0] if shape.rank is None or shape.as_list()[0] is None \
        else shape.as_list()[0]
    return unsorted_segment_sum(value.values, value.indices, rows)


def _convert(value, dtype=None, name=None, as_ref=False):
    if dtype is not None and dtypes.as_dtype(dtype) is not value.dtype:
        raise ValueError(f"Incompatible tensor conversion requested to `dtype` "
                         f"{dtypes.as_dtype(dtype).name} for IndexedSlices ({value}) with dtype "
                         f"{value.dtype.name}")
    return densify(value)


register_tensor_conversion_function(IndexedSlices, _convert)


def aggregate_indexed_slices(grads: list):
    """The sum of gradients some of which are IndexedSlices: all sparse ones concatenate (no
    densifying); with a dense one among them everything is densified and added, as TF's
    _AggregateIndexedSlicesGradients."""
    if not all(isinstance(g, IndexedSlices) for g in grads):
        return None
    idx_dtypes = {g.indices.dtype for g in grads}
    indices = [g.indices if len(idx_dtypes) == 1 else cast(g.indices, dtypes.int64)
               for g in grads]
    return IndexedSlices(concat([g.values for g in grads], 0), concat(indices, 0),
                         grads[0].dense_shape)

"""`tf.compat.v1.ragged.RaggedTensorValue`: a RaggedTensor's value as NumPy arrays, what a
TF1 `Session.run` returns for a fetched RaggedTensor and `tf.compat.v1.ragged.constant_value`
builds from Python lists; `tf.compat.v1.ragged.placeholder` and feeding RaggedTensors."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.ops.array_core import placeholder as array_placeholder
from ndflow.ops.ragged_factory import nested_pieces
from ndflow.ops.ragged_tensor import RaggedTensor, _to_list, from_components


@tf_export(v1=["ragged.RaggedTensorValue"])
class RaggedTensorValue:
    """NumPy `values` (an array, or a RaggedTensorValue when ragged_rank > 1) split into
    rows by `row_splits`."""

    def __init__(self, values, row_splits):
        if not isinstance(row_splits, np.ndarray) or row_splits.dtype not in (np.int32,
                                                                              np.int64):
            raise TypeError("row_splits must be a 1D int32 or int64 numpy array")
        if not isinstance(values, (np.ndarray, RaggedTensorValue)):
            raise TypeError("values must be a numpy array or a RaggedTensorValue")
        self._values, self._row_splits = values, row_splits

    values = property(lambda self: self._values)
    row_splits = property(lambda self: self._row_splits)

    @property
    def flat_values(self) -> np.ndarray:
        v = self._values
        while isinstance(v, RaggedTensorValue):
            v = v.values
        return v

    @property
    def nested_row_splits(self) -> tuple:
        out, v = [self._row_splits], self._values
        while isinstance(v, RaggedTensorValue):
            out.append(v.row_splits)
            v = v.values
        return tuple(out)

    ragged_rank = property(lambda self: len(self.nested_row_splits))
    dtype = property(lambda self: dtypes.as_dtype(self.flat_values.dtype)
                     if self.flat_values.dtype != object else dtypes.string)

    @property
    def shape(self) -> tuple:
        return (len(self._row_splits) - 1,) + (None,) * self.ragged_rank + \
            tuple(self.flat_values.shape[1:])

    def to_list(self) -> list:
        return _to_list(self.flat_values, list(self.nested_row_splits))

    def __str__(self):
        return f"<tf.RaggedTensorValue {self.to_list()}>"

    def __repr__(self):
        return f"tf.RaggedTensorValue(values={self._values!r}, row_splits={self._row_splits!r})"


def value_of(arrays: list) -> RaggedTensorValue:
    """The RaggedTensorValue of a RaggedTensor's components computed as `arrays` (flat
    values, then the row splits, outermost first)."""
    result = np.asarray(arrays[0])
    for splits in reversed(arrays[1:]):
        result = RaggedTensorValue(result, np.asarray(splits))
    return result


@tf_export(v1=["ragged.constant_value"])
def constant_value(pylist, dtype=None, ragged_rank=None, inner_shape=None,
                   row_splits_dtype="int64"):
    """The RaggedTensorValue of nested Python lists (NumPy's dtypes: ints are int64), or a
    NumPy array when ragged_rank is 0."""
    flat, nested_splits = nested_pieces(pylist, ragged_rank, inner_shape)
    np_dtype = None if dtype is None else dtypes.as_dtype(dtype).np_dtype
    values = np.asarray(flat, dtype=np_dtype) if len(flat) or np_dtype is not None else \
        np.zeros((0,) + tuple(np.shape(flat)[1:]), np.float64)
    if not nested_splits:
        return values
    return value_of([values] + [s.astype(np.dtype(str(row_splits_dtype)))
                                for s in nested_splits])


def _session_value(self, arrays: list):
    """What a TF1 Session.run returns for a RaggedTensor (its components computed)."""
    return value_of(arrays)


def _feed_components(self, value) -> list:
    """The values fed for this RaggedTensor's components (`feed_dict={rt: value}`): from a
    RaggedTensorValue, an eager RaggedTensor or nested Python lists."""
    if isinstance(value, list):
        value = constant_value(value, ragged_rank=self.ragged_rank)
    if isinstance(value, RaggedTensorValue):
        parts = [value.flat_values, *value.nested_row_splits]
    elif isinstance(value, RaggedTensor):
        parts = [t.numpy() for t in value._to_components()]
    else:
        raise TypeError(f"Cannot feed {type(value).__name__} for a RaggedTensor; feed a "
                        "tf.compat.v1.ragged.RaggedTensorValue")
    if len(parts) != self.ragged_rank + 1:
        raise ValueError(f"Cannot feed a value of ragged_rank {len(parts) - 1} for a "
                         f"RaggedTensor of ragged_rank {self.ragged_rank}")
    return parts


RaggedTensor._session_value = _session_value
RaggedTensor._feed_components = _feed_components


@tf_export(v1=["ragged.placeholder"])
def placeholder(dtype, ragged_rank, value_shape=None, name=None) -> RaggedTensor:
    """A RaggedTensor of placeholders (flat values of shape [None] + value_shape, int64 row
    splits) for TF1 graphs, fed with a RaggedTensorValue."""
    if not isinstance(ragged_rank, int) or ragged_rank < 1:
        raise ValueError(f"ragged_rank must be an int >= 1, got {ragged_rank!r}")
    with name_scope(name, "RaggedPlaceholder"):
        flat = array_placeholder(dtype, [None] + list(value_shape or []), name="flat_values")
        splits = [array_placeholder(dtypes.int64, [None], name=f"row_splits_{i}")
                  for i in range(ragged_rank)]
        return from_components(flat, splits)

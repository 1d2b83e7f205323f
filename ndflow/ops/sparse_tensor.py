"""`tf.sparse.SparseTensor` (indices, values, dense_shape) and `tf.sparse.to_dense`
(SparseToDense, kernels in kernels/parsing_kernels.py).

What `tf.io.parse_example` returns for a `VarLenFeature`. It is a plain value holder here:
the three tensors are ordinary tensors (eager or symbolic), held as a named tuple so that
`tf.nest` (and with it `tf.function` outputs and `Dataset.map` elements) carries them.
"""

from __future__ import annotations

import collections

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import NativeObject, Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor, register_tensor_conversion_function
from ndflow.ops.op_def import op_def


def _sparse_to_dense_shape(ctx):
    shape = ctx.value(1)
    if shape is not None:
        return [TensorShape([int(d) for d in np.asarray(shape).reshape(-1)])]
    n = ctx.shapes[1].as_list()[0] if ctx.shapes[1].rank == 1 else None
    return [TensorShape(None if n is None else [None] * n)]


SparseToDense = op_def(
    "SparseToDense",
    inputs=["sparse_indices: Tindices", "output_shape: Tindices", "sparse_values: T",
            "default_value: T"],
    outputs=["dense: T"],
    attrs=["validate_indices: bool = true", "T: type", "Tindices: {int32, int64}"],
    shape=_sparse_to_dense_shape)


_PLAIN = (list, tuple, np.ndarray, np.generic, int, float, bytes, str)


def _tensor(value, dtype, name):
    """Python/NumPy values become tensors; anything else (a tensor, or the placeholder
    `tf.nest` packs while a function's outputs are rebuilt) is kept as it is."""
    if isinstance(value, _PLAIN):
        return convert_to_tensor(value, dtype, name=name)
    if dtype is not None and isinstance(value, Tensor) and value.dtype is not dtype:
        raise ValueError(f"{name}: Tensor conversion requested dtype {dtype.name} for Tensor "
                         f"with dtype {value.dtype.name}: {value!r}")
    return value


def _check_static_shapes(indices, values, dense_shape):
    """TF's ValueError when the three tensors' known sizes disagree (entries, rank)."""
    shapes = [getattr(t, "shape", None) for t in (indices, values, dense_shape)]
    if not all(isinstance(s, TensorShape) and s.rank is not None for s in shapes):
        return
    i, v, d = (s.as_list() for s in shapes)
    for a, b in ((i[0], v[0]) if len(i) == 2 and len(v) == 1 else (None, None),
                 (i[1], d[0]) if len(i) == 2 and len(d) == 1 else (None, None)):
        if a is not None and b is not None and a != b:
            raise ValueError(f"Dimensions {a} and {b} are not compatible")


@tf_export("sparse.SparseTensor", "SparseTensor", v1=["sparse.SparseTensor", "SparseTensor"])
class SparseTensor(collections.namedtuple("SparseTensor", ["indices", "values", "dense_shape"]),
                   NativeObject):
    """A sparse tensor: `values[i]` sits at `indices[i]` (int64 [N, rank]) in a tensor of
    shape `dense_shape` (int64 [rank]); the other entries are implicitly zero/empty.

    A named tuple of its three tensors (as TensorFlow's SparseTensorValue), so `tf.nest` sees
    them: a `tf.function` or `Dataset.map` may return it and gets it back rebuilt."""

    __slots__ = ()

    def __new__(cls, indices, values, dense_shape):
        self = super().__new__(cls, _tensor(indices, dtypes.int64, "indices"),
                               _tensor(values, None, "values"),
                               _tensor(dense_shape, dtypes.int64, "dense_shape"))
        _check_static_shapes(*self)
        return self

    def __init__(self, indices, values, dense_shape):  # noqa: ARG002 - TF's signature; __new__
        super().__init__()                               # sets the fields

    @property
    def dtype(self):
        """The `tf.DType` of the values."""
        return self.values.dtype

    @property
    def shape(self) -> TensorShape:
        """The static dense shape (known eagerly; in graphs as far as inferred)."""
        v = getattr(self.dense_shape, "numpy", None)
        if v is not None:
            return TensorShape([int(d) for d in v()])
        n = self.dense_shape.shape.as_list()[0] if self.dense_shape.shape.rank else None
        return TensorShape(None if n is None else [None] * n)

    def get_shape(self) -> TensorShape:
        """The same as `shape` (TF1's spelling)."""
        return self.shape

    def with_values(self, new_values) -> SparseTensor:
        """The same indices and dense shape with other values (one per entry)."""
        return SparseTensor(self.indices, new_values, self.dense_shape)

    @classmethod
    def from_value(cls, sparse_tensor_value) -> SparseTensor:
        """A SparseTensor of a SparseTensorValue (or a SparseTensor, returned as it is)."""
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        return cls(*sparse_tensor_value)

    def __repr__(self):
        return (f"SparseTensor(indices={self.indices!s}, values={self.values!s}, "
                f"dense_shape={self.dense_shape!s})")


def _refuse_conversion(value, dtype=None, name=None, as_ref=False):  # noqa: ARG001
    """TF's error: a SparseTensor is no tensor (before the named tuple autopacks)."""
    raise ValueError(f"Attempt to convert a value ({value!r}) with an unsupported type "
                     f"({type(value)}) to a Tensor.")


register_tensor_conversion_function(SparseTensor, _refuse_conversion, 98)


@tf_export(v1=["SparseTensorValue"])
class SparseTensorValue(collections.namedtuple("SparseTensorValue",
                                               ["indices", "values", "dense_shape"])):
    """What `Session.run` returns for a SparseTensor: its three NumPy arrays."""

    __slots__ = ()


@tf_export("sparse.to_dense", v1=["sparse.to_dense", "sparse_tensor_to_dense"])
def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of `sp_input`, `default_value` (0 or b"") where it has no value."""
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}.")
    dt = sp_input.dtype
    if default_value is None:
        default_value = b"" if dt is dtypes.string else 0
    default = convert_to_tensor(default_value, dt, name="default_value")
    return apply_op(SparseToDense, [sp_input.indices, sp_input.dense_shape, sp_input.values,
                                    default], {"validate_indices": bool(validate_indices)},
                    name=name or "SparseToDense").outputs[0]

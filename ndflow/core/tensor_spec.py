"""`tf.TensorSpec`: the type of a tensor (dtype + possibly partial shape), used by signatures."""

from __future__ import annotations

from ndflow.core import dtypes as _dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape, as_shape


@tf_export("TensorSpec")
class TensorSpec:
    """Describes a tensor: `TensorSpec(shape=[None, 28, 28, 1], dtype=tf.float32, name="x")`."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=_dtypes.float32, name: str | None = None):
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._name = name

    @classmethod
    def from_tensor(cls, tensor, name: str | None = None) -> TensorSpec:
        """The spec of `tensor`: its shape and dtype, named `name` (in a graph, by default
        the name of the op that made it)."""
        if name is None:
            try:
                name = tensor.op.name
            except AttributeError:
                name = None
        return cls(tensor.shape, tensor.dtype, name)

    @classmethod
    def from_spec(cls, spec: TensorSpec, name: str | None = None) -> TensorSpec:
        """A TensorSpec with `spec`'s shape and dtype, named `name` (or `spec`'s name)."""
        return cls(spec.shape, spec.dtype, name if name is not None else spec.name)

    @property
    def shape(self) -> TensorShape:
        """The `tf.TensorShape` values must be compatible with (None dimensions: any size)."""
        return self._shape

    @property
    def dtype(self) -> _dtypes.DType:
        """The dtype values must have."""
        return self._dtype

    @property
    def name(self) -> str | None:
        """The spec's name (a `tf.function` argument's name), or None."""
        return self._name

    def is_compatible_with(self, spec_or_tensor) -> bool:
        """Same dtype and a shape compatible with the other spec's or tensor's shape."""
        return (self._dtype is getattr(spec_or_tensor, "dtype", None)
                and self._shape.is_compatible_with(spec_or_tensor.shape))

    def most_specific_common_supertype(self, others) -> TensorSpec | None:
        """The spec whose shape keeps the dims all specs agree on (None elsewhere)."""
        shape = self._shape
        for o in others:
            if o.dtype is not self._dtype:
                return None
            shape = shape.most_specific_compatible_shape(o.shape)
        return TensorSpec(shape, self._dtype, self._name)

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self._dtype is other._dtype
                and self._shape == other._shape and self._name == other._name)

    def __hash__(self):
        return hash((self._dtype, self._shape, self._name))

    def __repr__(self):
        shape = "<unknown>" if self._shape.rank is None else repr(tuple(self._shape.as_list()))
        return f"TensorSpec(shape={shape}, dtype=tf.{self._dtype.name}, name={self._name!r})"

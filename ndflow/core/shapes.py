"""Static shapes with unknown dimensions (`None`) and unknown rank, as `tf.TensorShape`."""

from __future__ import annotations

import operator
from collections.abc import Iterable

from ndflow.core.api_export import tf_export


@tf_export("TensorShape")
class TensorShape:
    """A possibly partial shape: `dims` is None (unknown rank) or a tuple of int|None."""

    __slots__ = ("_dims",)

    def __init__(self, dims=None):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, int):
            self._dims = (dims,)
        elif hasattr(dims, "__index__") and not hasattr(dims, "__iter__"):
            self._dims = (_as_dim(dims),)  # one dimension: a tf.compat.v1.Dimension, np.int64
        elif isinstance(dims, (str, bytes)):
            raise TypeError(f"Failed to convert '{dims!r}' to a shape: '{dims!r}'could not be "
                            "converted to a dimension. A shape should either be single "
                            "dimension (e.g. 10), or an iterable of dimensions (e.g. [1, 10, "
                            "None]).")
        else:
            self._dims = tuple(_as_dim(d) for d in dims)

    @property
    def dims(self):
        """The dimensions as a list of ints and Nones (unknown sizes); None when the rank is
        unknown."""
        return None if self._dims is None else list(self._dims)

    @property
    def rank(self):
        """The number of dimensions; None when unknown (`TensorShape(None)`). Also `ndims`."""
        return None if self._dims is None else len(self._dims)

    ndims = rank

    def as_list(self) -> list:
        """The dimensions as a list (None for unknown sizes), e.g. [None, 28, 28, 1].

        Raises:
          ValueError: the rank is unknown.
        """
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self):
        """The dimensions as a tuple; None when the rank is unknown."""
        return self._dims

    def is_fully_defined(self) -> bool:
        """Whether the rank and every dimension are known."""
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self):
        """The product of the dimensions; None unless the shape is fully defined."""
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_compatible_with(self, other) -> bool:
        """Whether some shape matches both: an unknown rank matches any shape, an unknown
        dimension any size; `TensorShape([None, 3])` is compatible with `[2, 3]`, not `[2, 4]`."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other) -> TensorShape:
        """The shape with the known dimensions of both (`[None, 3]` and `[2, None]` give
        `[2, 3]`).

        Raises:
          ValueError: the shapes are not compatible.
        """
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def most_specific_compatible_shape(self, other) -> TensorShape:
        """The most specific shape both are compatible with (dims that differ become None)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self._dims, other._dims)])

    def assert_is_compatible_with(self, other):
        """Raises ValueError unless `other` is compatible with this shape."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def with_rank(self, rank: int) -> TensorShape:
        """This shape, known to have `rank` dimensions (an unknown shape gets `rank` unknown
        dimensions).

        Raises:
          ValueError: the shape has another rank.
        """
        if self._dims is None:
            return unknown_shape(rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def concatenate(self, other) -> TensorShape:
        """This shape's dimensions followed by `other`'s (unknown if either rank is)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self):
        return hash(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __repr__(self):
        return f"TensorShape({self.dims})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("None" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"


def _as_dim(d):
    if d is None:
        return None
    if hasattr(d, "value") and not isinstance(d, int):  # tf.compat.v1.Dimension style
        d = d.value
        if d is None:
            return None
    try:
        v = operator.index(d)  # TF: an int or anything with __index__, never a float or str
    except TypeError:
        raise TypeError(f"Dimension value must be integer or None or have an __index__ method, "
                        f"got value '{d!r}' with type '{type(d)}'") from None
    if v < 0:
        if v == -1:
            return None
        raise ValueError(f"Dimension {v} must be >= 0")
    return v


def as_shape(shape) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None) -> TensorShape:
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    return TensorShape(())


def fmt(shape) -> str:
    """TF's bracket form for error messages: `[2,3]`, `[?,4]`, `<unknown>`."""
    shape = as_shape(shape)
    if shape.rank is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_tuple()) + "]"


def broadcast_shapes(a, b) -> TensorShape:
    """NumPy broadcasting of two static shapes; raises ValueError when incompatible."""
    a, b = as_shape(a), as_shape(b)
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    x, y = a.as_tuple(), b.as_tuple()
    n = max(len(x), len(y))
    x = (1,) * (n - len(x)) + x
    y = (1,) * (n - len(y)) + y
    out = []
    for da, db in zip(x, y):
        if da == 1:
            out.append(db)
        elif db == 1:
            out.append(da)
        elif da is None:
            out.append(db)
        elif db is None or da == db:
            out.append(da)
        else:
            raise ValueError(f"Incompatible shapes: {fmt(a)} vs. {fmt(b)}")
    return TensorShape(out)


def broadcast_all(shapes: Iterable) -> TensorShape:
    result = TensorShape(())
    for s in shapes:
        result = broadcast_shapes(result, s)
    return result


def reshape_sizes(dims: list, one: str, size: str) -> tuple:
    """TF's checks of a reshape's requested sizes `dims` (-1: inferred): (the product of the
    known sizes, the positions of -1, TF's message for two -1s or a size below -1, or None).
    `one` and `size` begin those messages as the op words them ("Only one input size" and
    "Size" for Reshape)."""
    unknown = [i for i, d in enumerate(dims) if d == -1]
    if len(unknown) > 1:
        return 0, unknown, f"{one} may be -1, not both {unknown[0]} and {unknown[1]}"
    for i, d in enumerate(dims):
        if d < -1:
            return 0, unknown, f"{size} {i} must be non-negative, not {d}"
    product = 1
    for d in dims:
        product *= d if d != -1 else 1
    return product, unknown, None

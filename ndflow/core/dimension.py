"""TF1's `tf.compat.v1.Dimension` (one dimension of a shape: an int or None, with arithmetic
that stays unknown when either side is), `tf.compat.dimension_value` /
`dimension_at_index`, and `enable_v2_tensorshape` / `disable_v2_tensorshape`.

ndflow's `TensorShape` always behaves as TF2's: indexing and iterating give ints or None
(and `.dims` lists them the same way, where TensorFlow lists `Dimension`s). So
`enable_v2_tensorshape` is a no-op and `disable_v2_tensorshape` only records the request
(and logs that shapes stay TF2's); code written for TF1 shapes runs through
`dimension_value`, which takes an int, None or a Dimension alike. A `TensorShape` accepts
Dimensions wherever it accepts ints.
"""

from __future__ import annotations

from ndflow.core import tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape, as_shape

_v2_tensorshape_requested = True


@tf_export(v1=["Dimension"])
class Dimension:
    """The size of one dimension of a shape: a non-negative int, or None when unknown."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, int):
            if value < 0:
                raise ValueError(f"Dimension {value} must be >= 0")
            self._value = value
        elif value is None:
            self._value = None
        elif isinstance(value, Dimension):
            self._value = value._value
        else:
            try:
                self._value = int(value.__index__())
            except AttributeError:
                raise TypeError(
                    "Dimension value must be integer or None or have an __index__ method, "
                    f"got value '{value!r}' with type '{type(value)!r}'") from None
            if self._value < 0:
                raise ValueError(f"Dimension {self._value} must be >= 0")

    @property
    def value(self):
        """The dimension as an int, or None when it is unknown."""
        return self._value

    def __repr__(self):
        return f"Dimension({self._value!r})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)

    def __int__(self):
        return self._value

    def __index__(self):
        return self._value

    def __bool__(self):
        return bool(self._value)

    def __reduce__(self):
        return Dimension, (self._value,)

    # -- comparisons: None when either side is unknown ------------------------------------------
    def __eq__(self, other):
        try:
            return self._compare(other, lambda a, b: a == b)
        except (TypeError, ValueError):   # not a dimension: let Python try the other side
            return NotImplemented

    def __ne__(self, other):
        try:
            return self._compare(other, lambda a, b: a != b)
        except (TypeError, ValueError):
            return NotImplemented

    __hash__ = None  # TensorFlow's Dimension defines __eq__ only: not hashable

    def _compare(self, other, op):
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return None
        return op(self._value, other.value)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    # -- compatibility --------------------------------------------------------------------------
    def is_compatible_with(self, other) -> bool:
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other) -> Dimension:
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(other.value if self._value is None else self._value)

    # -- arithmetic: unknown when either side is ------------------------------------------------
    def _arith(self, other, op, reflected=False, strict=False):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            if strict:
                raise
            return NotImplemented
        if self._value is None or other.value is None:
            return Dimension(None)
        a, b = (other.value, self._value) if reflected else (self._value, other.value)
        return Dimension(op(a, b))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    def __radd__(self, other):
        return self + other

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __rsub__(self, other):
        return self._arith(other, lambda a, b: a - b, reflected=True, strict=True)

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    def __rmul__(self, other):
        return self * other

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __rfloordiv__(self, other):
        return self._arith(other, lambda a, b: a // b, reflected=True, strict=True)

    def __mod__(self, other):
        return self._arith(other, lambda a, b: a % b, strict=True)

    def __rmod__(self, other):
        return as_dimension(other) % self

    def __truediv__(self, other):
        raise TypeError(f"unsupported operand type(s) for /: 'Dimension' and "
                        f"'{type(other).__name__}', please use // instead")

    def __rtruediv__(self, other):
        raise TypeError(f"unsupported operand type(s) for /: '{type(other).__name__}' and "
                        "'Dimension', please use // instead")


def as_dimension(value) -> Dimension:
    """`value` (an int, None, a Dimension or anything with __index__) as a Dimension."""
    return value if isinstance(value, Dimension) else Dimension(value)


@tf_export("compat.dimension_value", v1=["dimension_value", "compat.dimension_value"])
def dimension_value(dimension):
    """The int (or None) of `dimension`, whether TF1 code holds a Dimension or an int."""
    if isinstance(dimension, Dimension):
        return dimension.value
    return dimension


@tf_export("compat.dimension_at_index", v1=["dimension_at_index", "compat.dimension_at_index"])
def dimension_at_index(shape, index) -> Dimension:
    """Dimension `index` of `shape` as a `Dimension` (Dimension(None) for an unknown rank)."""
    shape = as_shape(shape)
    if shape.rank is None:
        return Dimension(None)
    return Dimension(shape.as_tuple()[index])


@tf_export(v1=["enable_v2_tensorshape"])
def enable_v2_tensorshape() -> None:
    """TF2 shapes (ints or None when indexed or iterated): always ndflow's behaviour."""
    global _v2_tensorshape_requested
    _v2_tensorshape_requested = True


@tf_export(v1=["disable_v2_tensorshape"])
def disable_v2_tensorshape() -> None:
    """Recorded, but ndflow's shapes stay TF2's: `shape[i]` is an int or None, never a
    Dimension (wrap it in `tf.compat.v1.Dimension` or read it with `dimension_value`)."""
    global _v2_tensorshape_requested
    _v2_tensorshape_requested = False
    tf_logging.info("disable_v2_tensorshape: ndflow keeps TF2 shapes (ints or None); use "
                    "tf.compat.v1.Dimension or tf.compat.dimension_value for TF1 dimensions.")


__all__ = ["Dimension", "TensorShape", "as_dimension", "dimension_at_index",
           "dimension_value", "disable_v2_tensorshape", "enable_v2_tensorshape"]

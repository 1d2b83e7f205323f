"""`tf.types.experimental`: TensorFlow's abstract types of functions and tracing.

As in TensorFlow these are abstract base classes (and a Protocol, and a typing Union) that
the concrete classes are instances of: ndflow's `tf.function` objects (runtime/function.py
`Function`) are registered as `PolymorphicFunction`s (alias `GenericFunction`), its traced
`ConcreteFunction`s as `ConcreteFunction`s, both `Callable`s; the type specs (`tf.TypeSpec`,
`tf.TensorSpec`), `tf.TensorShape` and `tf.DType` as `TraceType`s, as TensorFlow's derive
from it. `TensorLike` is the Union of what `tf.convert_to_tensor` takes.
"""

from __future__ import annotations

import abc
import inspect
from typing import Protocol, Union, runtime_checkable

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import TypeSpec
from ndflow.core.dtypes import DType
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.runtime.concrete_function import ConcreteFunction as _ConcreteFunction
from ndflow.runtime.function import Function as _Function


@tf_export("types.experimental.FunctionType")
class FunctionType(inspect.Signature, metaclass=abc.ABCMeta):
    """The type of a TensorFlow callable: an `inspect.Signature` whose parameters and return
    annotation may be `TraceType`s."""

    @classmethod
    def from_callable(cls, obj, *, follow_wrapped=True):
        return super().from_callable(obj, follow_wrapped=follow_wrapped)


@tf_export("types.experimental.Callable", v1=[])
class Callable(metaclass=abc.ABCMeta):
    """Base class of TensorFlow's callables (what tf.function makes)."""

    @property
    @abc.abstractmethod
    def function_type(self) -> FunctionType:
        """A FunctionType describing this callable."""

    def __call__(self, *args, **kwargs):  # noqa: B027 - TF's: implemented by the subclasses
        """Runs the callable (eagerly: its results; while building a graph: its ops)."""


@tf_export("types.experimental.AtomicFunction", v1=[])
class AtomicFunction(Callable):
    """Base class of single graph functions (no gradient support of their own)."""

    def call_with_captures(self, args, kwargs, captures):
        """Calls the function with the captured tensors supplied."""


@tf_export("types.experimental.ConcreteFunction", v1=[])
class ConcreteFunction(Callable, metaclass=abc.ABCMeta):
    """Base class of differentiable graph functions (one trace of a tf.function)."""

    @property
    @abc.abstractmethod
    def inference_fn(self) -> AtomicFunction:
        """The AtomicFunction this ConcreteFunction owns."""


@tf_export("types.experimental.PolymorphicFunction", "types.experimental.GenericFunction",
           v1=[])
class PolymorphicFunction(Callable, metaclass=abc.ABCMeta):
    """Base class of polymorphic graph functions (`tf.function`): one ConcreteFunction per
    traced input type."""

    @abc.abstractmethod
    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The ConcreteFunction specialized to these arguments (tensors or TensorSpecs)."""

    def experimental_get_compiler_ir(self, *args, **kwargs):
        """The compiler IR of the compiled function (jit_compile=True)."""


@tf_export("types.experimental.TraceType", v1=[])
class TraceType(metaclass=abc.ABCMeta):
    """The type of a tf.function argument for tracing: subtyping and common supertypes decide
    which trace a call reuses."""

    @abc.abstractmethod
    def is_subtype_of(self, other) -> bool:
        """Whether every value of `self` is a value of `other`."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others):
        """The most specific type that `self` and `others` are subtypes of, or None."""

    @abc.abstractmethod
    def placeholder_value(self, placeholder_context):
        """A value of this type for tracing."""

    def to_tensors(self, value) -> list:
        """The tensors of a value of this type (none by default)."""
        return []

    def from_tensors(self, tensors):
        """A value of this type rebuilt from `tensors`."""
        return self.placeholder_value(None)

    def flatten(self) -> list:
        """The TraceTypes of this type's tensors (none by default)."""
        return []

    def cast(self, value, cast_context):
        """`value` cast to this type (unchanged by default)."""
        return value

    @abc.abstractmethod
    def __hash__(self) -> int:
        """TraceTypes are hashable."""

    @abc.abstractmethod
    def __eq__(self, other) -> bool:
        """TraceTypes compare by value."""


@runtime_checkable
class SupportsTracingProtocol(Protocol):
    """Objects that give their own TraceType to tf.function (`__tf_tracing_type__`)."""

    @abc.abstractmethod
    def __tf_tracing_type__(self, context) -> TraceType:
        """The TraceType of this object."""


tf_export("types.experimental.SupportsTracingProtocol", v1=[])(SupportsTracingProtocol)


@runtime_checkable
class TensorProtocol(Protocol):
    """Objects that convert themselves to a Tensor (`__tf_tensor__`)."""

    def __tf_tensor__(self, dtype=None, name=None):
        """This object as a Tensor."""


# typing.Union (not `X | Y`, a types.UnionType), as TensorFlow's
TensorLike = Union[  # noqa: UP007
    Tensor, TensorProtocol, int, float, bool, str, bytes, complex, tuple, list, np.ndarray,
    np.generic]
TensorLike.__doc__ = """The values `tf.convert_to_tensor` accepts, as a type annotation.

A `typing.Union` of `tf.Tensor`, objects with a `__tf_tensor__` method, Python numbers,
bools, strings, bytes, tuples and lists, NumPy arrays and NumPy scalars.

Example:
  >>> def double(x: tf.types.experimental.TensorLike) -> tf.Tensor:
  ...     return tf.convert_to_tensor(x) * 2
  >>> double([1, 2]).numpy()
  array([2, 4], dtype=int32)
"""
tf_export("types.experimental.TensorLike")(TensorLike)

PolymorphicFunction.register(_Function)
ConcreteFunction.register(_ConcreteFunction)
for _trace_type in (TypeSpec, TensorSpec, TensorShape, DType):
    TraceType.register(_trace_type)

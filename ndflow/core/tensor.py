"""The user-visible tensor types: `Tensor` (base, `tf.Tensor`), `EagerTensor` (a value).

Symbolic graph tensors (`SymbolicTensor`) live in `graph.py`. Operators (`a + b`, `a[1:]`,
`a @ b` ...) are dispatched through `OPERATORS`, which the op layer fills in: the core
layer cannot import ops, so ops register the functions (as TF's `_override_operator`).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import dtypes as _dtypes
from ndflow.core import narrow_dtypes, tensor_equality
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape, as_shape

# name -> callable(x, y) / callable(x); filled by ndflow.ops.
OPERATORS: dict = {}

BINARY_OPERATORS = {
    "__add__": "add", "__sub__": "subtract", "__mul__": "multiply", "__truediv__": "truediv",
    "__floordiv__": "floordiv", "__mod__": "floormod", "__pow__": "pow", "__matmul__": "matmul",
    "__and__": "logical_and", "__or__": "logical_or", "__xor__": "logical_xor",
    "__lt__": "less", "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal",
}
UNARY_OPERATORS = {"__neg__": "negative", "__abs__": "abs", "__invert__": "logical_not"}


@tf_export("Tensor")
class Tensor:
    """Base of all tensors (`tf.Tensor`): has `dtype` and `shape`; operators dispatch to ops."""

    __slots__ = ()
    # Make NumPy defer to our reflected operators (np_array + tensor -> Tensor).
    __array_priority__ = 100

    dtype: _dtypes.DType

    def get_shape(self) -> TensorShape:
        """The tensor's static shape, a `tf.TensorShape` (the same as `.shape`)."""
        return self.shape

    @property
    def ndim(self):
        """The number of dimensions (the rank); None where the graph does not know it."""
        return self.shape.rank

    def __getitem__(self, key):
        return OPERATORS["getitem"](self, key)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):  # TF2: elementwise equality only via tf.equal; identity here
        return self is other

    def __ne__(self, other):
        return self is not other

    def __pos__(self):
        return self

    def __rpow__(self, other):
        return OPERATORS["pow"](other, self)


_COMPARISONS = ("__lt__", "__le__", "__gt__", "__ge__")


def reflected_fallback(error: Exception, x, y, dunder: str):
    """TF's binary_op_wrapper: when `x <op> y` fails to convert `y`, an object aware of
    tensors answers with its reflected operator (`tensor + keras_input`); if it has none,
    or it fails or returns NotImplemented, the original error stands."""
    reflected = getattr(type(y), "__r" + dunder[2:], None)
    if reflected is None:
        raise error
    try:
        out = reflected(y, x)
    except (TypeError, ValueError):
        raise error from None
    if out is NotImplemented:
        raise error
    return out


def apply_binary(op_name: str, dunder: str, x, y):
    """`x <dunder> y` by OPERATORS[op_name], with TF's reflected fallback (not for the
    comparisons, which TF overrides without it)."""
    try:
        return OPERATORS[op_name](x, y)
    except (TypeError, ValueError) as e:
        if dunder in _COMPARISONS:
            raise
        return reflected_fallback(e, x, y, dunder)


def _binary(op_name, dunder):
    def method(self, other):
        return apply_binary(op_name, dunder, self, other)

    def reflected(self, other):
        return OPERATORS[op_name](other, self)

    return method, reflected


for _dunder, _name in BINARY_OPERATORS.items():
    _fwd, _rev = _binary(_name, _dunder)
    setattr(Tensor, _dunder, _fwd)
    if _dunder not in ("__lt__", "__le__", "__gt__", "__ge__"):
        setattr(Tensor, "__r" + _dunder[2:], _rev)

for _dunder, _name in UNARY_OPERATORS.items():
    setattr(Tensor, _dunder, (lambda n: lambda self: OPERATORS[n](self))(_name))


class EagerTensor(Tensor):
    """A concrete value: an ATen tensor (or a resource object for dtype `resource`)."""

    # set by Keras: a masking layer's mask; softmax/sigmoid activations' input (the logits
    # Keras' crossentropies use instead of the probabilities)
    __slots__ = ("_value", "dtype", "_shape", "_keras_mask", "_keras_logits", "__weakref__")

    def __init__(self, value, dtype: _dtypes.DType | None = None):
        self._value = value
        if dtype is None:
            dtype = _dtypes.as_dtype(value.dtype)
        self.dtype = dtype
        self._shape = None

    @property
    def value(self):
        """The ATen tensor (or resource) behind this tensor."""
        return self._value

    @property
    def shape(self) -> TensorShape:
        if self._shape is None:
            v = self._value  # an ATen tensor, a NumPy array (strings), or a resource
            self._shape = TensorShape(tuple(v.shape)) \
                if isinstance(v, (torch.Tensor, np.ndarray)) else TensorShape(())
        return self._shape

    def set_shape(self, shape) -> None:
        """A check only (an eager value's shape is known): TF's ValueError when `shape` is
        not compatible with it."""
        if not self.shape.is_compatible_with(as_shape(shape)):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied "
                             f"shape {as_shape(shape)}.")

    @property
    def device(self) -> str:
        # a resource handle's device is its variable's (runtime/state.py `Resource.device`)
        dev = getattr(self._value, "device", None)
        if isinstance(dev, torch.device) and dev.type == "cuda":
            return f"/job:localhost/replica:0/task:0/device:GPU:{dev.index or 0}"
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def name(self):
        raise AttributeError("Tensor.name is undefined when eager execution is enabled.")

    def numpy(self) -> np.ndarray:
        """A NumPy copy of the value (bfloat16 as ml_dtypes' bfloat16, as TF's); a scalar is a
        NumPy scalar (np.float32(3.0)), as TensorFlow's."""
        v = self._value
        if not isinstance(v, torch.Tensor):  # a string tensor: bytes (scalar) or object array
            arr = np.asarray(v, dtype=object)
            return arr.item() if arr.ndim == 0 else arr.copy()
        v = v.detach()
        if v.device.type != "cpu":
            v = v.cpu()
        if v.dtype == torch.bfloat16:   # the same bits, as ml_dtypes' bfloat16
            out = v.contiguous().view(torch.int16).numpy().view(_dtypes.BFLOAT16_NUMPY).copy()
        elif self.dtype in _dtypes.NARROW:   # float8, int4 & co as ml_dtypes arrays
            out = narrow_dtypes.storage_to_numpy(v, self.dtype).copy()
        else:
            out = v.numpy().copy()
        return out[()] if out.ndim == 0 else out

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self.numpy())   # NumPy wants an array, also of a scalar
        return a if dtype is None else a.astype(dtype)

    # TF2 tensor equality: elementwise for values; hashing stays by identity.
    def __eq__(self, other):
        if other is None or not tensor_equality.enabled():
            return self is other
        return OPERATORS["equal"](self, other)

    def __ne__(self, other):
        if other is None or not tensor_equality.enabled():
            return self is not other
        return OPERATORS["not_equal"](self, other)

    __hash__ = Tensor.__hash__

    def __len__(self):
        if self.shape.rank == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self.shape[0]

    def __iter__(self):
        if self.shape.rank == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(self.shape[0]):
            yield self[i]

    def __bool__(self):
        return bool(self.numpy())

    def __float__(self):
        return float(self.numpy())

    def __complex__(self):
        return complex(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __index__(self):
        if not self.dtype.is_integer:
            raise TypeError(f"Only integer tensors can be used as indices, got {self.dtype!r}")
        return int(self.numpy())

    def __format__(self, spec):
        """TF: the NumPy value formatted ("{}".format(t) of [0 1] is "[0 1]"; str() is the
        tf.Tensor(...) text)."""
        if self.dtype is _dtypes.resource or self.dtype is _dtypes.variant:
            return format("<unprintable>", spec)
        return format(self.numpy(), spec)

    def __repr__(self):
        if self.dtype is _dtypes.string:  # TF shows NumPy's repr: b'x' / array([...], dtype=object)
            text = repr(self.numpy())
            return (f"<tf.Tensor: shape={self.shape}, dtype=string, "
                    f"numpy={chr(10) + text if chr(10) in text else text}>")
        host = self._host()
        # TF: NumPy's repr (array([1, 2], dtype=int32)) on a new line when it has several,
        # a scalar's Python value (float32 0.1 shows as 0.10000000149011612)
        text = repr(host.item()) if host.ndim == 0 else repr(host)
        return (f"<tf.Tensor: shape={self.shape}, dtype={self.dtype.name}, "
                f"numpy={chr(10) + text if chr(10) in text else text}>")

    def __str__(self):
        value = str(self._host())  # str(): f-strings format 0-d arrays as floats
        if "\n" in value:  # TF starts a value of several lines on a line of its own
            value = "\n" + value
        return f"tf.Tensor({value}, shape={self.shape}, dtype={self.dtype.name})"

    def _host(self) -> np.ndarray:
        """The value as a NumPy array for printing (strings as an object array of bytes)."""
        return np.asarray(self.numpy(), dtype=object if self.dtype is _dtypes.string else None)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class NativeObject:
    """Marker base of the TF-native values that `tf.is_tensor` accepts besides `tf.Tensor`
    (TF's `internal.NativeObject` and `core.Tensor`): SparseTensor, RaggedTensor,
    IndexedSlices and variables. Ops take them without conversion to a Tensor."""

    __slots__ = ()


@tf_export("is_tensor", v1=["is_tensor"])
def is_tensor(x) -> bool:
    """Whether `x` is a TF-native type rather than a Python or NumPy value.

    Args:
      x: any object.

    Returns:
      True for a `tf.Tensor` (eager or symbolic), a `tf.SparseTensor`, a `tf.RaggedTensor`,
      a `tf.IndexedSlices`, a `tf.Variable`, and any object with an `is_tensor_like`
      attribute; False otherwise (NumPy arrays, Python values, ExtensionTypes, datasets).

    Example:
      >>> tf.is_tensor(tf.constant(1)), tf.is_tensor(tf.Variable(1)), tf.is_tensor(1)
      (True, True, False)
    """
    return isinstance(x, (Tensor, NativeObject)) or hasattr(x, "is_tensor_like")


@tf_export("is_symbolic_tensor")
def is_symbolic_tensor(tensor) -> bool:
    """Whether `tensor` is a graph (symbolic) tensor rather than an eager one.

    Args:
      tensor: any object.

    Returns:
      True for a tensor of a graph or tf.function being built; False otherwise.

    Example:
      >>> tf.is_symbolic_tensor(tf.constant(1))
      False
    """
    return isinstance(tensor, Tensor) and not isinstance(tensor, EagerTensor)

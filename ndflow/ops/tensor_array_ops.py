"""`tf.TensorArray`, as TF2 builds it: eagerly a Python list of tensors (`_EagerTensorArray`),
in graphs a TensorList carried in `flow` (`_GraphTensorArrayV2`), so a write returns a new
TensorArray whose flow is the new list. Gradients come from the ops used (Stack, GetItem,
SetItem, ... in graphs; stack/concat/split eagerly), so both `tf.gradients` and
`GradientTape` differentiate through it. `tf.while_loop` carries a TensorArray as its flow
(runtime/control_flow.py uses `to_flow` / `from_flow`)."""

from __future__ import annotations

import weakref

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError, OutOfRangeError
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.ops import list_ops
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.array_core import constant, identity, no_op, stack, unstack
from ndflow.ops.array_fill import zeros
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_split import split as split_op
from ndflow.ops.cast import cast


def _as_int(x):
    return int(x.numpy()) if isinstance(x, EagerTensor) else int(x)


class _Implementation:
    """What both implementations hold: the flow and the dtype."""

    _flow = None
    _dtype = None

    @property
    def flow(self):
        return self._flow

    @property
    def dtype(self):
        return self._dtype


class _GraphTensorArrayV2(_Implementation):
    """A TensorArray in a graph: the TensorList in `flow` holds the elements."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if flow is not None and (not isinstance(flow, Tensor) or
                                 flow.dtype is not dtypes.variant):
            raise TypeError(f"Expected `flow` to be a variant tensor, but received "
                            f"`{getattr(flow, 'dtype', type(flow))!r}` instead.")
        if flow is None and size is None:
            raise ValueError("Argument `size` must be provided if argument `flow` is not "
                             "provided.")
        if flow is not None and size is not None:
            raise ValueError("Cannot provide both `flow` and `size` arguments at the same "
                             "time.")
        if flow is not None and element_shape is not None:
            raise ValueError("Cannot provide both `flow` and `element_shape` argumentsat the "
                             "same time.")
        self._dynamic_size = dynamic_size
        self._size = size
        self._dtype = dtypes.as_dtype(dtype)
        self._element_shape = [as_shape(element_shape)]
        self._infer_shape = infer_shape
        self._colocate_with_first_write_call = None
        if flow is None:
            with name_scope(name, "TensorArrayV2") as scope:
                flow = list_ops.tensor_list_reserve(element_shape, size, self._dtype,
                                                    name=scope.rstrip("/") or None)
        self._flow = flow

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape[0]

    @property
    def handle(self):
        return None

    def _check_element_shape(self, shape: TensorShape) -> None:
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected "
                             f"{self.element_shape} ")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def _value(self, value):
        return convert_to_tensor(value, dtype_hint=self._dtype, name="value")

    def identity(self):
        return build_ta_with_new_flow(self, identity(self._flow))

    def grad(self, source, flow=None, name=None):
        raise NotImplementedError()

    def read(self, index, name=None):
        with name_scope(name, "TensorArrayV2Read"):
            return list_ops.tensor_list_get_item(self._flow, index, self._dtype,
                                                 element_shape=self.element_shape)

    def write(self, index, value, name=None):
        with name_scope(name, "TensorArrayV2Write"):
            value = self._value(value)
            self._check_element_shape(value.shape)
            flow = list_ops.tensor_list_set_item(
                self._flow, index, value,
                resize_if_index_out_of_bounds=bool(self._dynamic_size))
            return build_ta_with_new_flow(self, flow)

    def stack(self, name=None):
        with name_scope(name, "TensorArrayV2Stack"):
            n = -1
            if not self._dynamic_size and self._size is not None:
                v = self._size if isinstance(self._size, (int, np.integer)) else \
                    constant_value(convert_to_tensor(self._size))
                n = int(v) if v is not None else -1
            return list_ops.tensor_list_stack(self._flow, self._dtype, n,
                                              element_shape=self.element_shape)

    def gather(self, indices, name=None):
        return list_ops.tensor_list_gather(self._flow, indices, self._dtype,
                                           element_shape=self.element_shape, name=name)

    def concat(self, name=None):
        shape = self.element_shape
        element_shape = [None] + shape.as_list()[1:] if shape.rank else None
        return list_ops.tensor_list_concat(self._flow, self._dtype, element_shape, name=name)

    def unstack(self, value, name=None):
        with name_scope(name, "TensorArrayUnstack"):
            value = self._value(value)
            self._check_element_shape(TensorShape(value.shape.dims[1:])
                                      if value.shape.rank else TensorShape(None))
            flow = list_ops.tensor_list_from_tensor(value, value.shape.dims[1:]
                                                    if value.shape.rank else None)
            return build_ta_with_new_flow(self, flow)

    def scatter(self, indices, value, name=None):
        with name_scope(name, "TensorArrayScatter"):
            value = self._value(value)
            self._check_element_shape(TensorShape(value.shape.dims[1:])
                                      if value.shape.rank else TensorShape(None))
            flow = list_ops.tensor_list_scatter(value, indices, self.element_shape,
                                                input_handle=self._flow)
            return build_ta_with_new_flow(self, flow)

    def split(self, value, lengths, name=None):
        with name_scope(name, "TensorArraySplit"):
            value = self._value(value)
            lengths64 = cast(lengths, dtypes.int64)
            lens = constant_value(lengths64)
            if value.shape.rank is not None and lens is not None and np.ndim(lens) == 1 \
                    and len(lens) and lens.max() == lens.min():
                self._check_element_shape(
                    TensorShape([int(lens[0])]).concatenate(value.shape.dims[1:]))
            flow = list_ops.tensor_list_split(value, self.element_shape, lengths64, name=name)
            return build_ta_with_new_flow(self, flow)

    def size(self, name=None):
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtypes.int32)
        return list_ops.tensor_list_length(self._flow, name=name)

    def close(self, name=None):
        return no_op(name=name)


class _EagerTensorArray(_Implementation):
    """An eager TensorArray: a Python list of tensors (None: not written yet)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if handle is not None:
            raise ValueError("TensorArray handles are not supported when eager execution is "
                             "enabled.")
        if size is None:
            raise ValueError("Size must be declared for TensorArrays when eager execution is "
                             "enabled.")
        self._handle = None
        self._flow = constant(0, dtypes.int32)
        self._infer_shape = infer_shape
        self._element_shape = as_shape(element_shape)
        self._colocate_with_first_write_call = colocate_with_first_write_call
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = dynamic_size or False
        self._clear_after_read = True if clear_after_read is None else clear_after_read
        self._previously_read_indices: list = []
        self._tensor_array: list = [None] * _as_int(size)

    @property
    def handle(self):
        return self._handle

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    def identity(self):
        return self.parent()

    def grad(self, source, flow=None, name=None):
        raise NotImplementedError(
            "TensorArray.grad is not supported when executing eagerly; eager's gradient "
            "implementation does not use/need this function to compute gradients of "
            "operations that use TensorArrays.")

    def read(self, index, name=None):
        index = _as_int(index)
        if index < 0:
            raise OutOfRangeError(None, None, f"Reading from negative indices (index {index}) "
                                  "is not allowed.")
        if index >= len(self._tensor_array):
            raise OutOfRangeError(None, None, f"Tried to read from index {index} but array "
                                  f"size is: {len(self._tensor_array)} ")
        tensor = self._tensor_array[index]
        if tensor is None:
            if index in self._previously_read_indices:
                raise InvalidArgumentError(
                    None, None, f"Could not read index {index} twice because it was cleared "
                    "after a previous read (perhaps try setting clear_after_read = false?)")
            tensor = self._maybe_zero(index)
        if self._clear_after_read:
            self._tensor_array[index] = None
            self._previously_read_indices.append(index)
        return tensor

    def _write(self, index, value) -> None:
        index = _as_int(index)
        if index < 0:
            raise OutOfRangeError(None, None, f"Writing to negative indices (index {index}) is "
                                  "not allowed.")
        size = len(self._tensor_array)
        if index >= size:
            if not self._dynamic_size:
                raise OutOfRangeError(None, None, f"Tried to write to index {index} but array "
                                      f"is not resizeable and size is: {size} ")
            self._tensor_array.extend([None] * (index - size + 1))
        if not isinstance(value, EagerTensor):
            value = convert_to_tensor(value, dtype_hint=self._dtype, name="value")
        if self._dtype is not value.dtype:
            raise InvalidArgumentError(None, None, f"TensorArray dtype is {self._dtype.name} "
                                       f"but Op is trying to write dtype {value.dtype.name} ")
        if not self._element_shape.is_compatible_with(value.shape):
            raise ValueError(f"Incompatible shape for value ({value.shape}), expected "
                             f"({self._element_shape})")
        if self._infer_shape:
            self._element_shape = self._element_shape.merge_with(value.shape)
        self._tensor_array[index] = value

    def write(self, index, value, name=None):
        self._write(index, value)
        return self.parent()

    def _maybe_zero(self, ix):
        val = self._tensor_array[ix]
        if val is None:
            if not self._element_shape.is_fully_defined():
                raise ValueError(f"Cannot convert a partially known TensorShape "
                                 f"{self._element_shape} to a Tensor.")
            val = self._tensor_array[ix] = zeros(self._element_shape.as_list(), self._dtype)
        return val

    def stack(self, name=None):
        for ix in range(len(self._tensor_array)):
            self._maybe_zero(ix)
        if not self._tensor_array:
            if self._element_shape.is_fully_defined():
                return zeros([0] + self._element_shape.as_list(), self._dtype)
            return convert_to_tensor(np.zeros([0], self._dtype.np_dtype), self._dtype)
        return stack(self._tensor_array, name=name or "stack")

    def gather(self, indices, name=None):
        if isinstance(indices, EagerTensor):
            indices = indices.numpy()
        return stack([self._maybe_zero(int(i)) for i in np.reshape(indices, [-1])])

    def concat(self, name=None):
        items = [self._maybe_zero(ix) for ix in range(len(self._tensor_array))]
        ndims = [t.shape.rank for t in items]
        if 0 in ndims:
            raise InvalidArgumentError(None, None, f"Concat saw a scalar shape at index "
                                       f"{ndims.index(0)} but requires at least vectors.")
        return concat(items, 0, name=name or "concat")

    def unstack(self, value, name=None):
        tensors = unstack(convert_to_tensor(value, dtype_hint=self._dtype))
        if len(tensors) > len(self._tensor_array) and not self._dynamic_size:
            raise ValueError(f"Cannot unstack {len(tensors)} tensors into a TensorArray of "
                             f"static size {len(self._tensor_array)} ")
        self._tensor_array = tensors
        return self.parent()

    def scatter(self, indices, value, name=None):
        if isinstance(indices, EagerTensor):
            indices = indices.numpy()
        for index, val in zip(np.reshape(indices, [-1]),
                              unstack(convert_to_tensor(value, dtype_hint=self._dtype))):
            self._write(int(index), val)
        return self.parent()

    def split(self, value, lengths, name=None):
        value = convert_to_tensor(value, dtype_hint=self._dtype, name="value")
        lengths = convert_to_tensor(lengths)
        total = int(np.sum(lengths.numpy()))
        if lengths.shape.rank != 1:
            raise InvalidArgumentError(None, None, f"Expected lengths to be a vector, received "
                                       f"shape: {lengths.shape.as_list()} ")
        if value.shape.rank == 0:
            raise InvalidArgumentError(None, None, "Expected value to be at least a vector, "
                                       f"but received shape: {value.shape.as_list()} ")
        if total != value.shape[0]:
            raise InvalidArgumentError(
                None, None, f"Expected sum of lengths to be equal to values.shape[0], but sum "
                f"of lengths is {total} and value's shape is: {value.shape.as_list()} ")
        if not self._dynamic_size and lengths.shape[0] != len(self._tensor_array):
            raise InvalidArgumentError(
                None, None, f"TensorArray's size is not equal to the size of lengths "
                f"({len(self._tensor_array)} vs. {lengths.shape[0]}), and the TensorArray is "
                "not marked as dynamically resizeable.")
        self._tensor_array = split_op(value, lengths, name=name)
        return self.parent()

    def size(self, name=None):
        return constant(len(self._tensor_array), dtypes.int32)

    def close(self, name=None):
        del self._tensor_array[:]


@tf_export("TensorArray")
class TensorArray:
    """`tf.TensorArray`: a dynamically sized array of tensors of one dtype, written once per
    step (`write`, `unstack`, `scatter`, `split`) and read back (`read`, `stack`, `gather`,
    `concat`). Writes return the TensorArray to use from then on."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if context.executing_eagerly() and (flow is None or flow.dtype is not dtypes.variant):
            implementation = _EagerTensorArray
        else:
            implementation = _GraphTensorArrayV2
        self._implementation = implementation(
            dtype, size=size, dynamic_size=dynamic_size, clear_after_read=clear_after_read,
            tensor_array_name=tensor_array_name, handle=handle, flow=flow,
            infer_shape=infer_shape, element_shape=element_shape,
            colocate_with_first_write_call=colocate_with_first_write_call, name=name)
        self._implementation.parent = weakref.ref(self)

    @property
    def flow(self):
        """The flow tensor: the TensorList holding the elements in graphs."""
        return self._implementation._flow

    @property
    def dtype(self):
        return self._implementation._dtype

    @property
    def handle(self):
        return self._implementation.handle

    @property
    def element_shape(self) -> TensorShape:
        return self._implementation.element_shape

    @property
    def dynamic_size(self):
        return self._implementation._dynamic_size

    @property
    def _infer_shape(self):
        return self._implementation._infer_shape

    def identity(self):
        """A TensorArray with the same content (in graphs, a new flow under the current
        control dependencies)."""
        return self._implementation.identity()

    def grad(self, source, flow=None, name=None):
        return self._implementation.grad(source, flow=flow, name=name)

    def read(self, index, name=None):
        """The element at `index`."""
        return self._implementation.read(index, name=name)

    def write(self, index, value, name=None):
        """Writes `value` at `index`; returns the TensorArray to use from then on."""
        return self._implementation.write(index, value, name=name)

    def stack(self, name=None):
        """All elements stacked along a new first axis."""
        return self._implementation.stack(name=name)

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked."""
        return self._implementation.gather(indices, name=name)

    def concat(self, name=None):
        """All elements concatenated along their first axis."""
        return self._implementation.concat(name=name)

    def unstack(self, value, name=None):
        """The rows of `value` as the elements."""
        return self._implementation.unstack(value, name=name)

    def scatter(self, indices, value, name=None):
        """Writes row i of `value` at `indices[i]`."""
        return self._implementation.scatter(indices, value, name=name)

    def split(self, value, lengths, name=None):
        """Splits `value` along its first axis into pieces of `lengths` as the elements."""
        return self._implementation.split(value, lengths, name=name)

    def size(self, name=None):
        """The number of elements."""
        return self._implementation.size(name=name)

    def close(self, name=None):
        return self._implementation.close(name=name)

    def __repr__(self):
        return f"<tf.TensorArray dtype={self.dtype.name} element_shape={self.element_shape}>"


def build_ta_with_new_flow(old_ta, flow) -> TensorArray:
    """A TensorArray like `old_ta` (or its implementation) whose elements are `flow`."""
    impl = old_ta._implementation if isinstance(old_ta, TensorArray) else old_ta
    if not context.executing_eagerly() and not isinstance(impl, _GraphTensorArrayV2):
        raise NotImplementedError(
            "Attempting to build a graph-mode TF2-style TensorArray from either an eager-mode "
            "TensorArray or a TF1-style TensorArray.  This is not currently supported.  You "
            "may be attempting to capture a TensorArray inside a tf.function or tf.data map "
            "function. Instead, construct a new TensorArray inside the function.")
    new_ta = TensorArray(impl.dtype, flow=flow, infer_shape=impl._infer_shape)
    new_impl = new_ta._implementation
    new_impl._dynamic_size = impl._dynamic_size
    new_impl._size = impl._size
    new_impl._element_shape = impl._element_shape  # shared: shape inference sees all writes
    return new_ta


def to_flow(x):
    """A TensorArray's flow (what control flow carries for it); anything else as it is."""
    return x.flow if isinstance(x, TensorArray) else x


def from_flow(template, flow):
    """The TensorArray `template` with elements `flow` (`flow` itself for a non-array)."""
    return build_ta_with_new_flow(template, flow) if isinstance(template, TensorArray) \
        else flow

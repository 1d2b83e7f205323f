"""Kernels of the TensorList ops (TF's list_kernels), on `TensorList` values.

A `TensorList` (the value of a `variant` tensor) is immutable: ops return new lists that
share the element tensors. PushBack appends in place to a Python list that a shorter view
shares when that view ends where the list ends (as a Go slice does), so the accumulator
pattern (push N times, pop N times) costs O(N), not O(N^2) pointer copies.
Uninitialized elements (Reserve, Resize, sparse Scatter) are None and read as zeros when the
element shape is fully known, as TF does.
"""

from __future__ import annotations

import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import list_ops as lo


def _error(msg: str):
    return InvalidArgumentError(None, None, msg)


class TensorList:
    """A list of ATen tensors with an element dtype and partial element shape (a tuple with
    None for unknown dimensions, or None for an unknown rank)."""

    __slots__ = ("_items", "_n", "element_dtype", "element_shape", "max_num_elements")

    def __init__(self, items: list, element_dtype, element_shape, max_num_elements=-1,
                 n: int | None = None):
        self._items = items
        self._n = len(items) if n is None else n
        self.element_dtype = element_dtype
        self.element_shape = element_shape
        self.max_num_elements = max_num_elements

    def __len__(self):
        return self._n

    @property
    def tensors(self) -> list:
        return self._items[:self._n]

    def get(self, i: int):
        return self._items[i]

    def _like(self, items: list, n: int | None = None, element_shape="same"):
        return TensorList(items, self.element_dtype,
                          self.element_shape if element_shape == "same" else element_shape,
                          self.max_num_elements, n)

    def with_items(self, items: list):
        return self._like(items)

    def push(self, t):
        if len(self._items) == self._n:  # this view ends where the shared list ends
            self._items.append(t)
            return self._like(self._items, self._n + 1)
        return self._like(self.tensors + [t])

    def pop(self):
        return self._like(self._items, self._n - 1), self._items[self._n - 1]

    def __repr__(self):
        return "<TensorList>"


def shape_str(shape) -> str:
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _decode_shape(v: torch.Tensor):
    """An element_shape input value as a partial shape tuple (None: unknown rank)."""
    if v.dim() == 0:
        return None
    return tuple(None if d < 0 else d for d in v.tolist())


def _merge(a, b, what: str = "PartialTensorShape"):
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise _error(f"{what}: Incompatible shapes during merge: {shape_str(a)} vs. "
                     f"{shape_str(b)}")
    out = []
    for x, y in zip(a, b):
        if x is not None and y is not None and x != y:
            raise _error(f"{what}: Incompatible shapes during merge: {shape_str(a)} vs. "
                         f"{shape_str(b)}")
        out.append(x if x is not None else y)
    return tuple(out)


def _compatible(shape, t: torch.Tensor) -> bool:
    if shape is None:
        return True
    return len(shape) == t.dim() and all(d is None or d == e for d, e in zip(shape, t.shape))


def _fully_defined(shape) -> bool:
    return shape is not None and all(d is not None for d in shape)


def _check_dtype(lst: TensorList, dtype):
    if lst.element_dtype is not dtype:
        raise _error(f"Invalid data types; op elements {_tf_name(dtype)} but list elements "
                     f"{_tf_name(lst.element_dtype)}")


def _tf_name(d) -> str:
    return {"float32": "float", "float64": "double", "float16": "half"}.get(d.name, d.name)


def _zeros(shape, dtype, device) -> torch.Tensor:
    return torch.zeros(shape, dtype=dtype.torch_dtype, device=device)


def _element_shape_for_read(lst: TensorList, requested):
    """The shape of uninitialized elements: the list's, the op's and any set element's."""
    shape = _merge(lst.element_shape, requested)
    if not _fully_defined(shape):
        for t in lst.tensors:
            if t is not None:
                shape = _merge(shape, tuple(t.shape))
                break
    return shape


def _index(i: torch.Tensor) -> int:
    return int(i)


def _device(node):
    return node.device


# -- constructors --------------------------------------------------------------------------------

@kernel(lo.EmptyTensorList)
def _empty(node):
    dt = node.attrs["element_dtype"]

    def empty_tensor_list(element_shape, max_num_elements):
        return TensorList([], dt, _decode_shape(element_shape), int(max_num_elements))
    return empty_tensor_list


@kernel(lo.TensorListReserve)
def _reserve(node):
    dt = node.attrs["element_dtype"]

    def tensor_list_reserve(element_shape, num_elements):
        n = int(num_elements)
        if n < 0:
            raise _error(f"The num_elements to reserve must be a non negative number, but "
                         f"got {n}")
        return TensorList([None] * n, dt, _decode_shape(element_shape))
    return tensor_list_reserve


@kernel(lo.TensorListFromTensor)
def _from_tensor(node):
    dt = node.attrs["element_dtype"]

    def tensor_list_from_tensor(tensor, element_shape):
        shape = _decode_shape(element_shape)
        if tensor.dim() < 1:
            raise _error(f"Tensor must be at least a vector, but saw shape: "
                         f"{shape_str(tuple(tensor.shape))}")
        if not _compatible(shape, tensor[0] if tensor.shape[0] else
                           torch.empty(tensor.shape[1:])):
            raise _error(f"Specified a list with shape {shape_str(shape)} from a tensor with "
                         f"shape {shape_str(tuple(tensor.shape[1:]))}")
        return TensorList(list(tensor.unbind(0)), dt, shape)
    return tensor_list_from_tensor


@kernel(lo.TensorListScatterV2)
def _scatter_v2(node):
    dt = node.attrs["element_dtype"]

    def tensor_list_scatter_v2(tensor, indices, element_shape, num_elements):
        idx = _check_scatter(tensor, indices)
        n = max(int(num_elements), max(idx, default=-1) + 1)
        items: list = [None] * n
        for j, i in enumerate(idx):
            items[i] = tensor[j]
        return TensorList(items, dt, _decode_shape(element_shape))
    return tensor_list_scatter_v2


@kernel(lo.TensorListScatter)
def _scatter_v1(node):
    dt = node.attrs["element_dtype"]

    def tensor_list_scatter(tensor, indices, element_shape):
        idx = _check_scatter(tensor, indices)
        items: list = [None] * (max(idx, default=-1) + 1)
        for j, i in enumerate(idx):
            items[i] = tensor[j]
        return TensorList(items, dt, _decode_shape(element_shape))
    return tensor_list_scatter


def _check_scatter(tensor, indices) -> list:
    idx = indices.tolist()
    if any(i < 0 for i in idx):
        raise _error("Indices in TensorListScatter must all be non-negative.")
    if tensor.dim() < 1 or tensor.shape[0] != len(idx):
        raise _error(f"Invalid number of rows in input tensor. Expected: {len(idx)} Actual: "
                     f"{tensor.shape[0] if tensor.dim() else 0}")
    return idx


@kernel(lo.TensorListSplit)
def _split(node):
    dt = node.attrs["element_dtype"]

    def tensor_list_split(tensor, element_shape, lengths):
        shape = _decode_shape(element_shape)
        if tensor.dim() < 1:
            raise _error(f"Tensor must be at least a vector, but saw shape: "
                         f"{shape_str(tuple(tensor.shape))}")
        sizes = lengths.tolist()
        if any(s < 0 for s in sizes):
            raise _error("Invalid value in lengths: negative")
        if sum(sizes) != tensor.shape[0]:
            raise _error(f"Unused values in tensor. Length of tensor: {tensor.shape[0]} "
                         f"Values used: {sum(sizes)}")
        return TensorList(list(torch.split(tensor, sizes, 0)), dt, shape)
    return tensor_list_split


# -- updates -------------------------------------------------------------------------------------

@kernel(lo.TensorListSetItem)
def _set_item(node):
    dt = node.attrs["element_dtype"]
    resize = node.attrs.get("resize_if_index_out_of_bounds", False)

    def tensor_list_set_item(lst, index, item):
        _check_dtype(lst, dt)
        i = _index(index)
        n = len(lst)
        if resize and i >= n:
            items = lst.tensors + [None] * (i + 1 - n)
        elif i < 0 or i >= n:
            raise _error(f"Trying to modify element {i} in a list with {n} elements.")
        else:
            items = lst.tensors
        if not _compatible(lst.element_shape, item):
            raise _error(f"Tried to set a tensor with incompatible shape at a list index. "
                         f"Item element shape: {shape_str(tuple(item.shape))} list shape: "
                         f"{shape_str(lst.element_shape)}")
        items[i] = item
        return lst.with_items(items)
    return tensor_list_set_item


@kernel(lo.TensorListPushBack)
def _push_back(node):
    dt = node.attrs["element_dtype"]

    def tensor_list_push_back(lst, tensor):
        _check_dtype(lst, dt)
        if not _compatible(lst.element_shape, tensor):
            raise _error(f"Tried to append a tensor with incompatible shape to a list. Op "
                         f"element shape: {shape_str(tuple(tensor.shape))} list shape: "
                         f"{shape_str(lst.element_shape)}")
        if 0 <= lst.max_num_elements <= len(lst):
            raise _error(f"Tried to push item into a full list list size: {len(lst)} "
                         f"max_num_elements: {lst.max_num_elements}")
        return lst.push(tensor)
    return tensor_list_push_back


@kernel(lo.TensorListPopBack)
def _pop_back(node):
    dt = node.attrs["element_dtype"]
    dev = node.device

    def tensor_list_pop_back(lst, element_shape):
        _check_dtype(lst, dt)
        if len(lst) == 0:
            raise _error("Trying to pop from an empty list.")
        rest, t = lst.pop()
        if t is None:
            t = _read_uninitialized(lst, _decode_shape(element_shape), dt, dev)
        return rest, t
    return tensor_list_pop_back


@kernel(lo.TensorListResize)
def _resize(node):
    def tensor_list_resize(lst, size):
        n = int(size)
        if n < 0:
            raise _error(f"TensorListSlice expects size to be non-negative. Got: {n}")
        items = lst.tensors
        return lst.with_items(items[:n] + [None] * (n - len(items)))
    return tensor_list_resize


@kernel(lo.TensorListScatterIntoExistingList)
def _scatter_into(node):
    dt = node.attrs["element_dtype"]

    def tensor_list_scatter_into_existing_list(lst, tensor, indices):
        _check_dtype(lst, dt)
        idx = _check_scatter(tensor, indices)
        items = lst.tensors
        top = max(idx, default=-1) + 1
        if top > len(items):
            items += [None] * (top - len(items))
        for j, i in enumerate(idx):
            if not _compatible(lst.element_shape, tensor[j]):
                raise _error(f"Tried to set a tensor with incompatible shape at a list index. "
                             f"Item element shape: {shape_str(tuple(tensor.shape[1:]))} "
                             f"list shape: {shape_str(lst.element_shape)}")
            items[i] = tensor[j]
        return lst.with_items(items)
    return tensor_list_scatter_into_existing_list


# -- reads ---------------------------------------------------------------------------------------

def _read_uninitialized(lst: TensorList, requested, dt, dev) -> torch.Tensor:
    shape = _element_shape_for_read(lst, requested)
    if not _fully_defined(shape):
        raise _error(f"Trying to read an uninitialized tensor but element_shape is not fully "
                     f"defined: {shape_str(shape)} and no list element is set.")
    return _zeros(shape, dt, dev)


@kernel(lo.TensorListGetItem)
def _get_item(node):
    dt = node.attrs["element_dtype"]
    dev = node.device

    def tensor_list_get_item(lst, index, element_shape):
        _check_dtype(lst, dt)
        i = _index(index)
        if i < 0 or i >= len(lst):
            raise _error(f"Trying to access element {i} in a list with {len(lst)} elements.")
        t = lst.get(i)
        return t if t is not None else \
            _read_uninitialized(lst, _decode_shape(element_shape), dt, dev)
    return tensor_list_get_item


def _stack_items(lst: TensorList, items: list, requested, dt, dev, empty_msg: str):
    shape = _merge(lst.element_shape, requested)
    for t in items:
        if t is not None:
            shape = _merge(shape, tuple(t.shape))
    if not items:
        if not _fully_defined(shape):
            raise _error(f"{empty_msg}: {shape_str(shape)}")
        return torch.zeros((0,) + shape, dtype=dt.torch_dtype, device=dev)
    if any(t is None for t in items):
        if not _fully_defined(shape):
            raise _error(f"Tried to stack list which only contains uninitialized tensors and "
                         f"has a non-fully-defined element_shape: {shape_str(shape)}")
        zero = _zeros(shape, dt, dev)
        items = [zero if t is None else t for t in items]
    return torch.stack(items, 0)


@kernel(lo.TensorListStack)
def _stack(node):
    dt = node.attrs["element_dtype"]
    num = node.attrs["num_elements"]
    dev = node.device

    def tensor_list_stack(lst, element_shape):
        _check_dtype(lst, dt)
        if num != -1 and num != len(lst):
            raise _error(f"Operation expected a list with {num} elements but got a list with "
                         f"{len(lst)} elements.")
        return _stack_items(lst, lst.tensors, _decode_shape(element_shape), dt, dev,
                            "Tried to stack elements of an empty list with non-fully-defined "
                            "element_shape")
    return tensor_list_stack


@kernel(lo.TensorListGather)
def _gather(node):
    dt = node.attrs["element_dtype"]
    dev = node.device

    def tensor_list_gather(lst, indices, element_shape):
        _check_dtype(lst, dt)
        idx = indices.tolist()
        for i in idx:
            if i < 0 or i >= len(lst):
                raise _error(f"Index {i} out o range; list only has {len(lst)} elements.")
        return _stack_items(lst, [lst.get(i) for i in idx], _decode_shape(element_shape), dt,
                            dev, "Tried to gather 0 elements from a list with "
                            "non-fully-defined shape")
    return tensor_list_gather


@kernel(lo.TensorListConcatV2)
def _concat(node):
    dt = node.attrs["element_dtype"]
    dev = node.device

    def tensor_list_concat_v2(lst, element_shape, leading_dims):
        _check_dtype(lst, dt)
        shape = _merge(lst.element_shape, _decode_shape(element_shape))
        if shape is not None and len(shape) == 0:
            raise _error("Concat requires elements to be at least vectors, found scalars "
                         "instead.")
        items = lst.tensors
        lead = leading_dims.tolist()
        if any(t is None for t in items):
            tail = shape[1:] if shape is not None else None
            if not _fully_defined(tail) or (shape[0] is None and len(lead) != len(items)):
                raise _error("Concat requires all list elements to be initialized when the "
                             "element shape is not fully defined.")
            items = [t if t is not None else
                     _zeros((shape[0] if shape[0] is not None else lead[i],) + tail, dt, dev)
                     for i, t in enumerate(items)]
        for t in items:
            if t.dim() == 0:
                raise _error("Concat saw a scalar shape at index 0 but requires at least "
                             "vectors.")
        lengths = torch.tensor([t.shape[0] for t in items], dtype=torch.int64)
        if not items:
            if not _fully_defined(shape[1:] if shape is not None else None):
                raise _error("All except the first dimension must be fully defined when "
                             "concating an empty tensor list. element_shape: "
                             f"{shape_str(shape)}")
            return torch.zeros((0,) + shape[1:], dtype=dt.torch_dtype, device=dev), lengths
        return torch.cat(items, 0), lengths
    return tensor_list_concat_v2


@kernel(lo.TensorListConcat)
def _concat_v1(node):
    """TensorListConcat: ConcatV2 with its element shape from the attr, no leading dims."""
    attr = node.attrs["element_shape"]
    encoded = torch.tensor(-1 if attr.rank is None else
                           [-1 if d is None else d for d in attr.as_list()], dtype=torch.int32)
    v2 = _concat(node)
    empty = torch.zeros([0], dtype=torch.int64)
    return lambda lst: v2(lst, encoded, empty)


@kernel(lo.TensorListLength)
def _length(node):
    return lambda lst: torch.tensor(len(lst), dtype=torch.int32)


@kernel(lo.TensorListElementShape)
def _element_shape(node):
    tdt = node.attrs["shape_type"].torch_dtype

    def tensor_list_element_shape(lst):
        s = lst.element_shape
        if s is None:
            return torch.tensor(-1, dtype=tdt)
        return torch.tensor([-1 if d is None else d for d in s], dtype=tdt)
    return tensor_list_element_shape


# -- AddN and ZerosLike of lists (the gradient aggregation of list-valued tensors) ---------------

def add_lists(*lists: TensorList) -> TensorList:
    """Elementwise sum; an uninitialized element adds as zeros (TF's TensorListBinaryAdd)."""
    out = lists[0].tensors
    for other in lists[1:]:
        if len(other) != len(out):
            raise _error(f"Trying to add two lists of tensors with different lengths. One "
                         f"is {len(out)} and the other is {len(other)}")
        if lists[0].element_dtype is not other.element_dtype:
            raise _error(f"Trying to add two lists of tensors of different dtypes. One is "
                         f"{_tf_name(lists[0].element_dtype)} and the other is "
                         f"{_tf_name(other.element_dtype)}")
        out = [b if a is None else a if b is None else torch.add(a, b)
               for a, b in zip(out, other.tensors)]
    return lists[0].with_items(out)


def zeros_like_list(lst: TensorList) -> TensorList:
    return lst.with_items([None if t is None else torch.zeros_like(t) for t in lst.tensors])


def is_variant(node) -> bool:
    return bool(node.input_dtypes) and node.input_dtypes[0] is dtypes.variant

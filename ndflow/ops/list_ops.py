"""TensorFlow's TensorList ops: immutable lists of tensors held in one `variant` value.

`tf.TensorArray` in graphs and the While gradient's accumulators are built on them, as in
TensorFlow (tensorflow/core/ops/list_ops.cc). A list's value (kernels/list_ops.py) is
immutable: SetItem, PushBack, ... return a new list that shares the element tensors.
`element_shape` inputs encode a partial shape as in TF: a scalar -1 is an unknown rank, a
vector holds -1 for each unknown dimension. Gradients: list_ops_grad.py.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import static_value
from ndflow.ops.op_def import op_def

_SHAPE_T = "shape_type: {int32, int64}"
_SCALAR = TensorShape(())


def shape_from_value(v) -> TensorShape:
    """The partial shape an `element_shape` value encodes (None: not known statically)."""
    if v is None:
        return TensorShape(None)
    v = np.asarray(v)
    if v.ndim == 0:
        return TensorShape(None)
    return TensorShape([None if int(d) < 0 else int(d) for d in v.reshape(-1)])


def _element(ctx, i: int) -> TensorShape:
    return shape_from_value(static_value(ctx, i))


def _list_out(ctx):
    return [_SCALAR]


EmptyTensorList = op_def(
    "EmptyTensorList", inputs=["element_shape: shape_type", "max_num_elements: int32"],
    outputs=["handle: variant"], attrs=["element_dtype: type", _SHAPE_T],
    shape=_list_out, gradient_undefined=True)
TensorListReserve = op_def(
    "TensorListReserve", inputs=["element_shape: shape_type", "num_elements: int32"],
    outputs=["handle: variant"], attrs=["element_dtype: type", _SHAPE_T],
    shape=_list_out, gradient_undefined=True)
TensorListFromTensor = op_def(
    "TensorListFromTensor", inputs=["tensor: element_dtype", "element_shape: shape_type"],
    outputs=["output_handle: variant"], attrs=["element_dtype: type", _SHAPE_T],
    shape=_list_out)
TensorListSetItem = op_def(
    "TensorListSetItem", inputs=["input_handle: variant", "index: int32",
                                 "item: element_dtype"],
    outputs=["output_handle: variant"],
    attrs=["element_dtype: type", "resize_if_index_out_of_bounds: bool = false"],
    shape=_list_out)
TensorListPushBack = op_def(
    "TensorListPushBack", inputs=["input_handle: variant", "tensor: element_dtype"],
    outputs=["output_handle: variant"], attrs=["element_dtype: type"], shape=_list_out)
TensorListResize = op_def(
    "TensorListResize", inputs=["input_handle: variant", "size: int32"],
    outputs=["output_handle: variant"], shape=_list_out)
TensorListLength = op_def(
    "TensorListLength", inputs=["input_handle: variant"], outputs=["length: int32"],
    shape=_list_out, not_differentiable=True)
TensorListElementShape = op_def(
    "TensorListElementShape", inputs=["input_handle: variant"],
    outputs=["element_shape: shape_type"], attrs=[_SHAPE_T],
    shape=lambda ctx: [TensorShape(None)], not_differentiable=True)
TensorListScatterIntoExistingList = op_def(
    "TensorListScatterIntoExistingList",
    inputs=["input_handle: variant", "tensor: element_dtype", "indices: int32"],
    outputs=["output_handle: variant"], attrs=["element_dtype: type"], shape=_list_out)
TensorListScatterV2 = op_def(
    "TensorListScatterV2", inputs=["tensor: element_dtype", "indices: int32",
                                   "element_shape: shape_type", "num_elements: int32"],
    outputs=["output_handle: variant"], attrs=["element_dtype: type", _SHAPE_T],
    shape=_list_out)
TensorListScatter = op_def(
    "TensorListScatter", inputs=["tensor: element_dtype", "indices: int32",
                                 "element_shape: shape_type"],
    outputs=["output_handle: variant"], attrs=["element_dtype: type", _SHAPE_T],
    shape=_list_out)
TensorListSplit = op_def(
    "TensorListSplit", inputs=["tensor: element_dtype", "element_shape: shape_type",
                               "lengths: int64"],
    outputs=["output_handle: variant"], attrs=["element_dtype: type", _SHAPE_T],
    shape=_list_out)


def _get_item_shape(ctx):
    return [_element(ctx, 2)]


TensorListGetItem = op_def(
    "TensorListGetItem", inputs=["input_handle: variant", "index: int32",
                                 "element_shape: int32"],
    outputs=["item: element_dtype"], attrs=["element_dtype: type"], shape=_get_item_shape)


def _pop_back_shape(ctx):
    return [_SCALAR, _element(ctx, 1)]


TensorListPopBack = op_def(
    "TensorListPopBack", inputs=["input_handle: variant", "element_shape: int32"],
    outputs=["output_handle: variant", "tensor: element_dtype"],
    attrs=["element_dtype: type"], shape=_pop_back_shape)


def _stack_shape(ctx):
    n = ctx.attrs["num_elements"]
    return [TensorShape([None if n < 0 else n]).concatenate(_element(ctx, 1))]


TensorListStack = op_def(
    "TensorListStack", inputs=["input_handle: variant", "element_shape: int32"],
    outputs=["tensor: element_dtype"],
    attrs=["element_dtype: type", "num_elements: int = -1"], shape=_stack_shape)


def _gather_shape(ctx):
    idx = ctx.shapes[1]
    rows = idx[0] if idx.rank == 1 else None
    return [TensorShape([rows]).concatenate(_element(ctx, 2))]


TensorListGather = op_def(
    "TensorListGather", inputs=["input_handle: variant", "indices: int32",
                                "element_shape: int32"],
    outputs=["values: element_dtype"], attrs=["element_dtype: type"], shape=_gather_shape)


def _concat_shape(ctx):
    element = _element(ctx, 1)
    if element.rank == 0:
        raise ValueError("Concat requires elements to be at least vectors, found scalars "
                         "instead.")
    tail = TensorShape(None) if element.rank is None else TensorShape(element.as_list()[1:])
    return [TensorShape([None]).concatenate(tail), TensorShape([None])]


TensorListConcatV2 = op_def(
    "TensorListConcatV2", inputs=["input_handle: variant", "element_shape: shape_type",
                                  "leading_dims: int64"],
    outputs=["tensor: element_dtype", "lengths: int64"],
    attrs=["element_dtype: type", _SHAPE_T], shape=_concat_shape)


def _concat_v1_shape(ctx):
    element = ctx.attrs["element_shape"]
    tail = TensorShape(None) if element.rank is None else TensorShape(element.as_list()[1:])
    return [TensorShape([None]).concatenate(tail), TensorShape([None])]


TensorListConcat = op_def(
    "TensorListConcat", inputs=["input_handle: variant"],
    outputs=["tensor: element_dtype", "lengths: int64"],
    attrs=["element_dtype: type", "element_shape: shape = unknown"], shape=_concat_v1_shape)


# -- Python wrappers (TF's list_ops module; none of these are public tf.* names) ----------------

def build_element_shape(shape):
    """TF's `_build_element_shape`: a shape (TensorShape, list with None, or a tensor) as
    the int32 value list ops take (-1 for unknown rank or dimension)."""
    if isinstance(shape, Tensor):
        return shape
    if isinstance(shape, TensorShape):
        shape = shape.as_list() if shape.rank is not None else None
    if shape is None:
        return convert_to_tensor(-1, dtypes.int32)
    if isinstance(shape, (np.ndarray, np.generic)) or not shape:
        return convert_to_tensor(np.asarray(shape, np.int32).reshape(-1), dtypes.int32)
    return convert_to_tensor([-1 if d is None else int(d) for d in shape], dtypes.int32)


def _int(x, dtype=dtypes.int32):
    return convert_to_tensor(x, dtype)


def empty_tensor_list(element_shape, element_dtype, max_num_elements=None, name=None):
    return apply_op(EmptyTensorList, [build_element_shape(element_shape),
                                      _int(-1 if max_num_elements is None else
                                           max_num_elements)],
                    {"element_dtype": dtypes.as_dtype(element_dtype)}, name=name).outputs[0]


def tensor_list_reserve(element_shape, num_elements, element_dtype, name=None):
    return apply_op(TensorListReserve, [build_element_shape(element_shape),
                                        _int(num_elements)],
                    {"element_dtype": dtypes.as_dtype(element_dtype)}, name=name).outputs[0]


def tensor_list_from_tensor(tensor, element_shape, name=None):
    tensor = convert_to_tensor(tensor)
    return apply_op(TensorListFromTensor, [tensor, build_element_shape(element_shape)],
                    name=name).outputs[0]


def tensor_list_get_item(input_handle, index, element_dtype, element_shape=None, name=None):
    return apply_op(TensorListGetItem, [input_handle, _int(index),
                                        build_element_shape(element_shape)],
                    {"element_dtype": dtypes.as_dtype(element_dtype)}, name=name).outputs[0]


def tensor_list_set_item(input_handle, index, item, resize_if_index_out_of_bounds=False,
                         name=None):
    return apply_op(TensorListSetItem, [input_handle, _int(index), item],
                    {"resize_if_index_out_of_bounds": resize_if_index_out_of_bounds},
                    name=name).outputs[0]


def tensor_list_push_back(input_handle, tensor, name=None):
    return apply_op(TensorListPushBack, [input_handle, tensor], name=name).outputs[0]


def tensor_list_pop_back(input_handle, element_dtype, element_shape=-1, name=None):
    """(the shorter list, the last element)."""
    op = apply_op(TensorListPopBack, [input_handle, build_element_shape(
        None if isinstance(element_shape, int) and element_shape == -1 else element_shape)],
        {"element_dtype": dtypes.as_dtype(element_dtype)}, name=name)
    return op.outputs[0], op.outputs[1]


def tensor_list_stack(input_handle, element_dtype, num_elements=-1, element_shape=None,
                      name=None):
    return apply_op(TensorListStack, [input_handle, build_element_shape(element_shape)],
                    {"element_dtype": dtypes.as_dtype(element_dtype),
                     "num_elements": int(num_elements)}, name=name).outputs[0]


def tensor_list_gather(input_handle, indices, element_dtype, element_shape=None, name=None):
    return apply_op(TensorListGather, [input_handle, _int(indices),
                                       build_element_shape(element_shape)],
                    {"element_dtype": dtypes.as_dtype(element_dtype)}, name=name).outputs[0]


def tensor_list_scatter(tensor, indices, element_shape=None, input_handle=None, name=None):
    """A list made (TensorListScatterV2) or updated (TensorListScatterIntoExistingList) by
    setting `list[indices[i]] = tensor[i]`."""
    tensor = convert_to_tensor(tensor)
    if input_handle is not None:
        return apply_op(TensorListScatterIntoExistingList,
                        [input_handle, tensor, _int(indices)], name=name).outputs[0]
    return apply_op(TensorListScatterV2, [tensor, _int(indices),
                                          build_element_shape(element_shape), _int(-1)],
                    name=name).outputs[0]


def tensor_list_concat_v2(input_handle, element_dtype, element_shape=None, leading_dims=None,
                          name=None):
    """(the elements concatenated along axis 0, their lengths)."""
    lead = _int([] if leading_dims is None else leading_dims, dtypes.int64)
    op = apply_op(TensorListConcatV2, [input_handle, build_element_shape(element_shape), lead],
                  {"element_dtype": dtypes.as_dtype(element_dtype)}, name=name)
    return op.outputs[0], op.outputs[1]


def tensor_list_concat(input_handle, element_dtype, element_shape=None, name=None):
    return tensor_list_concat_v2(input_handle, element_dtype, element_shape, name=name)[0]


def tensor_list_split(tensor, element_shape, lengths, name=None):
    return apply_op(TensorListSplit, [convert_to_tensor(tensor),
                                      build_element_shape(element_shape),
                                      _int(lengths, dtypes.int64)], name=name).outputs[0]


def tensor_list_length(input_handle, name=None):
    return apply_op(TensorListLength, [input_handle], name=name).outputs[0]


def tensor_list_element_shape(input_handle, shape_type=dtypes.int32, name=None):
    return apply_op(TensorListElementShape, [input_handle],
                    {"shape_type": dtypes.as_dtype(shape_type)}, name=name).outputs[0]


def tensor_list_resize(input_handle, size, name=None):
    return apply_op(TensorListResize, [input_handle, _int(size)], name=name).outputs[0]

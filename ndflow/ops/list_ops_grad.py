"""Gradients of the TensorList ops, as TensorFlow's list_ops.py registers them: the gradient
of a list is a list of the element gradients (None: no gradient reached the list)."""

from __future__ import annotations

from ndflow.ops import list_ops as lo
from ndflow.ops.array_core import shape
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.array_slicing import concat, slice  # noqa: A004 - TF's names


def _element_shape_of(t):
    """shape(t)[1:]: the shape of one row of `t`."""
    return slice(shape(t), [1], [-1])


@lo.TensorListPushBack.def_grad
def _push_back_grad(op, dlist):
    rest, item = lo.tensor_list_pop_back(dlist, op.inputs[1].dtype,
                                         element_shape=shape(op.inputs[1]))
    return rest, item


@lo.TensorListPopBack.def_grad
def _pop_back_grad(op, dlist, delement):
    if dlist is None:
        dlist = lo.empty_tensor_list(lo.tensor_list_element_shape(op.outputs[0]),
                                     delement.dtype)
    if delement is None:
        delement = zeros_like(op.outputs[1])
    return lo.tensor_list_push_back(dlist, delement), None


@lo.TensorListStack.def_grad
def _stack_grad(op, dtensor):
    return lo.tensor_list_from_tensor(dtensor, element_shape=dtensor.shape[1:]), None


@lo.TensorListConcatV2.def_grad
def _concat_grad(op, dtensor, unused_dlengths):
    dlist = lo.tensor_list_split(dtensor, lo.tensor_list_element_shape(op.inputs[0]),
                                 op.outputs[1])
    return dlist, None, None


@lo.TensorListConcat.def_grad
def _concat_v1_grad(op, dtensor, unused_dlengths):
    return lo.tensor_list_split(dtensor, lo.tensor_list_element_shape(op.inputs[0]),
                                op.outputs[1])


@lo.TensorListSplit.def_grad
def _split_grad(op, dlist):
    tensor, _, lengths = op.inputs
    element_shape = concat([[-1], _element_shape_of(tensor)], 0)
    return lo.tensor_list_concat_v2(dlist, tensor.dtype, element_shape, lengths)[0], None, None


@lo.TensorListFromTensor.def_grad
def _from_tensor_grad(op, dlist):
    t = op.inputs[0]
    rows = t.shape[0] if t.shape.rank and t.shape[0] is not None else -1
    if dlist is None:
        dlist = lo.empty_tensor_list(lo.tensor_list_element_shape(op.outputs[0]), t.dtype)
    return lo.tensor_list_stack(dlist, t.dtype, rows, _element_shape_of(t)), None


@lo.TensorListGetItem.def_grad
def _get_item_grad(op, ditem):
    lst = op.inputs[0]
    reserved = lo.tensor_list_reserve(lo.tensor_list_element_shape(lst),
                                      lo.tensor_list_length(lst), ditem.dtype)
    return lo.tensor_list_set_item(reserved, op.inputs[1], ditem), None, None


@lo.TensorListSetItem.def_grad
def _set_item_grad(op, dlist):
    lst, index, item = op.inputs
    list_grad = lo.tensor_list_set_item(dlist, index, zeros_like(item))
    item_grad = lo.tensor_list_get_item(dlist, index, item.dtype, element_shape=shape(item))
    if op.attrs.get("resize_if_index_out_of_bounds"):
        list_grad = lo.tensor_list_resize(list_grad, lo.tensor_list_length(lst))
    return list_grad, None, item_grad


@lo.TensorListResize.def_grad
def _resize_grad(op, dlist):
    return lo.tensor_list_resize(dlist, lo.tensor_list_length(op.inputs[0])), None


@lo.TensorListGather.def_grad
def _gather_grad(op, dtensor):
    lst, indices, _ = op.inputs
    dlist = lo.tensor_list_reserve(lo.tensor_list_element_shape(lst),
                                   lo.tensor_list_length(lst), dtensor.dtype)
    return lo.tensor_list_scatter(dtensor, indices, input_handle=dlist), None, None


@lo.TensorListScatterV2.def_grad
def _scatter_grad(op, dlist):
    tensor, indices = op.inputs[0], op.inputs[1]
    dtensor = lo.tensor_list_gather(dlist, indices, tensor.dtype,
                                    element_shape=_element_shape_of(tensor))
    return dtensor, None, None, None


@lo.TensorListScatter.def_grad
def _scatter_v1_grad(op, dlist):
    tensor, indices = op.inputs[0], op.inputs[1]
    dtensor = lo.tensor_list_gather(dlist, indices, tensor.dtype,
                                    element_shape=_element_shape_of(tensor))
    return dtensor, None, None


@lo.TensorListScatterIntoExistingList.def_grad
def _scatter_into_grad(op, dlist):
    _, tensor, indices = op.inputs
    dtensor = lo.tensor_list_gather(dlist, indices, tensor.dtype,
                                    element_shape=_element_shape_of(tensor))
    return lo.tensor_list_scatter(zeros_like(tensor), indices, input_handle=dlist), \
        dtensor, None


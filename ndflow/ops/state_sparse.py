"""Sparse reads and writes of resource variables (TensorFlow's resource_variable_ops):
ResourceGather (a gather straight from the variable: no read of the whole table; its gradient
is IndexedSlices for the variable), VariableShape, and the ResourceScatter* updates, which
touch only the rows they name."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.shapes import TensorShape
from ndflow.ops import array_core, array_slicing
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.op_def import op_def

ResourceGather = op_def(
    "ResourceGather", inputs=["resource: resource", "indices: Tindices"],
    outputs=["output: dtype"],
    attrs=["batch_dims: int = 0", "validate_indices: bool = true", "dtype: type",
           "Tindices: {int32, int64}"], shape=lambda ctx: [TensorShape(None)], stateful=True)

VariableShape = op_def(
    "VariableShape", inputs=["input: resource"], outputs=["output: out_type"],
    attrs=["out_type: {int32, int64} = DT_INT32"], shape=lambda ctx: [TensorShape([None])],
    stateful=True, not_differentiable=True)


def _scatter(name: str):
    return op_def(name, inputs=["resource: resource", "indices: Tindices", "updates: dtype"],
                  attrs=["dtype: type", "Tindices: {int32, int64}"],
                  shape=lambda ctx: [], stateful=True, gradient_undefined=True)


ResourceScatterAdd = _scatter("ResourceScatterAdd")
ResourceScatterSub = _scatter("ResourceScatterSub")
ResourceScatterMul = _scatter("ResourceScatterMul")
ResourceScatterDiv = _scatter("ResourceScatterDiv")
ResourceScatterMin = _scatter("ResourceScatterMin")
ResourceScatterMax = _scatter("ResourceScatterMax")
ResourceScatterUpdate = _scatter("ResourceScatterUpdate")

SCATTERS = {"add": ResourceScatterAdd, "sub": ResourceScatterSub, "mul": ResourceScatterMul,
            "div": ResourceScatterDiv, "min": ResourceScatterMin, "max": ResourceScatterMax,
            "update": ResourceScatterUpdate}


def variable_shape(handle, out_type=dtypes.int32, name=None):
    return apply_op(VariableShape, [handle], {"out_type": out_type}, name=name).outputs[0]


def resource_gather(handle, indices, dtype, name=None):
    indices = convert_to_tensor(indices, dtype_hint=dtypes.int32, name="indices")
    return apply_op(ResourceGather, [handle, indices], {"dtype": dtype}, name=name).outputs[0]


def resource_scatter(kind: str, handle, indices, updates, dtype, name=None):
    indices = convert_to_tensor(indices, dtype_hint=dtypes.int32, name="indices")
    updates = convert_to_tensor(updates, dtype, name="updates")
    return apply_op(SCATTERS[kind], [handle, indices, updates], name=name)


@ResourceGather.def_grad
def _resource_gather_grad(op, grad):
    """TF's _GatherGrad: IndexedSlices of the gathered rows for the variable."""
    handle, indices = op.inputs
    params_shape = variable_shape(handle, dtypes.int64)
    size = array_core.size(indices, out_type=dtypes.int64)
    values_shape = array_slicing.concat([array_core.reshape(size, [1]), params_shape[1:]], 0)
    values = array_core.reshape(grad, values_shape)
    return [IndexedSlices(values, array_core.reshape(indices, [-1]), params_shape), None]

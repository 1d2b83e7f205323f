"""RaggedTensorToTensor: a ragged tensor given as flat values and row partitions (row splits,
row lengths, or a first dimension size and value row ids) padded into a dense tensor. This is
how Keras' TextVectorization (and `RaggedTensor.to_tensor`) pads its token ids; SavedModels
written by TensorFlow with it load with this op. Kernel: kernels/ragged_conversion.py.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import reshape, shape
from ndflow.ops.array_gather import unsorted_segment_sum
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.array_range import range as range_
from ndflow.ops.cast import cast
from ndflow.ops.comparison import logical_not, not_equal
from ndflow.ops.op_def import op_def
from ndflow.ops.reduction import reduce_sum


def _dense_shape(ctx):
    """The requested shape where it is a constant, else the rank it implies."""
    ragged_rank = sum(1 for t in ctx.attrs["row_partition_types"]
                      if (t.decode() if isinstance(t, bytes) else t) != "FIRST_DIM_SIZE")
    values = ctx.shapes[1]
    requested = ctx.value(0)
    if values.rank is None:
        return [TensorShape(None)]
    rank = 1 + ragged_rank + values.rank - 1
    dims = [None] * (1 + ragged_rank) + values.as_list()[1:]
    if requested is not None and requested.ndim == 1 and len(requested) == rank:
        dims = [None if d < 0 else int(d) for d in requested.tolist()]
    types = [t.decode() if isinstance(t, bytes) else t for t in ctx.attrs["row_partition_types"]]
    first = ctx.shapes[3] if len(ctx.shapes) > 3 else TensorShape(None)
    if dims[0] is None and types and types[0] == "ROW_SPLITS" and first.rank == 1 \
            and first.as_list()[0] is not None:   # TF's shape fn: as many rows as splits - 1
        dims[0] = first.as_list()[0] - 1
    elif dims[0] is None and types and types[0] == "FIRST_DIM_SIZE" and ctx.value(3) is not None:
        dims[0] = int(ctx.value(3))
    return [TensorShape(dims)]


RaggedTensorToTensor = op_def(
    "RaggedTensorToTensor",
    inputs=["shape: Tshape", "values: T", "default_value: T",
            "row_partition_tensors: num_row_partition_tensors * Tindex"],
    outputs=["result: T"],
    attrs=["T: type", "Tindex: {int64, int32}", "Tshape: {int64, int32}",
           "num_row_partition_tensors: int", "row_partition_types: list(string)"],
    shape=_dense_shape,
    doc="Pads a ragged tensor (flat values and row partitions) into a dense tensor.")


@RaggedTensorToTensor.def_grad
def _ragged_to_tensor_grad(op, grad):
    """Each flat value gets the gradient of the place it filled; the default value the sum
    of the places it filled (TensorFlow's rule, with a dense gradient for the values)."""
    values, default = op.inputs[1], op.inputs[2]
    partitions = list(op.inputs[3:])
    n = shape(values, out_type=dtypes.int64)[0]
    ragged_rank = sum(1 for t in op.get_attr("row_partition_types")
                      if (t.decode() if isinstance(t, bytes) else t) != "FIRST_DIM_SIZE")
    # which flat value (or -1: the default) each place of the output holds
    index_of = apply_op(RaggedTensorToTensor, [
        shape(grad, out_type=dtypes.int64)[:1 + ragged_rank],
        range_(n, dtype=dtypes.int64), cast(-1, dtypes.int64), partitions],
        {"row_partition_types": op.get_attr("row_partition_types")}).outputs[0]
    filled = not_equal(index_of, -1)
    values_grad = unsorted_segment_sum(boolean_mask(grad, filled),
                                       boolean_mask(index_of, filled), n)
    default_places = boolean_mask(grad, logical_not(filled))
    if default.shape.rank == 0:
        default_grad = reduce_sum(default_places)
    else:
        default_grad = reshape(reduce_sum(default_places, axis=0), shape(default))
    return [None, values_grad, default_grad] + [None] * len(partitions)

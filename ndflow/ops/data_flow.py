"""DynamicPartition (`tf.dynamic_partition`) and DynamicStitch (`tf.dynamic_stitch`),
TensorFlow's data_flow ops that sharded lookups (`tf.nn.embedding_lookup`) are built on."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import static_value
from ndflow.ops.op_def import op_def


def _partition_shape(ctx):
    data, partitions = ctx.shapes
    if data.rank is not None and partitions.rank is not None:
        if partitions.rank > data.rank or not TensorShape(
                data.as_list()[:partitions.rank]).is_compatible_with(partitions):
            raise ValueError(f"Shape {partitions} must be a prefix of the shape of data "
                             f"{data}")
    tail = TensorShape(None) if data.rank is None or partitions.rank is None else \
        TensorShape(data.as_list()[partitions.rank:])
    return [TensorShape([None]).concatenate(tail)] * ctx.attrs["num_partitions"]


DynamicPartition = op_def(
    "DynamicPartition", inputs=["data: T", "partitions: int32"],
    outputs=["outputs: num_partitions * T"], attrs=["num_partitions: int >= 1", "T: type"],
    shape=_partition_shape)


@tf_export("dynamic_partition")
def dynamic_partition(data, partitions, num_partitions: int, name: str | None = None) -> list:
    """Splits `data` into `num_partitions` tensors by a partition index per slice.

    Args:
      data: a tensor.
      partitions: an int32 tensor whose shape is a prefix of data's; values in
        [0, num_partitions).
      num_partitions: the number of outputs.
      name: optional name for the operation.

    Returns:
      A list of `num_partitions` tensors: output i holds, in order, the slices of `data` whose
      partition is i.

    Raises:
      InvalidArgumentError: for a partition index out of range.

    Example:
      >>> [t.numpy().tolist() for t in tf.dynamic_partition([10, 20, 30], [0, 1, 0], 2)]
      [[10, 30], [20]]
    """
    data = convert_to_tensor(data)
    partitions = convert_to_tensor(partitions, dtype_hint=dtypes.int32)
    return list(apply_op(DynamicPartition, [data, partitions],
                         {"num_partitions": num_partitions}, name=name).outputs)


def _stitch_shape(ctx):
    n = ctx.attrs["N"]
    indices, data = ctx.shapes[:n], ctx.shapes[n:]
    element = TensorShape(None)
    for ind, d in zip(indices, data):
        if ind.rank is None or d.rank is None:
            continue
        if not TensorShape(d.as_list()[:ind.rank]).is_compatible_with(ind):
            raise ValueError(f"Dimensions must be equal, but data shape {d} does not start "
                             f"with indices shape {ind}")
        element = element.merge_with(TensorShape(d.as_list()[ind.rank:]))
    values = [static_value(ctx, i) for i in range(n)]
    rows = None if any(v is None for v in values) else \
        max((int(v.max()) for v in values if v.size), default=-1) + 1
    return [TensorShape([rows]).concatenate(element)]


DynamicStitch = op_def(
    "DynamicStitch", inputs=["indices: N * int32", "data: N * T"], outputs=["merged: T"],
    attrs=["N: int >= 1", "T: type"], shape=_stitch_shape)


@tf_export("dynamic_stitch")
def dynamic_stitch(indices, data, name: str | None = None) -> Tensor:
    """Interleaves tensors into one by index: `merged[indices[m][i]] = data[m][i]`.

    Later values win for repeated indices; the inverse of `tf.dynamic_partition`.

    Args:
      indices: a list of int32 tensors of positions.
      data: a list of tensors, data[m] shaped indices[m].shape + common slice shape.
      name: optional name for the operation.

    Returns:
      A tensor with max(indices) + 1 slices.

    Example:
      >>> tf.dynamic_stitch([[0, 2], [1]], [[10, 30], [20]]).numpy()
      array([10, 20, 30], dtype=int32)
    """
    indices = [convert_to_tensor(i, dtype_hint=dtypes.int32) for i in indices]
    data = [convert_to_tensor(d) for d in data]
    return apply_op(DynamicStitch, [indices, data], name=name).outputs[0]

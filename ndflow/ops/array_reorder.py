"""Array ops that reorder elements: ReverseV2 (`tf.reverse`) and Roll (`tf.roll`)."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import int_tensor
from ndflow.ops.comparison import unchanged_shape
from ndflow.ops.op_def import op_def

ReverseV2 = op_def("ReverseV2", inputs=["tensor: T", "axis: Tidx"], outputs=["output: T"],
                   attrs=["Tidx: {int32, int64} = DT_INT32", "T: type"],
                   shape=unchanged_shape)

Roll = op_def("Roll", inputs=["input: T", "shift: Tshift", "axis: Taxis"],
              outputs=["output: T"],
              attrs=["T: type", "Tshift: {int32, int64}", "Taxis: {int32, int64}"],
              shape=unchanged_shape)


@tf_export("reverse", v1=["reverse", "manip.reverse", "reverse_v2"])
def reverse(tensor, axis, name: str | None = None) -> Tensor:
    """`tf.reverse`: `tensor` with the order along each of `axis` reversed."""
    return apply_op(ReverseV2, [convert_to_tensor(tensor), int_tensor(axis)],
                    name=name).outputs[0]


@tf_export("roll", v1=["roll", "manip.roll"])
def roll(input, shift, axis, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.roll`: elements shifted by `shift` along `axis`, wrapping around (several axes,
    or one axis several times, add up)."""
    return apply_op(Roll, [convert_to_tensor(input), int_tensor(shift), int_tensor(axis)],
                    name=name).outputs[0]

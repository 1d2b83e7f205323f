"""Array ops that reorder elements: ReverseV2 (`tf.reverse`), Roll (`tf.roll`) and
ReverseSequence (`tf.reverse_sequence`)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.tensor import Tensor
from ndflow.ops import composite_dispatch
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import int_input
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
    if isinstance(tensor, CompositeTensor):   # ops/ragged_array_ops.py
        return composite_dispatch.call("reverse", tensor, axis, name)
    return apply_op(ReverseV2, [convert_to_tensor(tensor), int_input(axis)],
                    name=name).outputs[0]


@tf_export("roll", v1=["roll", "manip.roll"])
def roll(input, shift, axis, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.roll`: elements shifted by `shift` along `axis`, wrapping around (several axes,
    or one axis several times, add up)."""
    return apply_op(Roll, [convert_to_tensor(input), int_input(shift), int_input(axis)],
                    name=name).outputs[0]


ReverseSequence = op_def(
    "ReverseSequence", inputs=["input: T", "seq_lengths: Tlen"], outputs=["output: T"],
    attrs=["seq_dim: int", "batch_dim: int = 0", "T: type", "Tlen: {int32, int64} = DT_INT64"],
    shape=unchanged_shape)


@tf_export("reverse_sequence", v1=[])
def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None,  # noqa: A002
                     name: str | None = None) -> Tensor:
    """`tf.reverse_sequence`: along `seq_axis`, the first `seq_lengths[b]` elements of each
    batch entry b (along `batch_axis`) reversed, the rest kept (bidirectional RNNs)."""
    return apply_op(ReverseSequence, [convert_to_tensor(input),
                                      convert_to_tensor(seq_lengths, dtype_hint=dtypes.int64)],
                    {"seq_dim": seq_axis, "batch_dim": 0 if batch_axis is None else batch_axis},
                    name=name).outputs[0]


@tf_export(v1=["reverse_sequence"])
def reverse_sequence_v1(input, seq_lengths, seq_axis=None, batch_axis=None,  # noqa: A002
                        name: str | None = None, seq_dim=None, batch_dim=None) -> Tensor:
    """`tf.compat.v1.reverse_sequence` (`seq_dim`/`batch_dim` are TF 1.x's names)."""
    seq_axis = deprecated_argument_lookup("seq_axis", seq_axis, "seq_dim", seq_dim)
    batch_axis = deprecated_argument_lookup("batch_axis", batch_axis, "batch_dim", batch_dim)
    return reverse_sequence(input, seq_lengths, seq_axis, batch_axis, name)

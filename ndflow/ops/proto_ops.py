"""`tf.io.decode_proto` / `tf.io.encode_proto`: TF's DecodeProtoV2 and EncodeProto ops
(fields of serialized protocol buffers to dense tensors and back; kernels in
kernels/proto_codec.py). TF marks both not differentiable."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def _decode_shape(ctx):
    batch = ctx.shapes[0]
    n = len(ctx.attrs["output_types"])
    if batch.rank is None:
        return [TensorShape(None)] * (n + 1)
    prefix = batch.as_list()
    return ([TensorShape(prefix + [len(ctx.attrs["field_names"])])]
            + [TensorShape(prefix + [None])] * n)


def _encode_shape(ctx):
    sizes = ctx.shapes[0]
    if sizes.rank is None:
        return [TensorShape(None)]
    if sizes.rank < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {sizes.rank}")
    return [TensorShape(sizes.as_list()[:-1])]


DecodeProtoV2 = op_def(
    "DecodeProtoV2", inputs=["bytes: string"],
    outputs=["sizes: int32", "values: output_types"],
    attrs=["message_type: string", "field_names: list(string)", "output_types: list(type)",
           "descriptor_source: string = 'local://'", "message_format: string = 'binary'",
           "sanitize: bool = false"],
    shape=_decode_shape, not_differentiable=True)

EncodeProto = op_def(
    "EncodeProto", inputs=["sizes: int32", "values: Tinput_types"], outputs=["bytes: string"],
    attrs=["field_names: list(string)", "message_type: string",
           "descriptor_source: string = 'local://'", "Tinput_types: list(type)"],
    shape=_encode_shape, not_differentiable=True)


@tf_export("io.decode_proto")
def decode_proto(bytes, message_type, field_names, output_types,  # noqa: A002 - TF's name
                 descriptor_source="local://", message_format="binary", sanitize=False,
                 name=None):
    """`tf.io.decode_proto`: fields `field_names` of the serialized `message_type` messages
    in `bytes` as `(sizes, values)`: sizes [..., len(field_names)] counts each field's values,
    values[i] [..., max(1, most values)] holds them, padded with the field's default."""
    x = convert_to_tensor(bytes, dtypes.string, name="bytes")
    attrs = {"message_type": message_type, "field_names": list(field_names),
             "output_types": [dtypes.as_dtype(t) for t in output_types],
             "descriptor_source": descriptor_source, "message_format": message_format,
             "sanitize": bool(sanitize)}
    op = apply_op(DecodeProtoV2, [x], attrs, name=name)
    return op.outputs[0], list(op.outputs[1:])


@tf_export("io.encode_proto")
def encode_proto(sizes, values, field_names, message_type, descriptor_source="local://",
                 name=None):
    """`tf.io.encode_proto`: serialized `message_type` messages holding the first
    sizes[..., i] entries of values[i] as field field_names[i]."""
    s = convert_to_tensor(sizes, dtypes.int32, name="sizes")
    vals = [convert_to_tensor(v) for v in values]
    attrs = {"field_names": list(field_names), "message_type": message_type,
             "descriptor_source": descriptor_source,
             "Tinput_types": [v.dtype for v in vals]}
    return apply_op(EncodeProto, [s, vals], attrs, name=name).outputs[0]

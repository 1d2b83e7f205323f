"""Byte-string I/O of TensorFlow: `tf.io.read_file`/`write_file` (ReadFile, WriteFile),
`tf.io.serialize_tensor`/`parse_tensor` (a TensorProto as bytes, as TensorFlow writes it) and
`tf.io.decode_compressed` (ZLIB/GZIP). Kernels in kernels/string_io.py."""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def

ReadFile = op_def("ReadFile", inputs=["filename: string"], outputs=["contents: string"],
                  shape=lambda ctx: [TensorShape([])], gradient_undefined=True)
WriteFile = op_def("WriteFile", inputs=["filename: string", "contents: string"], outputs=[],
                   stateful=True, gradient_undefined=True)
SerializeTensor = op_def("SerializeTensor", inputs=["tensor: T"],
                         outputs=["serialized: string"], attrs=["T: type"],
                         shape=lambda ctx: [TensorShape([])], not_differentiable=True)
ParseTensor = op_def("ParseTensor", inputs=["serialized: string"], outputs=["output: out_type"],
                     attrs=["out_type: type"], shape=lambda ctx: [TensorShape(None)],
                     not_differentiable=True)
DecodeCompressed = op_def("DecodeCompressed", inputs=["bytes: string"],
                          outputs=["output: string"],
                          attrs=["compression_type: string = ''"],
                          shape=lambda ctx: [ctx.shapes[0]], gradient_undefined=True)


@tf_export("io.read_file", v1=["io.read_file", "read_file"])
def read_file(filename, name=None):
    """The whole contents of the file `filename` (a scalar string)."""
    f = convert_to_tensor(filename, dtypes.string, name="filename")
    return apply_op(ReadFile, [f], {}, name=name).outputs[0]


@tf_export("io.write_file", v1=["io.write_file", "write_file"])
def write_file(filename, contents, name=None):
    """Writes `contents` to `filename`, creating missing directories (a stateful op)."""
    f = convert_to_tensor(filename, dtypes.string, name="filename")
    c = convert_to_tensor(contents, dtypes.string, name="contents")
    op = apply_op(WriteFile, [f, c], {}, name=name)
    return None if context.executing_eagerly() else op


@tf_export("io.serialize_tensor", v1=["io.serialize_tensor", "serialize_tensor"])
def serialize_tensor(tensor, name=None):
    """`tensor` as the bytes of its TensorProto (tensor_content; string_val for strings)."""
    x = convert_to_tensor(tensor, name="tensor")
    return apply_op(SerializeTensor, [x], {}, name=name).outputs[0]


@tf_export("io.parse_tensor", v1=["io.parse_tensor", "parse_tensor"])
def parse_tensor(serialized, out_type, name=None):
    """The tensor of a serialized TensorProto, which must hold `out_type`."""
    s = convert_to_tensor(serialized, dtypes.string, name="serialized")
    return apply_op(ParseTensor, [s], {"out_type": dtypes.as_dtype(out_type)},
                    name=name).outputs[0]


@tf_export("io.decode_compressed", v1=["io.decode_compressed", "decode_compressed"])
def decode_compressed(bytes, compression_type="", name=None):  # noqa: A002 - TF's name
    """Each string decompressed ('' none, 'ZLIB' or 'GZIP')."""
    x = convert_to_tensor(bytes, dtypes.string, name="bytes")
    return apply_op(DecodeCompressed, [x], {"compression_type": compression_type},
                    name=name).outputs[0]

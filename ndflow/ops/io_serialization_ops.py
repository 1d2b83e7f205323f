"""`tf.io` serialization ops: `serialize_sparse`, `serialize_many_sparse`,
`deserialize_many_sparse` (SparseTensors as TensorProto strings, TensorFlow's format),
`decode_json_example` (JSON tf.train.Example to binary) and `matching_files` (glob).
Kernels in kernels/io_serialization.py."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.variables import Variable

_SPARSE_INPUTS = ["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"]

SerializeSparse = op_def(
    "SerializeSparse", inputs=_SPARSE_INPUTS, outputs=["serialized_sparse: out_type"],
    attrs=["T: type", "out_type: {string, variant} = DT_STRING"],
    shape=lambda ctx: [TensorShape([3])], gradient_undefined=True)
SerializeManySparse = op_def(
    "SerializeManySparse", inputs=_SPARSE_INPUTS, outputs=["serialized_sparse: out_type"],
    attrs=["T: type", "out_type: {string, variant} = DT_STRING"],
    shape=lambda ctx: [TensorShape([None, 3])], gradient_undefined=True)
DeserializeManySparse = op_def(
    "DeserializeManySparse", inputs=["serialized_sparse: string"],
    outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
    attrs=["dtype: type"],
    shape=lambda ctx: [TensorShape([None, None]), TensorShape([None]), TensorShape([None])],
    gradient_undefined=True)
DecodeJSONExample = op_def(
    "DecodeJSONExample", inputs=["json_examples: string"], outputs=["binary_examples: string"],
    shape=lambda ctx: [ctx.shapes[0]], gradient_undefined=True)
MatchingFiles = op_def(
    "MatchingFiles", inputs=["pattern: string"], outputs=["filenames: string"],
    shape=lambda ctx: [TensorShape([None])], gradient_undefined=True)


def _sparse(sp_input) -> SparseTensor:
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}.")
    return sp_input


def _serialize(op, sp_input, out_type, name):
    sp = _sparse(sp_input)
    if dtypes.as_dtype(out_type) is not dtypes.string:
        raise TypeError(f"{op.name}: out_type {dtypes.as_dtype(out_type).name} is not "
                        "supported by ndflow (only tf.string; variant encodings are "
                        "TensorFlow-internal).")
    return apply_op(op, [sp.indices, sp.values, sp.dense_shape],
                    {"out_type": dtypes.string}, name=name).outputs[0]


@tf_export("io.serialize_sparse", v1=[])
def serialize_sparse(sp_input, out_type=dtypes.string, name=None):
    """A SparseTensor as a 3-vector of strings: its indices, values and dense shape, each a
    serialized TensorProto."""
    return _serialize(SerializeSparse, sp_input, out_type, name)


@tf_export(v1=["io.serialize_sparse", "serialize_sparse"])
def serialize_sparse_v1(sp_input, name=None, out_type=dtypes.string):
    """Serializes a SparseTensor into three strings: indices, values and dense shape (TF1 order).

    Args:
      sp_input: the `tf.SparseTensor` to serialize.
      name: optional name for the operation.
      out_type: tf.string (serialized TensorProtos) or tf.variant.

    Returns:
      A tensor of shape [3] and `out_type`.

    Example:
      >>> sp = tf.sparse.SparseTensor([[0, 1]], [5], [2, 3])
      >>> tf.compat.v1.serialize_sparse(sp).shape
      TensorShape([3])
    """
    return _serialize(SerializeSparse, sp_input, out_type, name)


@tf_export("io.serialize_many_sparse", v1=[])
def serialize_many_sparse(sp_input, out_type=dtypes.string, name=None):
    """A rank-R SparseTensor as [N, 3] strings: row i the serialized rank-(R-1) SparseTensor
    of minibatch entry i."""
    return _serialize(SerializeManySparse, sp_input, out_type, name)


@tf_export(v1=["io.serialize_many_sparse", "serialize_many_sparse"])
def serialize_many_sparse_v1(sp_input, name=None, out_type=dtypes.string):
    """Serializes each minibatch entry of a rank-R SparseTensor separately (TF1 argument order).

    Args:
      sp_input: a `tf.SparseTensor` whose first dimension is the minibatch.
      name: optional name for the operation.
      out_type: tf.string (serialized TensorProtos) or tf.variant.

    Returns:
      A tensor of shape [N, 3]: row i the indices, values and shape of the rank-(R-1)
      SparseTensor of entry i.

    Example:
      >>> sp = tf.sparse.SparseTensor([[0, 1]], [5], [2, 3])
      >>> tf.compat.v1.serialize_many_sparse(sp).shape
      TensorShape([2, 3])
    """
    return _serialize(SerializeManySparse, sp_input, out_type, name)


@tf_export("io.deserialize_many_sparse",
           v1=["io.deserialize_many_sparse", "deserialize_many_sparse"])
def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """[N, 3] serialized SparseTensors (as `serialize_many_sparse` writes) as one SparseTensor
    with a leading minibatch dimension (the dense shape: each dimension's largest)."""
    s = convert_to_tensor(serialized_sparse, dtypes.string, name="serialized_sparse")
    indices, values, shape = apply_op(DeserializeManySparse, [s],
                                      {"dtype": dtypes.as_dtype(dtype)}, name=name).outputs
    return SparseTensor(indices, values, shape)


@tf_export("io.decode_json_example", v1=["io.decode_json_example", "decode_json_example"])
def decode_json_example(json_examples, name=None):
    """JSON `tf.train.Example`s (protobuf's JSON mapping) as binary serialized Examples."""
    j = convert_to_tensor(json_examples, dtypes.string, name="json_examples")
    return apply_op(DecodeJSONExample, [j], {}, name=name).outputs[0]


@tf_export("io.matching_files", v1=["io.matching_files", "matching_files"])
def matching_files(pattern, name=None):
    """The files matching a glob pattern (or each of a vector of them), sorted; empty when
    none match."""
    p = convert_to_tensor(pattern, dtypes.string, name="pattern")
    return apply_op(MatchingFiles, [p], {}, name=name).outputs[0]


@tf_export("io.match_filenames_once", v1=["io.match_filenames_once", "train.match_filenames_once"])
def match_filenames_once(pattern, name=None):
    """A local, untrainable string variable initialised with `matching_files(pattern)` (TF1
    programs run its initializer with `local_variables_initializer()`)."""
    return Variable(matching_files(pattern), trainable=False, validate_shape=False,
                    name=name or "matching_filenames", collections=[GraphKeys.LOCAL_VARIABLES])

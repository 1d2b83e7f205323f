"""A checkpoint's TensorBundle metadata: `BundleHeaderProto` (the `.index` table's "" entry)
and `BundleEntryProto` (one per tensor), as TensorFlow's tensor_bundle.proto, plus the
`TensorSliceProto` of partitioned variables (tensor_slice.proto)."""

from tensorboard.compat.proto import tensor_shape_pb2, types_pb2, versions_pb2

from ndflow.core.protos.schema import compile_schema

_SCHEMA = """
syntax = "proto3";
package tensorflow;

message TensorSliceProto {
  message Extent {
    int64 start = 1;
    oneof has_length { int64 length = 2; }
  }
  repeated Extent extent = 1;
}

message BundleHeaderProto {
  int32 num_shards = 1;
  enum Endianness { LITTLE = 0; BIG = 1; }
  Endianness endianness = 2;
  .tensorboard.VersionDef version = 3;
}

message BundleEntryProto {
  .tensorboard.DataType dtype = 1;
  .tensorboard.TensorShapeProto shape = 2;
  int32 shard_id = 3;
  int64 offset = 4;
  int64 size = 5;
  fixed32 crc32c = 6;
  repeated TensorSliceProto slices = 7;
}
"""

_classes = compile_schema("tensorflow/core/protobuf/tensor_bundle.proto", _SCHEMA,
                          (tensor_shape_pb2, types_pb2, versions_pb2))
TensorSliceProto = _classes["TensorSliceProto"]
BundleHeaderProto = _classes["BundleHeaderProto"]
BundleEntryProto = _classes["BundleEntryProto"]

"""`SnapshotMetadataRecord` (TensorFlow's tensorflow/core/protobuf/snapshot.proto): the
`snapshot.metadata` file of a dataset written by `tf.data.Dataset.save`."""

from tensorboard.compat.proto import types_pb2

from ndflow.core.protos.schema import compile_schema

_SCHEMA = """
syntax = "proto3";
package tensorflow.data.experimental;

message SnapshotMetadataRecord {
  string graph_hash = 1;
  string run_id = 2;
  int64 creation_timestamp = 3;
  int64 version = 4;
  repeated .tensorboard.DataType dtype = 5;
  int64 num_elements = 6;
  bool finalized = 1000;
}
"""

SnapshotMetadataRecord = compile_schema("tensorflow/core/protobuf/snapshot.proto", _SCHEMA,
                                        (types_pb2,))["SnapshotMetadataRecord"]

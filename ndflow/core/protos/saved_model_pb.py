"""The SavedModel wrapper (`saved_model.pb`: schema version + MetaGraphDefs) and the
`fingerprint.pb` message TensorFlow 2.x writes beside it (saved_model.proto,
fingerprint.proto); the MetaGraphDef itself is tensorboard's."""

from tensorboard.compat.proto import meta_graph_pb2, versions_pb2

from ndflow.core.protos.schema import compile_schema

_SCHEMA = """
syntax = "proto3";
package tensorflow;

message SavedModel {
  int64 saved_model_schema_version = 1;
  repeated .tensorboard.MetaGraphDef meta_graphs = 2;
}

message FingerprintDef {
  uint64 saved_model_checksum = 1;
  uint64 graph_def_program_hash = 2;
  uint64 signature_def_hash = 3;
  uint64 saved_object_graph_hash = 4;
  uint64 checkpoint_hash = 5;
  string uuid = 7;
  .tensorboard.VersionDef version = 6;
}
"""

_classes = compile_schema("tensorflow/core/protobuf/saved_model.proto", _SCHEMA,
                          (meta_graph_pb2, versions_pb2))
SavedModel = _classes["SavedModel"]
FingerprintDef = _classes["FingerprintDef"]

"""The `checkpoint` state file's message, `CheckpointState` (TensorFlow's
tensorflow/python/training/checkpoint_state.proto), written and read in text format."""

from ndflow.core.protos.schema import compile_schema

_SCHEMA = """
syntax = "proto3";
package tensorflow;

message CheckpointState {
  string model_checkpoint_path = 1;
  repeated string all_model_checkpoint_paths = 2;
  repeated double all_model_checkpoint_timestamps = 3;
  double last_preserved_timestamp = 4;
}
"""

CheckpointState = compile_schema("tensorflow/python/training/checkpoint_state.proto",
                                 _SCHEMA, ())["CheckpointState"]

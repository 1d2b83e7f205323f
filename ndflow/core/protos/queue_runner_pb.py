"""`QueueRunnerDef` (tensorflow/core/protobuf/queue_runner.proto): a queue runner in a
MetaGraphDef's `queue_runners` collection, by op names. The error codes are TF's
error.Code enum, written as the same packed varints."""

from ndflow.core.protos.schema import compile_schema

_SCHEMA = """
syntax = "proto3";
package tensorflow;

message QueueRunnerDef {
  string queue_name = 1;
  repeated string enqueue_op_name = 2;
  string close_op_name = 3;
  string cancel_op_name = 4;
  repeated int32 queue_closed_exception_types = 5;
}
"""

QueueRunnerDef = compile_schema("tensorflow/core/protobuf/queue_runner.proto", _SCHEMA,
                                ())["QueueRunnerDef"]

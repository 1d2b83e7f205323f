"""`tf.train.ServerDef` (tensorflow_server.proto) and the device filters it holds
(device_filters.proto): the two TensorFlow protos of a server's description that the
`tensorboard` package lacks. ClusterDef and ConfigProto are tensorboard's, so a ServerDef
serializes to TensorFlow's bytes."""

from tensorboard.compat.proto import cluster_pb2, config_pb2

from ndflow.core.protos.schema import compile_schema

_FILTERS = """
syntax = "proto3";
package tensorflow;

message TaskDeviceFilters {
  repeated string device_filters = 1;
}

message JobDeviceFilters {
  string name = 1;
  map<int32, TaskDeviceFilters> tasks = 2;
}

message ClusterDeviceFilters {
  repeated JobDeviceFilters jobs = 1;
}
"""

_SERVER = """
syntax = "proto3";
package tensorflow;

message ServerDef {
  .tensorboard.ClusterDef cluster = 1;
  string job_name = 2;
  int32 replica = 8;
  int32 task_index = 3;
  .tensorboard.ConfigProto default_session_config = 4;
  string protocol = 5;
  int32 port = 6;
  .tensorflow.ClusterDeviceFilters cluster_device_filters = 7;
}
"""

_filters = compile_schema("tensorflow/core/protobuf/device_filters.proto", _FILTERS, ())
ClusterDeviceFilters = _filters["ClusterDeviceFilters"]
JobDeviceFilters = _filters["JobDeviceFilters"]
TaskDeviceFilters = _filters["TaskDeviceFilters"]


class _FiltersModule:  # compile_schema's dependencies are modules with a DESCRIPTOR
    DESCRIPTOR = ClusterDeviceFilters.DESCRIPTOR.file


ServerDef = compile_schema("tensorflow/core/protobuf/tensorflow_server.proto", _SERVER,
                           (cluster_pb2, config_pb2, _FiltersModule))["ServerDef"]

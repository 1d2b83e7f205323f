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
ServerDef.__doc__ = """A server's description (TensorFlow's tensorflow.ServerDef message).

Fields:
  cluster: the `tf.train.ClusterDef` of every job and task address.
  job_name: the name of this server's job (e.g. "worker").
  task_index: this server's task within the job.
  replica: the replica index (unused by TF2 runtimes).
  default_session_config: a `tf.compat.v1.ConfigProto` for sessions on the server.
  protocol: the transport, e.g. "grpc".
  port: the port to listen on.
  cluster_device_filters: optional device filters per job and task.

Example:
  >>> sd = tf.train.ServerDef(job_name="worker", task_index=1, protocol="grpc")
  >>> tf.train.ServerDef.FromString(sd.SerializeToString()).task_index
  1
"""

"""tfprof's messages (TensorFlow's tensorflow/core/profiler/tfprof_output.proto,
tfprof_log.proto and tfprof_options.proto): the GraphNodeProto / MultiGraphNodeProto that
`tf.compat.v1.profiler.profile` returns, AdviceProto, the OpLogProto `write_op_log` writes and
the ProfileProto `Profiler.serialize_to_string` returns, with TensorFlow's field numbers so
the bytes are TensorFlow's."""

from tensorboard.compat.proto import attr_value_pb2, step_stats_pb2, tensor_shape_pb2, types_pb2

from ndflow.core.protos.schema import compile_schema

_OUTPUT = """
syntax = "proto3";
package tensorflow.tfprof;

message TFProfTensorProto {
  .tensorboard.DataType dtype = 1;
  repeated double value_double = 2;
  repeated int64 value_int64 = 3;
  repeated string value_str = 4;
}

message GraphNodeProto {
  string name = 1;
  TFProfTensorProto tensor_value = 15;
  int64 run_count = 21;
  int64 exec_micros = 2;
  int64 accelerator_exec_micros = 17;
  int64 cpu_exec_micros = 18;
  int64 requested_bytes = 3;
  int64 peak_bytes = 24;
  int64 residual_bytes = 25;
  int64 output_bytes = 26;
  int64 parameters = 4;
  int64 float_ops = 13;
  repeated string devices = 10;
  int64 total_definition_count = 23;
  int64 total_run_count = 22;
  int64 total_exec_micros = 6;
  int64 total_accelerator_exec_micros = 19;
  int64 total_cpu_exec_micros = 20;
  int64 total_requested_bytes = 7;
  int64 total_peak_bytes = 27;
  int64 total_residual_bytes = 28;
  int64 total_output_bytes = 29;
  int64 total_parameters = 8;
  int64 total_float_ops = 14;
  repeated .tensorboard.TensorShapeProto shapes = 11;
  map<int32, .tensorboard.TensorShapeProto> input_shapes = 16;
  repeated GraphNodeProto children = 12;
}

message MultiGraphNodeProto {
  string name = 1;
  int64 exec_micros = 2;
  int64 accelerator_exec_micros = 12;
  int64 cpu_exec_micros = 13;
  int64 requested_bytes = 3;
  int64 peak_bytes = 16;
  int64 residual_bytes = 17;
  int64 output_bytes = 18;
  int64 parameters = 4;
  int64 float_ops = 5;
  int64 total_exec_micros = 6;
  int64 total_accelerator_exec_micros = 14;
  int64 total_cpu_exec_micros = 15;
  int64 total_requested_bytes = 7;
  int64 total_peak_bytes = 19;
  int64 total_residual_bytes = 20;
  int64 total_output_bytes = 21;
  int64 total_parameters = 8;
  int64 total_float_ops = 9;
  repeated GraphNodeProto graph_nodes = 10;
  repeated MultiGraphNodeProto children = 11;
}

message AdviceProto {
  message Checker {
    repeated string reports = 2;
  }
  map<string, Checker> checkers = 1;
}
"""

_LOG = """
syntax = "proto3";
package tensorflow.tfprof;

message CodeDef {
  message Trace {
    int64 file_id = 6;
    int32 lineno = 2;
    int64 function_id = 7;
    int64 line_id = 8;
    int32 func_start_line = 5;
  }
  repeated Trace traces = 1;
}

message OpLogEntry {
  string name = 1;
  int64 float_ops = 2;
  repeated string types = 3;
  CodeDef code_def = 4;
}

message OpLogProto {
  repeated OpLogEntry log_entries = 1;
  map<int64, string> id_to_string = 2;
}

message ProfileProto {
  map<int64, ProfileNode> nodes = 1;
  bool has_trace = 2;
  bool miss_accelerator_stream = 5;
  repeated int64 steps = 3;
  map<int64, string> id_to_string = 4;
}

message ProfileNode {
  string name = 1;
  string op = 9;
  int64 id = 13;
  map<int32, int64> inputs = 2;
  map<int32, Tuple> input_shapes = 16;
  map<int32, int64> outputs = 3;
  map<int32, Tuple> output_shapes = 15;
  map<int64, int32> src_output_index = 14;
  repeated int64 shape = 4;
  repeated string op_types = 5;
  string canonical_device = 6;
  string host_device = 7;
  int64 float_ops = 8;
  CodeDef trace = 10;
  map<string, .tensorboard.AttrValue> attrs = 11;
  map<int64, ExecProfile> execs = 12;
}

message ExecProfile {
  int64 run_count = 1;
  int64 all_start_micros = 2;
  int64 latest_end_micros = 3;
  map<string, ExecTime> accelerator_execs = 4;
  map<string, ExecTime> cpu_execs = 5;
  repeated ExecMemory memory_execs = 7;
  repeated .tensorboard.AllocationRecord allocations = 11;
  repeated string devices = 6;
}

message ExecTime {
  repeated Tuple times = 1;
}

message ExecMemory {
  int64 memory_micros = 1;
  int64 host_temp_bytes = 2;
  int64 host_persistent_bytes = 3;
  int64 accelerator_temp_bytes = 4;
  int64 accelerator_persistent_bytes = 5;
  int64 requested_bytes = 6;
  int64 peak_bytes = 7;
  int64 residual_bytes = 8;
  int64 output_bytes = 9;
  int64 allocator_bytes_in_use = 10;
  map<int32, Memory> output_memory = 11;
}

message Tuple {
  repeated int64 int64_values = 1;
}

message Memory {
  int64 bytes = 1;
  uint64 ptr = 2;
}
"""

_OPTIONS = """
syntax = "proto3";
package tensorflow.tfprof;

message OptionsProto {
  int64 max_depth = 1;
  int64 min_bytes = 2;
  int64 min_peak_bytes = 19;
  int64 min_residual_bytes = 20;
  int64 min_output_bytes = 21;
  int64 min_micros = 3;
  int64 min_accelerator_micros = 22;
  int64 min_cpu_micros = 23;
  int64 min_params = 4;
  int64 min_float_ops = 5;
  int64 min_occurrence = 17;
  int64 step = 18;
  string order_by = 7;
  repeated string account_type_regexes = 8;
  repeated string start_name_regexes = 9;
  repeated string trim_name_regexes = 10;
  repeated string show_name_regexes = 11;
  repeated string hide_name_regexes = 12;
  bool account_displayed_op_only = 13;
  repeated string select = 14;
  string output = 15;
  string dump_to_file = 16;
}

message AdvisorOptionsProto {
  message CheckerOption {
    map<string, string> options = 1;
  }
  map<string, CheckerOption> checkers = 1;
}
"""

_out = compile_schema("tensorflow/core/profiler/tfprof_output.proto", _OUTPUT,
                      (tensor_shape_pb2, types_pb2))
_log = compile_schema("tensorflow/core/profiler/tfprof_log.proto", _LOG,
                      (attr_value_pb2, step_stats_pb2))
_opt = compile_schema("tensorflow/core/profiler/tfprof_options.proto", _OPTIONS, ())

TFProfTensorProto = _out["TFProfTensorProto"]
GraphNodeProto = _out["GraphNodeProto"]
MultiGraphNodeProto = _out["MultiGraphNodeProto"]
AdviceProto = _out["AdviceProto"]
CodeDef = _log["CodeDef"]
OpLogEntry = _log["OpLogEntry"]
OpLogProto = _log["OpLogProto"]
ProfileProto = _log["ProfileProto"]
ProfileNode = _log["ProfileNode"]
OptionsProto = _opt["OptionsProto"]
AdvisorOptionsProto = _opt["AdvisorOptionsProto"]

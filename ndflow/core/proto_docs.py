"""Docstrings of the protocol-buffer messages ndflow exports (`tf.train.Example`,
`tf.compat.v1.ConfigProto`, ...), by message name. The classes are protobuf's generated ones
(from the tensorboard package and ndflow/core/protos), which carry none; `tf_export` gives an
exported message its entry here (core/api_export.py)."""

from __future__ import annotations

PROTO_DOCS: dict[str, str] = {
    "AttrValue": """The value of one op attribute in a NodeDef: exactly one of `s` (bytes), `i`
    (int), `f` (float), `b` (bool), `type` (a DataType enum), `shape`, `tensor`, `list` (a
    list of any of those), `func` (a NameAttrList naming a function) or `placeholder` (the
    name of a function attr to substitute).""",
    "ConfigProto": """Session configuration (`tf.compat.v1.Session(config=...)`): thread pools
    (`intra_op_parallelism_threads`, `inter_op_parallelism_threads`), `device_count`,
    `allow_soft_placement`, `log_device_placement`, `gpu_options` (GPUOptions),
    `graph_options` (GraphOptions: the optimizer and its rewrite toggles) and
    `operation_timeout_in_ms`.

    Example:
      >>> cfg = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=2)
      >>> cfg.graph_options.rewrite_options.remapping = 2   # OFF""",
    "Event": """One record of a TensorBoard event file: its `wall_time` and `step`, and one of
    `file_version`, `graph_def` (serialized), `summary`, `log_message`, `session_log`,
    `tagged_run_metadata` or `meta_graph_def`. `tf.compat.v1.train.summary_iterator` yields
    them.""",
    "GPUOptions": """The GPU part of a ConfigProto: `per_process_gpu_memory_fraction`,
    `allow_growth`, `visible_device_list` (comma-separated indices), `allocator_type` and the
    `experimental` virtual-device settings.""",
    "GraphDef": """A serialized graph: its `node`s (NodeDef: name, op, inputs, device, attrs),
    the producer/min-consumer `versions` and a `library` of functions. `Graph.as_graph_def()`
    writes one and `tf.graph_util.import_graph_def` reads one back.""",
    "GraphOptions": """The graph part of a ConfigProto: `optimizer_options`
    (OptimizerOptions: constant folding, the JIT level), `rewrite_options` (grappler's
    per-pass toggles), `infer_shapes`, `place_pruned_graph`, `build_cost_model` and
    `timeline_step`.""",
    "HistogramProto": """A histogram in a summary: `min`, `max`, `num` (count), `sum`,
    `sum_squares`, and the buckets as parallel lists `bucket_limit` (right edges) and
    `bucket` (counts).""",
    "LogMessage": """A log line recorded in an event file: its `level` (DEBUGGING, INFO, WARN,
    ERROR, FATAL) and `message` text.""",
    "MetaGraphDef": """A graph with what is needed to run it again: `meta_info_def` (tags,
    versions, the op list), `graph_def`, `saver_def`, `collection_def`s, the named
    `signature_def`s of a SavedModel, `asset_file_def`s and the `object_graph_def` of
    trackable objects.""",
    "NameAttrList": """A function reference with attribute values: the function's `name` and
    an `attr` map from attribute name to AttrValue.""",
    "NodeDef": """One node of a GraphDef: its `name`, `op` type, `input`s (`"node:index"`, or
    `"^node"` for a control input), requested `device` and `attr` map (name -> AttrValue).""",
    "OptimizerOptions": """Classic graph optimizations of a session (part of GraphOptions):
    `do_common_subexpression_elimination`, `do_constant_folding`,
    `max_folded_constant_in_bytes`, `do_function_inlining`, `opt_level` (L0 or L1) and
    `global_jit_level` (OFF, ON_1, ON_2: auto-clustering for the JIT).""",
    "RunMetadata": """What `Session.run(..., run_metadata=...)` reports back: `step_stats`
    (per-node timings when tracing was asked for), the `cost_graph`, and the
    `partition_graphs` and `function_graphs` actually run.""",
    "RunOptions": """Per-call options of `Session.run`: `trace_level` (NO_TRACE,
    SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE), `timeout_in_ms`,
    `output_partition_graphs` and `report_tensor_allocations_upon_oom`.""",
    "SessionLog": """A session event in an event file: `status` (START, STOP, CHECKPOINT),
    the `checkpoint_path` for a checkpoint, and a `msg`. A START tells TensorBoard to drop
    events of later steps written before a restart.""",
    "Summary": """A set of summary values for one step: each `value` has a `tag` and one of
    `simple_value` (a scalar), `image`, `histo` (HistogramProto), `audio` or `tensor`, with
    optional `metadata` (SummaryMetadata).

    Example:
      >>> s = tf.compat.v1.Summary(value=[
      ...     tf.compat.v1.Summary.Value(tag="loss", simple_value=0.5)])""",
    "SummaryMetadata": """How TensorBoard should read a summary value: `plugin_data` (the
    plugin's name and content), `display_name`, `summary_description` and the `data_class`
    (scalar, tensor or blob sequence).""",
    "TensorInfo": """A tensor of a SignatureDef: its `name` in the graph (or the components of
    a `coo_sparse` or `composite_tensor`), `dtype` and `tensor_shape`.""",
    "AdviceProto": """tfprof's advice (`tf.compat.v1.profiler.advise`): a map from checker
    name to its report, each a list of report lines.""",
    "GraphNodeProto": """One node of a tfprof 'scope' or 'graph' view: its `name`, run and
    definition counts, execution times (`exec_micros`, accelerator and CPU parts), memory
    (`requested_bytes`, `peak_bytes`, `residual_bytes`, `output_bytes`), `parameters`,
    `float_ops`, the same figures totalled over its `children`, and its `shapes`.""",
    "MultiGraphNodeProto": """One node of a tfprof 'code' or 'op' view, which groups graph
    nodes: its `name`, its own and `total_` execution times, memory, `parameters` and
    `float_ops`, the `graph_nodes` it groups and its `children`.""",
    "OpLogProto": """Extra information for tfprof about ops (`write_op_log`): per-op
    `log_entries` (types such as `_trainable_variables`, float-op counts, code traces), and
    the `id_to_string` table the traces refer to.""",
    "SummaryDescription": """A hint of how a summary tensor is to be read: its `type_hint`
    (e.g. "image", "audio").""",
    "TaggedRunMetadata": """A RunMetadata recorded in an event file under a `tag` (the
    serialized `run_metadata`), as `FileWriter.add_run_metadata` writes it.""",
    "BytesList": """A list of byte strings (`value`): one of the three kinds of a tf.train
    Feature.

    Example:
      >>> tf.train.BytesList(value=[b"cat", b"dog"])""",
    "ClusterDef": """The jobs of a distributed cluster: each `job` (JobDef) names its tasks'
    addresses. `tf.train.ClusterSpec(...).as_cluster_def()` builds one.""",
    "Example": """A training example: a `features` map from feature name to a Feature (a
    BytesList, FloatList or Int64List), serialized into TFRecord files and read back with
    `tf.io.parse_example`.

    Example:
      >>> ex = tf.train.Example(features=tf.train.Features(feature={
      ...     "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))}))
      >>> data = ex.SerializeToString()""",
    "Feature": """One feature value: exactly one of `bytes_list` (BytesList), `float_list`
    (FloatList) or `int64_list` (Int64List).""",
    "FeatureList": """A sequence of Features (`feature`), one per time step, as a
    SequenceExample's feature_lists hold them.""",
    "FeatureLists": """A `feature_list` map from name to FeatureList: the per-step part of a
    SequenceExample.""",
    "Features": """A `feature` map from feature name to Feature: the contents of an
    Example.""",
    "FloatList": """A list of 32-bit floats (`value`): one of the three kinds of a tf.train
    Feature.""",
    "Int64List": """A list of 64-bit integers (`value`): one of the three kinds of a tf.train
    Feature.""",
    "JobDef": """One job of a cluster: its `name` and `tasks` (task index -> "host:port").""",
    "SaverDef": """How a graph saves and restores its variables: the names of its
    `filename_tensor_name`, `save_tensor_name` and `restore_op_name`, `max_to_keep`,
    `keep_checkpoint_every_n_hours`, `sharded` and the checkpoint format `version`.""",
    "SequenceExample": """An example with a sequence: `context` (Features that hold for the
    whole sequence) and `feature_lists` (FeatureLists, one Feature per step), read with
    `tf.io.parse_sequence_example`.""",
}

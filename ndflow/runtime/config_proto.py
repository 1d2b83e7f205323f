"""`tf.compat.v1.ConfigProto` and friends: TensorFlow's own config protos.

The classes are the real protobuf messages shipped in the tensorboard package, so every
field TensorFlow users set exists with TensorFlow's defaults and types, and unknown fields
fail exactly as in TensorFlow (`ValueError: Protocol message ConfigProto has no "foo"
field.`). `session_settings(config)` reads the parts a Session acts on besides the graph
passes (whose configuration ndflow/passes/pass_config.py resolves from the same proto).

    config = ConfigProto(allow_soft_placement=True,
                         gpu_options=GPUOptions(allow_growth=True))
    config.graph_options.rewrite_options.constant_folding = RewriterConfig.OFF
"""

from __future__ import annotations

from dataclasses import dataclass

from tensorboard.compat.proto import config_pb2, rewriter_config_pb2

from ndflow.core import context
from ndflow.core.api_export import tf_export

ConfigProto = config_pb2.ConfigProto
GPUOptions = config_pb2.GPUOptions
GraphOptions = config_pb2.GraphOptions
OptimizerOptions = config_pb2.OptimizerOptions
RunOptions = config_pb2.RunOptions
RunMetadata = config_pb2.RunMetadata
RewriterConfig = rewriter_config_pb2.RewriterConfig

@dataclass
class SessionSettings:
    """What a Session takes from its ConfigProto."""

    allow_soft_placement: bool = False
    log_device_placement: bool = False
    intra_op_parallelism_threads: int = 0
    inter_op_parallelism_threads: int = 0


def session_settings(config: ConfigProto | None) -> SessionSettings:
    """The settings of `config` (None: TF 2's context config, whose soft placement follows
    `tf.config.set_soft_device_placement`, on by default)."""
    if config is None:
        config = ConfigProto(allow_soft_placement=context.soft_device_placement())
    if not isinstance(config, ConfigProto):
        raise TypeError("Argument `config` must be a tf.ConfigProto, but got "
                        f'"{type(config).__name__}"')
    return SessionSettings(config.allow_soft_placement, config.log_device_placement,
                           config.intra_op_parallelism_threads,
                           config.inter_op_parallelism_threads)

tf_export(v1=["ConfigProto"])(ConfigProto)
tf_export(v1=["GPUOptions"])(GPUOptions)
tf_export(v1=["GraphOptions"])(GraphOptions)
tf_export(v1=["OptimizerOptions"])(OptimizerOptions)
tf_export(v1=["RunMetadata"])(RunMetadata)
tf_export(v1=["RunOptions"])(RunOptions)

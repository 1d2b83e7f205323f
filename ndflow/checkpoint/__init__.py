"""Checkpoints in TensorFlow's format: the TensorBundle (`.index` table + `.data-*` shards),
object-graph checkpoints (`tf.train.Checkpoint`, `CheckpointManager`) and readers
(`tf.train.load_checkpoint`, `list_variables`, `latest_checkpoint`)."""

from ndflow.checkpoint import (  # noqa: F401 - importing a module declares its exports
    checkpoint,
    checkpoint_management,
    checkpoint_manager,
    checkpoint_reader,
    checkpoint_utils,
    checkpoint_view,
    io_ops,
    meta_graph_v1,
    python_state,
    saver,
    sharding,
    trackable_view,
    warm_starting,
)

"""`tf.compat.v1.GraphKeys`: the standard names of a graph's collections."""

from __future__ import annotations

from ndflow.core.api_export import tf_export


@tf_export(v1=["GraphKeys"])
class GraphKeys:
    """The standard names of a graph's collections (`tf.compat.v1.GraphKeys`).

    Each attribute is a collection name for `Graph.get_collection` /
    `tf.compat.v1.add_to_collection`: GLOBAL_VARIABLES and TRAINABLE_VARIABLES (filled by
    variable creation), LOCAL_VARIABLES and METRIC_VARIABLES, UPDATE_OPS (e.g. batch norm's
    moving-average updates), LOSSES and REGULARIZATION_LOSSES, SUMMARIES, QUEUE_RUNNERS,
    GLOBAL_STEP, and others.

    Example:
      >>> with tf.Graph().as_default() as g:
      ...     v = tf.compat.v1.get_variable("v", [1])
      ...     len(g.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES))
      1
    """
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    GLOBAL_STEP = "global_step"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    SUMMARIES = "summaries"
    TRAIN_OP = "train_op"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    QUEUE_RUNNERS = "queue_runners"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    SAVERS = "savers"
    SAVEABLE_OBJECTS = "saveable_objects"  # non-variables a Saver saves (mutable tables)

"""`tf.summary` (TF2) and `tf.compat.v1.summary` (TF1): summaries written to TensorBoard's
event files in TensorFlow's own format, through the `tensorboard` package's writer."""

from ndflow.summary import (  # noqa: F401 - importing runs their tf_export declarations
    encoders,
    event_file,
    file_writer_v1,
    graph_summary,
    summary_description,
    summary_iterator,
    summary_ops,
    v1_summary_ops,
    writer,
)

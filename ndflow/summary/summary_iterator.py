"""`tf.compat.v1.train.summary_iterator`: the `Event` protos of an event file, read through
ndflow's TFRecord reader (masked CRCs checked: a corrupted or truncated record is
`DataLossError`, a missing file `NotFoundError`)."""

from __future__ import annotations

from tensorboard.compat.proto import event_pb2

from ndflow.core.api_export import tf_export
from ndflow.data.tfrecord_io import tf_record_iterator


@tf_export(v1=["train.summary_iterator"])
def summary_iterator(path):
    """Yields each `Event` of the event file `path`, in order."""
    for record in tf_record_iterator(path):
        yield event_pb2.Event.FromString(record)


__all__ = ["summary_iterator"]

"""The docstrings of summary_ops.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "scalar": """Writes a scalar value for TensorBoard's Scalars dashboard.

    The value is cast to float32.

    Args:
      name: the summary's tag (prefixed by the enclosing name scopes).
      data: a real numeric scalar (tensor or Python number).
      step: the int64 step to record it at; None uses `tf.summary.experimental.get_step()`.
      description: optional Markdown text shown in TensorBoard.

    Returns:
      A scalar bool tensor: True if a default writer wrote it, False if there is none.

    Raises:
      ValueError: if a default writer is set but no step is given or set.

    Example:
      >>> import tempfile
      >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
      >>> with writer.as_default(step=0): ok = tf.summary.scalar('loss', 0.5)
      >>> bool(ok)
      True
    """,
    "histogram": """Writes a histogram of a tensor's values for TensorBoard's Histograms dashboard.

    The buckets are stored as a [buckets, 3] float64 tensor of left edge, right edge and
    count.

    Args:
      name: the summary's tag (prefixed by the enclosing name scopes).
      data: a numeric tensor of any shape.
      step: the int64 step to record it at; None uses `tf.summary.experimental.get_step()`.
      buckets: the number of buckets (30 by default).
      description: optional Markdown text shown in TensorBoard.

    Returns:
      A scalar bool tensor: True if a default writer wrote it, False if there is none.

    Raises:
      ValueError: if a default writer is set but no step is given or set.

    Example:
      >>> import tempfile
      >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
      >>> with writer.as_default(step=0): ok = tf.summary.histogram('weights', [1.0, 2.0, 2.5])
      >>> bool(ok)
      True
    """,
    "image": """Writes images for TensorBoard's Images dashboard (PNG-encoded).

    Args:
      name: the summary's tag (prefixed by the enclosing name scopes).
      data: a [k, height, width, channels] tensor with 1-4 channels; floats in [0, 1] or
        uint8.
      step: the int64 step to record it at; None uses `tf.summary.experimental.get_step()`.
      max_outputs: the most images of the batch to write.
      description: optional Markdown text shown in TensorBoard.

    Returns:
      A scalar bool tensor: True if a default writer wrote it, False if there is none.

    Raises:
      ValueError: if a default writer is set but no step is given or set.

    Example:
      >>> import tempfile
      >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
      >>> with writer.as_default(step=0): ok = tf.summary.image('inputs', tf.zeros([1, 2, 2, 1]))
      >>> bool(ok)
      True
    """,
    "audio": """Writes audio clips for TensorBoard's Audio dashboard (WAV-encoded).

    Args:
      name: the summary's tag (prefixed by the enclosing name scopes).
      data: a [k, time, channels] float tensor in [-1, 1].
      sample_rate: the sample rate in Hz.
      step: the int64 step to record it at; None uses `tf.summary.experimental.get_step()`.
      max_outputs: the most clips of the batch to write.
      encoding: None or "wav".
      description: optional Markdown text shown in TensorBoard.

    Returns:
      A scalar bool tensor: True if a default writer wrote it, False if there is none.

    Raises:
      ValueError: if a default writer is set but no step is given or set.

    Example:
      >>> import tempfile
      >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
      >>> with writer.as_default(step=0): ok = tf.summary.audio('sound', tf.zeros([1, 4, 1]), 8000)
      >>> bool(ok)
      True
    """,
    "text": """Writes text (rendered as Markdown) for TensorBoard's Text dashboard.

    Args:
      name: the summary's tag (prefixed by the enclosing name scopes).
      data: a string tensor of any shape.
      step: the int64 step to record it at; None uses `tf.summary.experimental.get_step()`.
      description: optional Markdown text shown in TensorBoard.

    Returns:
      A scalar bool tensor: True if a default writer wrote it, False if there is none.

    Raises:
      ValueError: if a default writer is set but no step is given or set.

    Example:
      >>> import tempfile
      >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
      >>> with writer.as_default(step=0): ok = tf.summary.text('note', 'hello')
      >>> bool(ok)
      True
    """,
    "write": """Writes a tensor as a generic tensor summary.

    The lower-level function the others build on: `tensor` may be a callable, called only
    when a writer records.

    Args:
      tag: the summary's tag.
      tensor: a tensor, or a no-argument callable returning one.
      step: the int64 step to record it at; None uses `tf.summary.experimental.get_step()`.
      metadata: optional SummaryMetadata proto (or its serialized bytes).
      name: optional name scope.

    Returns:
      A scalar bool tensor: True if a default writer wrote it, False if there is none.

    Raises:
      ValueError: if a default writer is set but no step is given or set.

    Example:
      >>> import tempfile
      >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
      >>> with writer.as_default(step=0): ok = tf.summary.write('raw', tf.constant(1.0))
      >>> bool(ok)
      True
    """,
    "write_raw_pb": """Writes serialized `Summary` protos as they are.

    Args:
      tensor: a string scalar or vector of serialized Summary protos.
      step: the int64 step to record it at; None uses `tf.summary.experimental.get_step()`.
      name: optional name scope.

    Returns:
      A scalar bool tensor: True if a default writer wrote it, False if there is none.

    Raises:
      ValueError: if a default writer is set but no step is given or set.
    """,
    "summary_scope": """A name scope for a summary op, yielding its tag and scope name.

    Args:
      name: the summary name.
      default_name: the name to use when `name` is None.
      values: accepted for compatibility.

    Returns:
      A context manager yielding `(tag, scope)`: the tag is the enclosing name scope plus
      `name`.
    """,
    "all_v2_summary_ops": """The TF2 summary ops built in the default graph, for TF1 programs.

    Returns:
      A list of ops (None when executing eagerly).
    """,
}

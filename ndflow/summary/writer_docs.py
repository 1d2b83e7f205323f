"""The docstrings of writer.py's public functions and classes (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "create_file_writer": """A summary writer that writes TensorBoard event files into `logdir`.

    `logdir` (and its parents) are created. Use it with `writer.as_default(step)` so that
    `tf.summary.scalar` and friends write to it.

    Args:
      logdir: the directory for the event file.
      max_queue: how many summaries to buffer before writing (default 10).
      flush_millis: the longest time between flushes, in ms (default 120000).
      filename_suffix: optional suffix of the event file's name.
      name: accepted for compatibility.
      experimental_trackable: accepted for compatibility.
      experimental_mesh: unsupported (DTensor); must be None.

    Returns:
      A `tf.summary.SummaryWriter`.

    Example:
      >>> import tempfile
      >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
      >>> with writer.as_default(step=1): ok = tf.summary.scalar('x', 1.0)
      >>> bool(ok)
      True
    """,
    "create_noop_writer": """A summary writer that writes nothing.

    Use it to turn summaries off without changing the code that writes them.

    Returns:
      A `tf.summary.SummaryWriter` whose summaries are dropped.

    Example:
      >>> w = tf.summary.create_noop_writer()
      >>> with w.as_default(step=0): ok = tf.summary.scalar('x', 1.0)
      >>> bool(ok)
      False
    """,
    "get_step": """The default step for summaries, or None.

    The step comes from `tf.summary.experimental.set_step` or the innermost
    `writer.as_default(step)`.

    Returns:
      An int, tensor or variable, or None when none is set.

    Example:
      >>> tf.summary.experimental.get_step() is None
      True
    """,
    "set_step": """Sets the default step that summaries record at.

    A tensor or variable is read each time a summary is written, so a variable step follows
    training.

    Args:
      step: an int, an int64 tensor or a `tf.Variable`; None clears it.

    Example:
      >>> tf.summary.experimental.set_step(5)
      >>> step = tf.summary.experimental.get_step()
      >>> tf.summary.experimental.set_step(None)
      >>> step
      5
    """,
    "flush": """Writes out the buffered summaries of a writer.

    Args:
      writer: a SummaryWriter; None flushes the default writer (if any).
      name: optional name for the operation.

    Returns:
      None eagerly; in a graph, an op that flushes when run.
    """,
    "record_if": """A context manager: summaries inside are written only where `condition` holds.

    Args:
      condition: a bool, a scalar bool tensor, or a callable returning one (evaluated at each
        summary).

    Returns:
      A context manager.

    Example:
      >>> import tempfile
      >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
      >>> off = tf.summary.record_if(False)
      >>> with writer.as_default(step=0), off: ok = tf.summary.scalar('x', 1.0)
      >>> bool(ok)
      False
    """,
    "should_record_summaries": """Whether a summary written here would be recorded.

    True when a default writer is set and every enclosing `record_if` condition holds.

    Returns:
      A scalar bool tensor.

    Example:
      >>> bool(tf.summary.should_record_summaries())
      False
    """,
    "SummaryWriter": """The interface of summary writers (see `tf.summary.create_file_writer`).

    Methods:
      as_default(step=None): a context manager making this the default writer (and `step`
        the default step) inside it.
      set_as_default(step=None): makes this the default writer from now on.
      flush(): writes out buffered summaries.
      close(): flushes and closes the writer.
      init(): initializes the writer (a no-op eagerly).

    Example:
      >>> import tempfile
      >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
      >>> isinstance(writer, tf.summary.SummaryWriter)
      True
    """,
}

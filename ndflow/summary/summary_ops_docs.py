"""The docstrings of summary_ops.py's public functions (attached at its end; see
core/doc_tables.py): the summary writers' from one template, with each one's title, Args
lines and example call."""

from __future__ import annotations

from ndflow.core.doc_tables import note

_NAME = "name: the summary's tag (prefixed by the enclosing name scopes)."
_STEP = "step: the int64 step to record it at; None uses `tf.summary.experimental.get_step()`."
_DESCRIPTION = "description: optional Markdown text shown in TensorBoard."
_SCOPE = "name: optional name scope."


def _writer(title: str, args: list[str], call: str = "", details: str = "") -> str:
    """The docstring of a summary writer whose Args are `args` and whose example records
    `tf.summary.<call>` under a file writer."""
    example = f"""
    Example:
      >>> import tempfile
      >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
      >>> with writer.as_default(step=0): ok = tf.summary.{call}
      >>> bool(ok)
      True
""" if call else ""
    lines = "\n      ".join(args)
    return f"""{title}
{note(details) if details else ""}
    Args:
      {lines}

    Returns:
      A scalar bool tensor: True if a default writer wrote it, False if there is none.

    Raises:
      ValueError: if a default writer is set but no step is given or set.
{example}    """


DOCS = {
    "scalar": _writer("Writes a scalar value for TensorBoard's Scalars dashboard.",
                      [_NAME, "data: a real numeric scalar (tensor or Python number).", _STEP,
                       _DESCRIPTION], "scalar('loss', 0.5)",
                      "The value is cast to float32."),
    "histogram": _writer(
        "Writes a histogram of a tensor's values for TensorBoard's Histograms dashboard.",
        [_NAME, "data: a numeric tensor of any shape.", _STEP,
         "buckets: the number of buckets (30 by default).", _DESCRIPTION],
        "histogram('weights', [1.0, 2.0, 2.5])",
        "The buckets are stored as a [buckets, 3] float64 tensor of left edge, right edge and\n"
        "    count."),
    "image": _writer("Writes images for TensorBoard's Images dashboard (PNG-encoded).",
                     [_NAME, "data: a [k, height, width, channels] tensor with 1-4 channels; "
                             "floats in [0, 1] or\n        uint8.",
                      _STEP, "max_outputs: the most images of the batch to write.",
                      _DESCRIPTION], "image('inputs', tf.zeros([1, 2, 2, 1]))"),
    "audio": _writer("Writes audio clips for TensorBoard's Audio dashboard (WAV-encoded).",
                     [_NAME, "data: a [k, time, channels] float tensor in [-1, 1].",
                      "sample_rate: the sample rate in Hz.", _STEP,
                      "max_outputs: the most clips of the batch to write.",
                      'encoding: None or "wav".', _DESCRIPTION],
                     "audio('sound', tf.zeros([1, 4, 1]), 8000)"),
    "text": _writer("Writes text (rendered as Markdown) for TensorBoard's Text dashboard.",
                    [_NAME, "data: a string tensor of any shape.", _STEP, _DESCRIPTION],
                    "text('note', 'hello')"),
    "write": _writer("Writes a tensor as a generic tensor summary.",
                     ["tag: the summary's tag.",
                      "tensor: a tensor, or a no-argument callable returning one.", _STEP,
                      "metadata: optional SummaryMetadata proto (or its serialized bytes).",
                      _SCOPE], "write('raw', tf.constant(1.0))",
                     "The lower-level function the others build on: `tensor` may be a "
                     "callable, called only\n    when a writer records."),
    "write_raw_pb": _writer("Writes serialized `Summary` protos as they are.",
                            ["tensor: a string scalar or vector of serialized Summary protos.",
                             _STEP, _SCOPE]),
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

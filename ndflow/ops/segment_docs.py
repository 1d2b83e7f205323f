"""The docstrings of segment.py's public functions (attached at its end; see
core/doc_tables.py): one template for the sorted-id reductions and one for the unsorted ones,
with each op's words and example output."""

from __future__ import annotations

from ndflow.core.doc_tables import family

_SORTED = """The {what} of each segment of `data`, for sorted segment ids.

    Output row i is the {what} of the rows of `data` whose id is i; ids that do not occur
    give {empty}.

    Args:
      data: a numeric tensor; its first dimension is segmented.
      segment_ids: an int32/int64 vector of data.shape[0] sorted ids (each id names the output
        row).
      name: optional name for the operation.

    Returns:
      A tensor of data's dtype with max(segment_ids) + 1 rows.

    Raises:
      InvalidArgumentError: if the ids are not sorted or do not match data's first dimension.

    Example:
      >>> tf.math.{name}([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1]).numpy()
      {out}
    """

_UNSORTED = """{title}

    There are `num_segments` output rows; segments with no rows give {empty}.

    Args:
      data: a numeric tensor; its first dimension is segmented.
      segment_ids: an int tensor whose shape is a prefix of data's shape; ids in [0,
        num_segments) (negative ids are dropped).
      num_segments: the number of output segments (a scalar int).
      name: optional name for the operation.

    Returns:
      A tensor of data's dtype with `num_segments` rows (then data's remaining dimensions).

    Raises:
      InvalidArgumentError: if segment_ids' shape is not a prefix of data's shape.

    Example:
      >>> tf.math.{name}([1.0, 2.0, 3.0, 4.0], [1, 0, 1, 0], 2).numpy()
      {out}
    """


def _of_rows(what: str) -> str:
    return f"The {what} of the rows of `data` in each segment (unsorted ids)."


DOCS = family(_SORTED, {
    "segment_sum": dict(what="sum", empty="0", out="array([3., 7.], dtype=float32)"),
    "segment_prod": dict(what="product", empty="1", out="array([ 2., 12.], dtype=float32)"),
    "segment_mean": dict(what="mean", empty="0", out="array([1.5, 3.5], dtype=float32)"),
    "segment_max": dict(what="maximum", empty="0", out="array([2., 4.], dtype=float32)"),
    "segment_min": dict(what="minimum", empty="0", out="array([1., 3.], dtype=float32)"),
}) | family(_UNSORTED, {
    "unsorted_segment_sum": dict(title=_of_rows("sum"), empty="0",
                                 out="array([6., 4.], dtype=float32)"),
    "unsorted_segment_prod": dict(title=_of_rows("product"), empty="1",
                                  out="array([8., 3.], dtype=float32)"),
    "unsorted_segment_mean": dict(title=_of_rows("mean"), empty="0",
                                  out="array([3., 2.], dtype=float32)"),
    "unsorted_segment_sqrt_n": dict(
        title="The sum of each segment's rows divided by sqrt(their count).", empty="0",
        out="array([4.242641, 2.828427], dtype=float32)"),
    "unsorted_segment_max": dict(title=_of_rows("maximum"), empty="the dtype's lowest value",
                                 out="array([4., 3.], dtype=float32)"),
    "unsorted_segment_min": dict(title=_of_rows("minimum"), empty="the dtype's largest value",
                                 out="array([2., 1.], dtype=float32)"),
})

"""The docstrings of segment.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "segment_sum": """The sum of each segment of `data`, for sorted segment ids.

    Output row i is the sum of the rows of `data` whose id is i; ids that do not occur give
    0.

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
      >>> tf.math.segment_sum([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1]).numpy()
      array([3., 7.], dtype=float32)
    """,
    "segment_prod": """The product of each segment of `data`, for sorted segment ids.

    Output row i is the product of the rows of `data` whose id is i; ids that do not occur
    give 1.

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
      >>> tf.math.segment_prod([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1]).numpy()
      array([ 2., 12.], dtype=float32)
    """,
    "segment_mean": """The mean of each segment of `data`, for sorted segment ids.

    Output row i is the mean of the rows of `data` whose id is i; ids that do not occur give
    0.

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
      >>> tf.math.segment_mean([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1]).numpy()
      array([1.5, 3.5], dtype=float32)
    """,
    "segment_max": """The maximum of each segment of `data`, for sorted segment ids.

    Output row i is the maximum of the rows of `data` whose id is i; ids that do not occur
    give 0.

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
      >>> tf.math.segment_max([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1]).numpy()
      array([2., 4.], dtype=float32)
    """,
    "segment_min": """The minimum of each segment of `data`, for sorted segment ids.

    Output row i is the minimum of the rows of `data` whose id is i; ids that do not occur
    give 0.

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
      >>> tf.math.segment_min([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1]).numpy()
      array([1., 3.], dtype=float32)
    """,
    "unsorted_segment_sum": """The sum of the rows of `data` in each segment (unsorted ids).

    There are `num_segments` output rows; segments with no rows give 0.

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
      >>> tf.math.unsorted_segment_sum([1.0, 2.0, 3.0, 4.0], [1, 0, 1, 0], 2).numpy()
      array([6., 4.], dtype=float32)
    """,
    "unsorted_segment_prod": """The product of the rows of `data` in each segment (unsorted ids).

    There are `num_segments` output rows; segments with no rows give 1.

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
      >>> tf.math.unsorted_segment_prod([1.0, 2.0, 3.0, 4.0], [1, 0, 1, 0], 2).numpy()
      array([8., 3.], dtype=float32)
    """,
    "unsorted_segment_mean": """The mean of the rows of `data` in each segment (unsorted ids).

    There are `num_segments` output rows; segments with no rows give 0.

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
      >>> tf.math.unsorted_segment_mean([1.0, 2.0, 3.0, 4.0], [1, 0, 1, 0], 2).numpy()
      array([3., 2.], dtype=float32)
    """,
    "unsorted_segment_sqrt_n": """The sum of each segment's rows divided by sqrt(their count).

    There are `num_segments` output rows; segments with no rows give 0.

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
      >>> tf.math.unsorted_segment_sqrt_n([1.0, 2.0, 3.0, 4.0], [1, 0, 1, 0], 2).numpy()
      array([4.242641, 2.828427], dtype=float32)
    """,
    "unsorted_segment_max": """The maximum of the rows of `data` in each segment (unsorted ids).

    There are `num_segments` output rows; segments with no rows give the dtype's lowest
    value.

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
      >>> tf.math.unsorted_segment_max([1.0, 2.0, 3.0, 4.0], [1, 0, 1, 0], 2).numpy()
      array([4., 3.], dtype=float32)
    """,
    "unsorted_segment_min": """The minimum of the rows of `data` in each segment (unsorted ids).

    There are `num_segments` output rows; segments with no rows give the dtype's largest
    value.

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
      >>> tf.math.unsorted_segment_min([1.0, 2.0, 3.0, 4.0], [1, 0, 1, 0], 2).numpy()
      array([2., 1.], dtype=float32)
    """,
}

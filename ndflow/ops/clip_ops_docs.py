"""The docstrings of clip_ops.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "clip_by_norm": """Scales a tensor down so that its L2 norm is at most `clip_norm`.

    Computes t * clip_norm / max(l2norm(t), clip_norm); a tensor within the norm is
    unchanged.

    Args:
      t: a float tensor (or IndexedSlices).
      clip_norm: a positive scalar.
      axes: optional axes of the norm (None: the whole tensor).
      name: optional name for the operation.

    Returns:
      A tensor of t's shape and dtype.

    Example:
      >>> tf.clip_by_norm([3.0, 4.0], 1.0).numpy()
      array([0.6, 0.8], dtype=float32)
    """,
    "clip_by_global_norm": """Scales tensors so that their combined L2 norm is at most `clip_norm`.

    Every tensor is multiplied by clip_norm / max(global_norm, clip_norm), where global_norm
    is the norm of all of them together (None entries are skipped).

    Args:
      t_list: a list of tensors (or IndexedSlices or None).
      clip_norm: a positive scalar.
      use_norm: optional precomputed global norm.
      name: optional name for the operation.

    Returns:
      A tuple `(clipped_list, global_norm)`.

    Example:
      >>> float(tf.clip_by_global_norm([[3.0], [4.0]], 1.0)[1])
      5.0
    """,
}

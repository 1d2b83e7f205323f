"""`tf.nest`: nested structures."""

from ndflow.core.nest import flatten, is_nested, map_structure, pack_sequence_as  # noqa: F401

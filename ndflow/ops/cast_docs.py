"""The docstrings of cast.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "tf_cast": """Casts a tensor (or a value) to another dtype.

    Floats cast to integers truncate toward zero; complex to real keeps the real part; a
    Python value first becomes a tensor of its own type (e.g. `tf.cast(0.1, tf.float64)`
    goes through float32).

    Args:
      x: a tensor, SparseTensor, IndexedSlices or value.
      dtype: the target dtype.
      name: optional name for the operation.

    Returns:
      A tensor (or composite) of x's shape and `dtype`.

    Example:
      >>> tf.cast([1.7, -1.7], tf.int32).numpy()
      array([ 1, -1], dtype=int32)
    """,
}

# The TF1 casts tf.compat.v1.to_float ... (cast.cast_to), complex_ops' to_complex64/128 too.
CAST_TO = """Casts a tensor to {dtype}.

    Args:
      x: a numeric tensor.
      name: optional name for the operation.

    Returns:
      {article} {dtype} tensor of x's shape.

    Example:
      >>> tf.compat.v1.{public}([1.0]).dtype
      tf.{dtype}
    """

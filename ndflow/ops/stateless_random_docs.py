"""The docstrings of stateless_random.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

from ndflow.ops.random_docs import normal

DOCS = {
    "stateless_uniform": """Uniform random values in [minval, maxval) that depend only on `seed`.

    Args:
      shape: the output shape (a list of ints or 1-D int tensor).
      seed: a shape-[2] int32/int64 tensor; the same seed gives the same values.
      minval: the lower bound.
      maxval: the upper bound (None: 1 for floats; required for integers).
      dtype: a float or int dtype.
      name: optional name for the operation.
      alg: the RNG algorithm: "auto_select", "philox" or "threefry".

    Returns:
      A tensor of `shape` and `dtype`.

    Raises:
      ValueError: for an integer dtype without maxval.

    Example:
      >>> a = tf.random.stateless_uniform([3], seed=[1, 2])
      >>> bool(tf.reduce_all(a == tf.random.stateless_uniform([3], seed=[1, 2])))
      True
    """,
    "stateless_normal": normal(
        "Normal random values N(mean, stddev**2) that depend only on `seed`.", False,
        "tf.random.stateless_normal([2, 3], seed=[1, 2]).shape\n      TensorShape([2, 3])",
        stateless=True),
    "stateless_truncated_normal": normal(
        "Truncated normal random values that depend only on `seed`.", True,
        "v = tf.random.stateless_truncated_normal([100], seed=[1, 2])\n"
        "      >>> bool(tf.reduce_all(tf.abs(v) <= 2.0))\n      True", stateless=True),
    "stateless_categorical": """Samples categorical class indices that depend only on `seed`.

    Args:
      logits: a [batch, classes] tensor of unnormalized log-probabilities.
      num_samples: the number of samples per row.
      seed: a shape-[2] int32/int64 tensor; the same seed gives the same values.
      dtype: int32 or int64, the index dtype.
      name: optional name for the operation.

    Returns:
      A tensor [batch, num_samples] of `dtype`.

    Example:
      >>> tf.random.stateless_categorical([[0.0, 0.0]], 5, seed=[1, 2]).shape
      TensorShape([1, 5])
    """,
    "stateless_multinomial": """Samples categorical class indices by `seed` (TF1 name).

    The same as `tf.random.stateless_categorical`.

    Args:
      logits: a [batch, classes] tensor of unnormalized log-probabilities.
      num_samples: the number of samples per row.
      seed: a shape-[2] int32/int64 tensor; the same seed gives the same values.
      output_dtype: int32 or int64.
      name: optional name for the operation.

    Returns:
      A tensor [batch, num_samples].

    Example:
      >>> tf.compat.v1.random.stateless_multinomial([[0.0, 0.0]], 5, seed=[1, 2]).shape
      TensorShape([1, 5])
    """,
    "split": """Derives `num` new seeds from a stateless seed.

    Args:
      seed: a shape-[2] int32/int64 tensor; the same seed gives the same values.
      num: how many seeds to make.
      alg: the RNG algorithm: "auto_select", "philox" or "threefry".

    Returns:
      A tensor [num, 2] of seed's dtype.

    Example:
      >>> tf.random.split(tf.constant([1, 2]), 3).shape
      TensorShape([3, 2])
    """,
    "fold_in": """Derives a new stateless seed from a seed and an integer (e.g. a step).

    Args:
      seed: a shape-[2] int32/int64 tensor; the same seed gives the same values.
      data: an int scalar mixed into the seed.
      alg: the RNG algorithm: "auto_select", "philox" or "threefry".

    Returns:
      A shape-[2] seed tensor.

    Example:
      >>> tf.random.fold_in(tf.constant([1, 2]), 7).shape
      TensorShape([2])
    """,
}

"""The docstrings of random.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

_OP_SEED = ("seed: optional int op seed; with `tf.random.set_seed`, it makes the sequence "
            "repeatable.")
_KEY = "seed: a shape-[2] int32/int64 tensor; the same seed gives the same values."


def normal(title: str, truncated: bool, example: str, stateless: bool = False) -> str:
    """The docstring of a (truncated) normal sampler: an op seed after `dtype`, or
    (stateless_random_docs) a key seed after `shape` and `alg` last."""
    details = ("\n    Values further than 2 * stddev from the mean are drawn again.\n"
               if truncated else "")
    stddev = "the standard deviation" + (" before truncation" if truncated else "")
    first, last = ("\n      " + _KEY, "") if stateless else ("", "\n      " + _OP_SEED)
    alg = ('\n      alg: the RNG algorithm: "auto_select", "philox" or "threefry".'
           if stateless else "")
    return f"""{title}
{details}
    Args:
      shape: the output shape (a list of ints or 1-D int tensor).{first}
      mean: the mean.
      stddev: {stddev}.
      dtype: a float dtype.{last}
      name: optional name for the operation.{alg}

    Returns:
      A tensor of `shape` and `dtype`.

    Example:
      >>> {example}
    """

DOCS = {
    "random_uniform": """Random values drawn uniformly from [minval, maxval).

    Args:
      shape: the output shape (a list of ints or 1-D int tensor).
      minval: the lower bound (included).
      maxval: the upper bound (excluded); None means 1 for floats (required for integers).
      dtype: a float or int dtype.
      seed: optional int op seed; with `tf.random.set_seed`, it makes the sequence repeatable.
      name: optional name for the operation.

    Returns:
      A tensor of `shape` and `dtype`.

    Raises:
      ValueError: for an integer dtype without maxval.

    Example:
      >>> tf.random.uniform([2, 3], seed=1).shape
      TensorShape([2, 3])
    """,
    "random_normal": normal("Random values drawn from a normal distribution N(mean, stddev**2).",
                            False, "tf.random.normal([2, 3], seed=1).shape\n"
                                   "      TensorShape([2, 3])"),
    "truncated_normal": normal(
        "Random values from a normal distribution truncated at two stddevs.", True,
        "bool(tf.reduce_all(tf.abs(tf.random.truncated_normal([100], seed=1)) <= 2.0))\n"
        "      True"),
    "random_shuffle": """Shuffles a tensor along its first dimension.

    Args:
      value: a tensor of rank >= 1.
      seed: optional int op seed; with `tf.random.set_seed`, it makes the sequence repeatable.
      name: optional name for the operation.

    Returns:
      A tensor of value's shape and dtype: a random permutation of its rows.

    Example:
      >>> sorted(tf.random.shuffle([1, 2, 3], seed=1).numpy().tolist())
      [1, 2, 3]
    """,
    "categorical": """Draws class indices from categorical distributions given by logits.

    Args:
      logits: a [batch, classes] tensor of unnormalized log-probabilities.
      num_samples: the number of samples per row.
      dtype: the index dtype, int32 or int64 (default).
      seed: optional int op seed; with `tf.random.set_seed`, it makes the sequence repeatable.
      name: optional name for the operation.

    Returns:
      A tensor [batch, num_samples] of `dtype`.

    Example:
      >>> tf.random.categorical([[0.0, 0.0]], 5, seed=1).shape
      TensorShape([1, 5])
    """,
}

"""The docstrings of random_functions.py's samplers (attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "shape": "the result's shape (an int or a tuple).",
    "mean": "the distribution's mean.",
    "dtype": "a float dtype (default `keras.config.floatx()`).",
    "seed": "an int (the same values on every call), a `keras.random.SeedGenerator`\n"
            "        (fresh values each call, reproducible from its seed) or None (a global\n"
            "        generator's next state).",
}
# The Returns and Raises of the float samplers.
_FLOAT_DRAW = """

    Returns:
      A tensor of `shape`.

    Raises:
      ValueError: a non-float `dtype`, or a `seed` of another type."""


DOCS = docs_with_args(_ARGS, {
    "normal": (
        "Samples from a normal (Gaussian) distribution.",
        ["shape", "mean", "stddev: its standard deviation.", "dtype", "seed"],
        _FLOAT_DRAW, """

    Example:

    >>> a = tf.keras.random.normal((2,), seed=1)
    >>> bool(tf.reduce_all(a == tf.keras.random.normal((2,), seed=1)))
    True"""),
    "uniform": (
        "Samples from a uniform distribution on [minval, maxval).",
        ["shape", "minval: the lower bound (included).", "maxval: the upper bound (excluded).",
         "dtype", "seed"],
        _FLOAT_DRAW),
    "randint": (
        "Samples integers uniformly from [minval, maxval).",
        ["shape", "minval: the lowest value (included).", "maxval: the end (excluded).",
         "dtype: an integer dtype (default int32).", "seed"],
        """

    Returns:
      A tensor of `shape`.

    Raises:
      ValueError: a non-integer `dtype`, or a `seed` of another type.""", """

    Example:

    >>> x = tf.keras.random.randint((100,), 0, 3, seed=7).numpy()
    >>> int(x.min()) >= 0 and int(x.max()) <= 2
    True"""),
    "truncated_normal": (
        "Samples from a normal distribution, redrawing values more than two standard\n"
        "    deviations from the mean.",
        ["shape", "mean", "stddev: its standard deviation (before truncation).", "dtype", "seed"],
        """

    Returns:
      A tensor of `shape`, every value within `mean +- 2 * stddev`.

    Raises:
      ValueError: a non-float `dtype`, or a `seed` of another type."""),
    "dropout": (
        "`inputs` with each entry zeroed with probability `rate` and the kept ones scaled by\n"
        "    `1 / (1 - rate)`, so the expected value stays.",
        ["inputs: a float tensor or array-like.", "rate: the drop probability, in [0, 1].",
         "noise_shape: optional shape of the keep/drop mask, broadcast against `inputs` (None\n"
         "        entries take the input's size).",
         "seed"],
        """

    Returns:
      A tensor of `inputs`' shape and dtype."""),
    "shuffle": (
        "`x` with its slices along `axis` in a random order.",
        ["x: a tensor or array-like.", "axis: the axis to permute.", "seed"],
        """

    Returns:
      A tensor of `x`'s shape and dtype.""", """

    Example:

    >>> sorted(tf.keras.random.shuffle([1, 2, 3], seed=0).numpy().tolist())
    [1, 2, 3]"""),
    "gamma": (
        "Samples from a gamma distribution with shape `alpha` (scale 1).",
        ["shape",
         "alpha: the shape parameter (> 0), a float or a tensor broadcastable to `shape`.",
         "dtype", "seed"],
        """

    Returns:
      A tensor of `shape` of positive values."""),
    "beta": (
        "Samples from a beta distribution, as `Ga / (Ga + Gb)` of two gamma draws.",
        ["shape",
         "alpha: the first shape parameter (> 0), a float or tensor broadcastable to `shape`.",
         "beta: the second shape parameter (> 0), likewise.", "dtype", "seed"],
        """

    Returns:
      A tensor of `shape` of values in (0, 1)."""),
    "binomial": (
        "Samples from a binomial distribution: the number of successes in `counts` trials of\n"
        "    success probability `probabilities`.\n"
        "\n"
        "    ndflow draws the trials one by one up to the largest count (so `counts` must be "
        "known\n"
        "    when the call is traced).",
        ["shape: the result's shape.",
         "counts: the number of trials, a number or tensor broadcastable to `shape`.",
         "probabilities: the success probability, likewise.",
         "dtype: a float dtype for the counts (default `keras.config.floatx()`).", "seed"],
        """

    Returns:
      A tensor of `shape` holding whole numbers in [0, counts].

    Raises:
      ValueError: `counts` is not known when traced."""),
    "categorical": (
        "Draws class indices from categorical distributions given by logits.",
        ["logits: a 2-D tensor (batch, classes) of unnormalized log-probabilities.",
         "num_samples: how many indices to draw per row.",
         "dtype: the indices' dtype (default int32).", "seed"],
        """

    Returns:
      A tensor of shape (batch, num_samples).

    Raises:
      ValueError: `logits` is not 2-D.""", """

    Example:

    >>> tf.keras.random.categorical([[0.0, 100.0]], 3, seed=1).numpy()
    array([[1, 1, 1]], dtype=int32)"""),
})

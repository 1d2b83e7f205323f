"""Docstrings of keras.ops' reductions, order statistics, cumulative ops and sorting
(numpy_reduce.py). Attached by `ndflow.keras.docstrings.attach`; the examples run as
doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_AXIS = """axis: an int or tuple of ints, the axes to reduce; None reduces every axis."""
_KEEP = "keepdims: whether the reduced axes stay, with size 1."


def _reduce(summary: str, x: str = "a tensor or array-like.", returns: str = "",
            extra: str = "", example: str = "", nan: bool = False) -> str:
    nan_note = "\n\n    NaN values are ignored (skipped as if absent)." if nan else ""
    doc = f"""{summary}{nan_note}

    Args:
      x: {x}
      {_AXIS}
      {_KEEP}{extra}

    Returns:
      A tensor of `x`'s shape without (or with size 1 on) the reduced axes{returns}.
    """
    return sections(doc, example=example)


def _quantile(summary: str, q: str, nan: bool = False, example: str = "") -> str:
    nan_note = (" NaN values are ignored; a slice of only NaNs gives NaN." if nan else
                " A NaN in a slice makes its result NaN.")
    doc = f"""{summary}{nan_note}

    Args:
      x: a tensor or array-like (ints are computed as floats).
      q: {q}
      {_AXIS}
      method: how a position between two sorted values is resolved: "linear"
        (interpolate), "lower", "higher", "midpoint" or "nearest".
      {_KEEP}

    Returns:
      A float tensor of shape `q.shape + reduced shape`.

    Raises:
      ValueError: an unknown `method`.
    """
    return sections(doc, example=example)


def _arg(which: str, nan: bool = False, example: str = "") -> str:
    nan_note = " NaN values are skipped." if nan else ""
    doc = f"""The index of the {which} value along `axis` (the first one on ties).{nan_note}

    Args:
      x: a tensor or array-like.
      axis: the axis to search; None searches the flattened `x`.
      keepdims: whether the searched axis stays, with size 1.

    Returns:
      An int32 tensor.
    """
    return sections(doc, example=example)


def _cumulative(what: str, nan: bool = False, example: str = "") -> str:
    nan_note = " NaN values count as {}.".format("0" if what == "sum" else "1") if nan else ""
    doc = f"""The cumulative {what} of `x`'s elements along `axis`.{nan_note}

    Args:
      x: a tensor or array-like (bools are counted as int32).
      axis: the axis to accumulate along; None flattens `x` first.
      dtype: optional dtype to convert `x` to first.

    Returns:
      A tensor of `x`'s shape (1-D when `axis` is None).
    """
    return sections(doc, example=example)


_SUM_DTYPE = (" (bools, int8 and int16 sum as int32, uint8 as int64; other dtypes keep "
              "theirs)")
_MEAN_DTYPE = " (float for int inputs, computed in float32 at least)"
_MINMAX_INITIAL = """
      initial: optional starting value included in the reduction (as if one more element
        of every slice)."""

DOCS = {
    "sum": _reduce("The sum of `x`'s elements over `axis`.", returns=_SUM_DTYPE,
                   example=">>> tf.keras.ops.sum([[1, 2], [3, 4]], axis=0).numpy()\n"
                           "    array([4, 6], dtype=int32)"),
    "prod": _reduce("The product of `x`'s elements over `axis`.", returns=_SUM_DTYPE,
                    extra="\n      dtype: optional dtype to multiply in."),
    "mean": _reduce("The arithmetic mean of `x`'s elements over `axis`.", returns=_MEAN_DTYPE,
                    example=">>> float(tf.keras.ops.mean([1, 2], axis=0))\n"
                            "    1.5"),
    "var": _reduce("The variance (population: divided by n) of `x` over `axis`.",
                   returns=_MEAN_DTYPE,
                   example=">>> float(tf.keras.ops.var([1.0, 3.0]))\n    1.0"),
    "std": _reduce("The standard deviation (population: divided by n) of `x` over `axis`.",
                   returns=_MEAN_DTYPE),
    "max": _reduce("The largest of `x`'s elements over `axis` (a NaN in a slice gives NaN).",
                   extra=_MINMAX_INITIAL, returns=", in `x`'s dtype",
                   example=">>> tf.keras.ops.max([[1, 5], [3, 2]], axis=1).numpy()\n"
                           "    array([5, 3], dtype=int32)"),
    "min": _reduce("The smallest of `x`'s elements over `axis` (a NaN in a slice gives NaN).",
                   extra=_MINMAX_INITIAL, returns=", in `x`'s dtype"),
    "amax": _reduce("The largest of `x`'s elements over `axis` (`max` without `initial`).",
                    returns=", in `x`'s dtype"),
    "amin": _reduce("The smallest of `x`'s elements over `axis` (`min` without `initial`).",
                    returns=", in `x`'s dtype"),
    "any": _reduce("Whether any element over `axis` is true (nonzero).", returns=", bool",
                   example=">>> tf.keras.ops.any([[0, 0], [0, 1]], axis=1).numpy()\n"
                           "    array([False,  True])"),
    "all": _reduce("Whether every element over `axis` is true (nonzero).", returns=", bool"),
    "ptp": _reduce("The range (peak to peak) `max - min` of `x`'s elements over `axis`.",
                   returns=", in `x`'s dtype",
                   example=">>> int(tf.keras.ops.ptp([4, 9, 1]))\n    8"),
    "argmax": _arg("largest", example=">>> tf.keras.ops.argmax([[1, 5], [7, 2]], axis=1)"
                                      ".numpy()\n    array([1, 0], dtype=int32)"),
    "argmin": _arg("smallest"),
    "nanargmax": _arg("largest", nan=True),
    "nanargmin": _arg("smallest", nan=True),
    "count_nonzero": """The number of nonzero (or true) elements of `x` over `axis`.

    Args:
      x: a tensor or array-like.
      axis: an int or tuple of ints; None counts over every axis.

    Returns:
      An int32 tensor of `x`'s shape without the reduced axes.

    Example:

    >>> int(tf.keras.ops.count_nonzero([[0, 1], [2, 3]]))
    3
    """,
    "quantile": _quantile(
        "The `q`-th quantiles of `x` over `axis`, as NumPy computes them (positions "
        "`q * (n - 1)` in the sorted values).",
        "a float or 1-D array of quantiles in [0, 1].",
        example=">>> float(tf.keras.ops.quantile([1.0, 2.0, 3.0, 4.0], 0.5))\n"
                "    2.5"),
    "percentile": _quantile(
        "The `q`-th percentiles of `x` over `axis` (`quantile` with `q / 100`).",
        "a float or 1-D array of percentiles in [0, 100].",
        example=">>> tf.keras.ops.percentile([1.0, 2.0, 3.0], [0, 100]).numpy()\n"
                "    array([1., 3.], dtype=float32)"),
    "nanquantile": _quantile("The `q`-th quantiles of `x` over `axis`.",
                             "a float or 1-D array of quantiles in [0, 1].", nan=True),
    "nanpercentile": _quantile("The `q`-th percentiles of `x` over `axis`.",
                               "a float or 1-D array of percentiles in [0, 100].", nan=True),
    "median": _reduce("The median of `x`'s elements over `axis` (the mean of the two middle "
                      "values for an even count).", x="a tensor or array-like (ints are "
                      "computed as floats).", returns=", floating point",
                      example=">>> float(tf.keras.ops.median([3, 1, 2, 10]))\n    2.5"),
    "nanmedian": _reduce("The median of `x`'s elements over `axis`; a slice of only NaNs gives "
                         "NaN.", x="a tensor or array-like (ints are computed as floats).",
                         returns=", floating point", nan=True),
    "average": """The mean of `x` over `axis`, weighted by `weights` when given:
    `sum(x * weights) / sum(weights)`.

    Args:
      x: a tensor or array-like.
      axis: an int, the axis to average over; None averages every element.
      weights: optional weights: `x`'s shape, or 1-D with the length of `axis`.

    Returns:
      A float tensor of `x`'s shape without `axis`.

    Example:

    >>> float(tf.keras.ops.average([1.0, 3.0], weights=[3.0, 1.0]))
    1.5
    """,
    "cumsum": _cumulative("sum", example=">>> tf.keras.ops.cumsum([1, 2, 3]).numpy()\n"
                                         "    array([1, 3, 6], dtype=int32)"),
    "cumprod": _cumulative("product", example=">>> tf.keras.ops.cumprod([1, 2, 3]).numpy()\n"
                                              "    array([1, 2, 6], dtype=int32)"),
    "nancumsum": _cumulative("sum", nan=True),
    "nancumprod": _cumulative("product", nan=True),
    "sort_values": """`x` sorted in ascending order along `axis` (`keras.ops.sort`).

    Args:
      x: a tensor or array-like (NaNs sort last).
      axis: the axis to sort along; None sorts the flattened `x`.

    Returns:
      A tensor of `x`'s shape and dtype (1-D for `axis=None`).

    Example:

    >>> tf.keras.ops.sort([3, 1, 2]).numpy()
    array([1, 2, 3], dtype=int32)
    """,
    "argsort": """The indices that sort `x` ascending along `axis` (stable: equal values keep
    their order).

    Args:
      x: a tensor or array-like.
      axis: the axis to sort along; None sorts the flattened `x`.

    Returns:
      An int32 tensor of `x`'s shape (1-D for `axis=None`).

    Example:

    >>> tf.keras.ops.argsort([3, 1, 2]).numpy()
    array([1, 2, 0], dtype=int32)
    """,
    "nansum": _reduce("The sum of `x`'s elements over `axis`.", returns=_SUM_DTYPE, nan=True),
    "nanprod": _reduce("The product of `x`'s elements over `axis`.", returns=_SUM_DTYPE,
                       nan=True),
    "nanmax": _reduce("The largest of `x`'s elements over `axis`; a slice of only NaNs gives "
                      "NaN.", returns=", in `x`'s dtype", nan=True),
    "nanmin": _reduce("The smallest of `x`'s elements over `axis`; a slice of only NaNs gives "
                      "NaN.", returns=", in `x`'s dtype", nan=True),
    "nanmean": _reduce("The mean of `x`'s non-NaN elements over `axis` (NaN for a slice of "
                       "only NaNs).", returns=_MEAN_DTYPE, nan=True,
                       example=">>> float(tf.keras.ops.nanmean([1.0, float('nan'), 3.0]))\n"
                               "    2.0"),
    "nanvar": _reduce("The variance (divided by the count of non-NaN values) of `x` over "
                      "`axis`.", returns=_MEAN_DTYPE, nan=True),
    "nanstd": _reduce("The standard deviation (divided by the count of non-NaN values) of "
                      "`x` over `axis`.", returns=_MEAN_DTYPE, nan=True),
    "argpartition": """Indices that partition `x` along `axis` around its `kth` element: the
    element at `kth` is in its sorted place, smaller ones before it, larger ones after.

    ndflow returns a full stable argsort, which satisfies this for every `kth`.

    Args:
      x: a tensor or array-like.
      kth: the index of the element to put in place.
      axis: the axis to partition along (None: the flattened `x`).

    Returns:
      An int32 tensor of `x`'s shape.
    """,
}

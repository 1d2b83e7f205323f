"""The docstrings of the correlation metrics (attached at the end of correlation_metrics.py)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "y_true": "the targets.",
    "y_pred": "the predictions, of `y_true`'s shape.",
    "axis": "the axis along which to correlate (default the last).",
    "name": "the metric's name.",
    "dtype": "the dtype of the state and result (default floatx).",
}
_SECTIONS_0 = """

    Returns:
      A float tensor without `axis`."""


DOCS = docs_with_args(_ARGS, {
    "pearson_correlation": (
        "Pearson's correlation coefficient of `y_true` and `y_pred` along `axis`, per\n"
        "    sample: 1 for a perfect linear relation, -1 for a perfect inverse one.",
        ["y_true", "y_pred", "axis"],
        _SECTIONS_0, """

    Example:

    >>> tf.keras.metrics.pearson_correlation([[1.0, 2.0, 3.0]], [[2.0, 4.0, 6.0]]).numpy().round(4)
    array([1.], dtype=float32)"""),
    "concordance_correlation": (
        "Lin's concordance correlation coefficient along `axis`, per sample: agreement of\n"
        "    predictions with targets (1 only when they are equal, not merely correlated).\n"
        "\n"
        "    Computed as Keras does: `2 * mean((y_true - mean(y_pred)) * (y_pred - "
        "mean(y_pred)))\n"
        "    / (var(y_true) + var(y_pred) + (mean(y_true) - mean(y_pred))**2)` (note Keras'\n"
        "    covariance term centres `y_true` on the predictions' mean).",
        ["y_true", "y_pred", "axis: the axis along which to compute (default the last)."],
        _SECTIONS_0),
    "PearsonCorrelation": (
        "The Pearson correlation of targets and predictions along `axis`, as a running\n"
        "    (weighted) mean over the samples passed to `update_state`.",
        ["name", "dtype", "axis"],
        ""),
    "ConcordanceCorrelation": (
        "Lin's concordance correlation of targets and predictions along `axis` (see\n"
        "    `keras.metrics.concordance_correlation`), as a running (weighted) mean over samples.",
        ["name", "dtype", "axis: the axis along which to compute (default the last)."],
        ""),
})

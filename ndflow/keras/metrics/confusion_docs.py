"""The docstrings of confusion_metrics.py's metrics (attached at its end): one template for
the four counts, one for precision and recall, one for the best rate at a constrained rate."""

from __future__ import annotations

_COUNT = """The (weighted) number of {what}: {label} labels predicted {predicted},
    accumulated over batches.

    A prediction counts as positive when it is above the threshold; labels are positive
    when nonzero (True).

    Args:
      thresholds: a float in [0, 1] or a list of them (default 0.5); with a list, the
        result has one count per threshold.
      name: the metric's name.
      dtype: the result's dtype.

    Example:

    >>> m = tf.keras.metrics.{name}()
    >>> m.update_state([0, 1, 1, 0], [0.2, 0.9, 0.4, 0.7])
    >>> float(m.result())
    1.0
    """

_SHARE = """{name}: the share of {of} that {are}, `tp / (tp + {miss})`,
    accumulated over the batches (0 when {zero}).

    Args:
      thresholds: a float in [0, 1] or a list of them: a prediction above it counts as
        positive (default 0.5, or none with `top_k`); with a list, the result has one
        value per threshold.
      top_k: optional int: only each row's `k` highest predictions count as positive.
      class_id: optional int: only that class (column) is evaluated.
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).

    Example:

    >>> m = tf.keras.metrics.{name}()
    >>> m.update_state([0, 1, 1, 1], {predictions})
    >>> round(float(m.result()), 4)
    0.6667
    """

_AT = """The best {dependent} over the thresholds whose {constrained} is at least
    `{arg}`.

    All four confusion counts are accumulated at `num_thresholds` evenly spaced thresholds
    in [0, 1].

    Args:
      {arg}: the required {arg}, in [0, 1].
      num_thresholds: how many thresholds to evaluate.
      class_id: optional int: only that class (column) is evaluated.
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).

    Raises:
      ValueError: `{arg}` outside [0, 1], or `num_thresholds` below 1.
    """

_SENSITIVITY = "sensitivity (recall)"

DOCS = {
    f"{truth.capitalize()}{sign.capitalize()}s": _COUNT.format(
        what=f"{truth} {sign}s", predicted=sign,
        label=sign if truth == "true" else {"positive": "negative", "negative": "positive"}[sign],
        name=f"{truth.capitalize()}{sign.capitalize()}s")
    for truth in ("false", "true") for sign in ("positive", "negative")
} | {
    "Precision": _SHARE.format(name="Precision", of="the predicted positives", are="are positive",
                               miss="fp", zero="nothing is predicted positive",
                               predictions="[1.0, 1.0, 0.0, 1.0]"),
    "Recall": _SHARE.format(name="Recall", of="the positives", are="are predicted positive",
                            miss="fn", zero="there are no positives",
                            predictions="[1.0, 0.0, 1.0, 1.0]"),
} | {
    name: _AT.format(dependent=dependent, constrained=constrained, arg=arg)
    for name, dependent, constrained, arg in (
        ("SensitivityAtSpecificity", _SENSITIVITY, "specificity", "specificity"),
        ("SpecificityAtSensitivity", "specificity", _SENSITIVITY, "sensitivity"),
        ("PrecisionAtRecall", "precision", "recall", "recall"),
        ("RecallAtPrecision", "recall", "precision", "precision"))
}

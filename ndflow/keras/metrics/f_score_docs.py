"""The docstrings of FBetaScore and F1Score (f_score_metrics.py; attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "average": 'how the per-class scores combine: None (one score per class), "micro"\n'
               '        (from the counts of all classes together), "macro" (the plain mean) or\n'
               "        \"weighted\" (the mean weighted by each class' count of true labels).",
    "threshold": "a float in (0, 1]: predictions above it count as positive; None takes\n"
                 "        each row's highest prediction as its positive class.",
    "name": "the metric's name.",
    "dtype": "the dtype of the state and result (default floatx).",
}


DOCS = docs_with_args(_ARGS, {
    "FBetaScore": (
        "The F-beta score of multi-label (or multi-class) predictions, accumulated over the\n"
        "    batches: `(1 + beta**2) * precision * recall / (beta**2 * precision + recall)`; "
        "beta\n"
        "    above 1 favours recall.\n"
        "\n"
        "    Inputs are 2-D: (batch, classes) labels and predictions.",
        ["average", "threshold", "beta: a positive float.", "name", "dtype"],
        """

    Raises:
      ValueError: an unknown `average`, a `beta` that is not a positive float, or a
        `threshold` that is not a float in (0, 1]."""),
    "F1Score": (
        "The F1 score: the harmonic mean of precision and recall\n"
        "    (`2 * precision * recall / (precision + recall)`), accumulated over the batches; "
        "the\n"
        "    F-beta score with beta = 1.\n"
        "\n"
        "    Inputs are 2-D: (batch, classes) labels and predictions.",
        ["average", "threshold", "name", "dtype"],
        """

    Raises:
      ValueError: an unknown `average`, or a `threshold` that is not a float in (0, 1].""", """

    Example:

    >>> m = tf.keras.metrics.F1Score(threshold=0.5)
    >>> m.update_state([[1, 0], [0, 1]], [[0.9, 0.2], [0.4, 0.6]])
    >>> m.result().numpy().round(4)
    array([1., 1.], dtype=float32)"""),
})

"""Docstrings of `tf.keras.losses`' Loss classes (loss_functions.py) and of the losses in
loss_functions_extra.py (functions and classes). Attached by
`ndflow.keras.docstrings.attach`; the examples run as doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_COMMON = """reduction: how the per-sample losses combine: "sum_over_batch_size" (the
        default: the weighted sum divided by the number of elements), "sum", "mean",
        "mean_with_sample_weight" (divided by the sum of the weights) or "none"/None (the
        per-sample losses).
      name: the loss' name.
      dtype: the dtype targets and predictions are cast to (default floatx)."""


def _class(summary: str, function: str, args: str = "", example: str = "") -> str:
    doc = f"""{summary}

    Calling the object, `loss(y_true, y_pred, sample_weight=None)`, computes {function}
    per sample, multiplies by `sample_weight` (broadcast to the losses) and reduces.

    Args:{args}
      {_COMMON}

    Raises:
      ValueError: an unknown `reduction`.
    """
    return sections(doc, example=example)


_LOGITS = """
      from_logits: whether `y_pred` holds logits rather than probabilities."""
_SMOOTHING = """
      label_smoothing: in [0, 1]: the share of each target moved to the uniform
        distribution."""
_AXIS = """
      axis: the axis the loss reduces over (default the last)."""

CLASS_DOCS = {
    "MeanSquaredError": _class(
        "Mean of the squared errors.", "`mean((y_true - y_pred)**2)` over the last axis",
        example=">>> float(tf.keras.losses.MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))\n"
                "    0.5"),
    "MeanAbsoluteError": _class(
        "Mean of the absolute errors.", "`mean(|y_true - y_pred|)` over the last axis"),
    "MeanAbsolutePercentageError": _class(
        "Mean absolute percentage error.",
        "`100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7))` over the last axis"),
    "MeanSquaredLogarithmicError": _class(
        "Mean squared logarithmic error.",
        "`mean((log(y_pred + 1) - log(y_true + 1))**2)` over the last axis"),
    "Hinge": _class("Hinge loss for -1/1 (or 0/1) labels.",
                    "`mean(max(1 - y_true * y_pred, 0))` over the last axis"),
    "SquaredHinge": _class("Squared hinge loss for -1/1 (or 0/1) labels.",
                           "`mean(max(1 - y_true * y_pred, 0)**2)` over the last axis"),
    "CategoricalHinge": _class(
        "Categorical hinge loss.",
        "`max(max_other_score - true_score + 1, 0)` from one-hot targets"),
    "LogCosh": _class("Log-cosh loss, a smooth robust regression loss.",
                      "`mean(log(cosh(y_pred - y_true)))` over the last axis"),
    "KLDivergence": _class(
        "Kullback-Leibler divergence between target and predicted distributions.",
        "`sum(y_true * log(y_true / y_pred))` over the last axis (both clipped to "
        "[1e-7, 1])"),
    "Poisson": _class("Poisson loss for count targets.",
                      "`mean(y_pred - y_true * log(y_pred + 1e-7))` over the last axis"),
    "Huber": _class(
        "Huber loss: quadratic for small errors, linear for large ones.",
        "`0.5 * e**2` for `|e| <= delta`, else `delta * |e| - 0.5 * delta**2`, averaged "
        "over the last axis", """
      delta: where the loss turns from quadratic to linear.""",
        ">>> float(tf.keras.losses.Huber()([[0.0]], [[3.0]]))\n    2.5"),
    "CategoricalCrossentropy": _class(
        "Categorical cross-entropy for one-hot (or soft) targets.",
        "`-sum(y_true * log(y_pred))` over the classes axis (probabilities clipped to "
        "[1e-7, 1 - 1e-7])", _LOGITS + _SMOOTHING + _AXIS,
        ">>> loss = tf.keras.losses.CategoricalCrossentropy()\n"
        "    >>> round(float(loss([[0.0, 1.0]], [[0.5, 0.5]])), 4)\n    0.6931"),
    "SparseCategoricalCrossentropy": _class(
        "Categorical cross-entropy for integer class targets.",
        "`-log(y_pred[y_true])` (probabilities clipped to [1e-7, 1 - 1e-7])", _LOGITS + """
      ignore_class: optional class index whose samples get a loss of 0 (e.g. padding).
      axis: must be the last axis (-1)."""),
    "BinaryCrossentropy": _class(
        "Binary cross-entropy for 0/1 (or soft) targets.",
        "`-(y_true * log(y_pred) + (1 - y_true) * log(1 - y_pred))` averaged over `axis`",
        _LOGITS + """
      label_smoothing: in [0, 1]: targets move toward 0.5 by this share.""" + _AXIS,
        ">>> loss = tf.keras.losses.BinaryCrossentropy(from_logits=True)\n"
        "    >>> round(float(loss([[1.0]], [[0.0]])), 4)\n    0.6931"),
}

_FOCAL = """
      alpha: the weight of the positive class (with `apply_class_balancing`) or of every
        class (categorical).
      gamma: the focusing exponent: each term is scaled by `(1 - p)**gamma`, so
        well-classified examples count less."""

_CATEGORICAL_FOCAL = _FOCAL + _LOGITS + _SMOOTHING + _AXIS

EXTRA_DOCS = {
    "binary_focal_crossentropy": f"""Binary focal cross-entropy: the binary cross-entropy of
    each element scaled by `(1 - p_t)**gamma` (p_t: the probability given to the true
    label), averaged over `axis`.

    Args:
      y_true: 0/1 targets.
      y_pred: probabilities (or logits with `from_logits`), of `y_true`'s shape.
      apply_class_balancing: whether to weight positives by `alpha` and negatives by
        `1 - alpha`.{_FOCAL}{_LOGITS}
      label_smoothing: in [0, 1]: targets move toward 0.5 by this share.{_AXIS}

    Returns:
      A float tensor of one loss per sample.
    """,
    "categorical_focal_crossentropy": f"""Categorical focal cross-entropy:
    `-sum(alpha * (1 - p)**gamma * y_true * log(p))` over the classes axis.

    Args:
      y_true: one-hot targets.
      y_pred: class probabilities (normalized to sum to 1) or logits.{_CATEGORICAL_FOCAL}

    Returns:
      A float tensor of one loss per sample.

    Raises:
      ValueError: `axis` is a bool.
    """,
    "cosine_similarity": """Minus the cosine similarity of `y_true` and `y_pred` along `axis`:
    -1 for vectors pointing the same way, 0 for orthogonal ones, 1 for opposite ones.

    Args:
      y_true: the target vectors.
      y_pred: the predicted vectors, of `y_true`'s shape.
      axis: the vectors' axis (default the last).

    Returns:
      A float tensor of one value per vector.

    Example:

    >>> tf.keras.losses.cosine_similarity([[1.0, 0.0]], [[2.0, 0.0]]).numpy()
    array([-1.], dtype=float32)
    """,
    "dice": """Dice loss `1 - 2 * sum(y_true * y_pred) / (sum(y_true) + sum(y_pred))`, for
    segmentation masks.

    Args:
      y_true: target masks (0/1 or soft).
      y_pred: predicted masks, of `y_true`'s shape.
      axis: the axes summed over (None: all of them, one value for the batch).

    Returns:
      A float tensor without the summed axes.
    """,
    "tversky": """Tversky loss `1 - TP / (TP + alpha * FN + beta * FP)` with soft counts, a
    Dice loss that weighs misses and false alarms separately (alpha = beta = 0.5 is Dice).

    Here FN is `sum(y_true * (1 - y_pred))` and FP `sum(y_pred * (1 - y_true))`, as in the
    Keras version TensorFlow 2.21 ships.

    Args:
      y_true: target masks.
      y_pred: predicted masks, of `y_true`'s shape.
      alpha: the weight of the missed positives.
      beta: the weight of the false positives.
      axis: the axes summed over (None: all of them).

    Returns:
      A float tensor without the summed axes.
    """,
    "circle": """Circle loss for metric learning: pulls embeddings of the same label together
    and pushes the others apart, per sample.

    Args:
      y_true: int labels, (batch,).
      y_pred: L2-normalized embeddings, (batch, dim).
      ref_labels: labels of the reference embeddings (default `y_true`).
      ref_embeddings: the reference embeddings (default `y_pred`).
      remove_diagonal: whether a sample is not compared with itself.
      gamma: the scale of the similarities.
      margin: the relaxation margin.

    Returns:
      A float tensor of shape (batch,).
    """,
    "categorical_generalized_cross_entropy": """Generalized cross-entropy `(1 - p_y**q) / q`,
    robust to noisy labels (q near 0 is the cross-entropy, q = 1 the mean absolute error).

    Args:
      y_true: int class labels, (batch,).
      y_pred: class probabilities, (batch, classes).
      q: in (0, 1).

    Returns:
      A float tensor of shape (batch,).
    """,
    "BinaryFocalCrossentropy": _class(
        "Binary focal cross-entropy, for imbalanced binary classification.",
        "`binary_focal_crossentropy`", """
      apply_class_balancing: whether to weight positives by `alpha`, negatives by
        `1 - alpha`.""" + _FOCAL + _LOGITS + """
      label_smoothing: in [0, 1]: targets move toward 0.5 by this share.""" + _AXIS),
    "CategoricalFocalCrossentropy": _class(
        "Categorical focal cross-entropy, for imbalanced multi-class problems.",
        "`categorical_focal_crossentropy`", _FOCAL + _LOGITS + _SMOOTHING + _AXIS),
    "CosineSimilarity": _class(
        "Minus the cosine similarity of targets and predictions.", "`cosine_similarity`",
        _AXIS),
    "Dice": _class("Dice loss for segmentation masks.", "`dice`", """
      axis: the axes summed over (None: all)."""),
    "Tversky": _class("Tversky loss for segmentation masks.", "`tversky`", """
      alpha: the weight of the missed positives.
      beta: the weight of the false positives.
      axis: the axes summed over (None: all)."""),
    "CategoricalGeneralizedCrossEntropy": _class(
        "Generalized cross-entropy, robust to noisy labels.",
        "`categorical_generalized_cross_entropy`", """
      q: in (0, 1): near 0 behaves like cross-entropy, near 1 like mean absolute
        error.""").replace("ValueError: an unknown `reduction`.",
                            "ValueError: `q` outside (0, 1), or an unknown `reduction`."),
    "Circle": _class(
        "Circle loss for metric learning (only samples with a positive loss count in the "
        "mean reductions).", "`circle`", """
      gamma: the scale of the similarities.
      margin: the relaxation margin.
      remove_diagonal: whether a sample is not compared with itself."""),
}

"""Docstrings of `tf.keras.losses`' functions (loss_functions.py). Attached by
`ndflow.keras.docstrings.attach`; the examples run as doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_ARGS = """y_true: the targets, a tensor or array-like (cast to `y_pred`'s dtype).
      y_pred: the predictions, of `y_true`'s shape (ints are taken as float32). A
        trailing axis of size 1 on one of them is squeezed (or added) to match."""


def _mean_loss(summary: str, formula: str, example: str = "", extra: str = "") -> str:
    doc = f"""{summary}: {formula}, averaged over the last axis.

    Args:
      {_ARGS}{extra}

    Returns:
      A float tensor of one loss per sample: `y_pred`'s shape without the last axis.
    """
    return sections(doc, example=example)


_HINGE_LABELS = "`y_true` of only 0s and 1s is mapped to -1/1 first"

DOCS = {
    "mean_squared_error": _mean_loss(
        "Mean squared error", "`mean((y_true - y_pred)**2)`",
        ">>> tf.keras.losses.mse([[0.0, 1.0]], [[1.0, 1.0]]).numpy()\n"
        "    array([0.5], dtype=float32)"),
    "mean_absolute_error": _mean_loss(
        "Mean absolute error", "`mean(|y_true - y_pred|)`",
        ">>> tf.keras.losses.mae([[0.0, 1.0]], [[1.0, 3.0]]).numpy()\n"
        "    array([1.5], dtype=float32)"),
    "mean_absolute_percentage_error": _mean_loss(
        "Mean absolute percentage error",
        "`100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7))`",
        ">>> tf.keras.losses.mape([[2.0, 4.0]], [[1.0, 4.0]])"
        ".numpy()\n    array([25.], dtype=float32)"),
    "mean_squared_logarithmic_error": _mean_loss(
        "Mean squared logarithmic error",
        "`mean((log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1))**2)`, eps = 1e-7"),
    "hinge": _mean_loss(
        "Hinge loss for -1/1 labels", f"`mean(max(1 - y_true * y_pred, 0))` ({_HINGE_LABELS})",
        ">>> tf.keras.losses.hinge([[1.0, 0.0]], [[0.5, -2.0]]).numpy()\n"
        "    array([0.25], dtype=float32)"),
    "squared_hinge": _mean_loss(
        "Squared hinge loss", f"`mean(max(1 - y_true * y_pred, 0)**2)` ({_HINGE_LABELS})"),
    "categorical_hinge": """Categorical hinge loss: `max(neg - pos + 1, 0)`, where `pos` is
    the score of the true class and `neg` the highest score of another class.

    Args:
      y_true: one-hot targets, of `y_pred`'s shape.
      y_pred: the class scores.

    Returns:
      A float tensor of one loss per sample.

    Example:

    >>> tf.keras.losses.categorical_hinge([[0.0, 1.0]], [[0.25, 0.5]]).numpy()
    array([0.75], dtype=float32)
    """,
    "log_cosh": _mean_loss(
        "Log-cosh loss", "`mean(log(cosh(y_pred - y_true)))`: about `x**2 / 2` for small "
        "errors and `|x| - log(2)` for large ones (robust like Huber, but smooth)"),
    "kl_divergence": """Kullback-Leibler divergence `sum(y_true * log(y_true / y_pred))` over
    the last axis, both clipped to [1e-7, 1].

    Args:
      y_true: the target distributions (probabilities on the last axis).
      y_pred: the predicted distributions, of `y_true`'s shape.

    Returns:
      A float tensor of one divergence per sample.

    Example:

    >>> tf.keras.losses.kld([[0.5, 0.5]], [[0.5, 0.5]]).numpy()
    array([0.], dtype=float32)
    """,
    "poisson": _mean_loss(
        "Poisson loss", "`mean(y_pred - y_true * log(y_pred + 1e-7))` (for count targets; "
        "`y_pred` is the predicted rate)"),
    "huber": _mean_loss(
        "Huber loss",
        "`0.5 * x**2` where `|x| <= delta`, `delta * |x| - 0.5 * delta**2` elsewhere, with "
        "`x = y_pred - y_true`", extra="""
      delta: the error size where the loss turns from quadratic to linear.""",
        example=">>> tf.keras.losses.huber([[0.0, 0.0]], [[0.5, 3.0]]).numpy()\n"
                "    array([1.3125], dtype=float32)"),
    "categorical_crossentropy": """Categorical cross-entropy `-sum(y_true * log(y_pred))`
    over the classes axis, one value per sample.

    Without `from_logits`, `y_pred` is divided by its sum and clipped to [1e-7, 1 - 1e-7].
    When `y_pred` is the output of a Keras softmax, its logits are used instead (stabler).

    Args:
      y_true: one-hot (or soft) targets, of `y_pred`'s shape.
      y_pred: class probabilities, or logits when `from_logits`.
      from_logits: whether `y_pred` holds logits.
      label_smoothing: in [0, 1]: the targets are mixed with the uniform distribution,
        `y_true * (1 - s) + s / classes`.
      axis: the classes axis (an int; default last).

    Returns:
      A float tensor of `y_pred`'s shape without `axis`.

    Raises:
      ValueError: `axis` is a bool.

    Example:

    >>> tf.keras.losses.categorical_crossentropy([[0.0, 1.0]], [[0.5, 0.5]]).numpy().round(4)
    array([0.6931], dtype=float32)
    """,
    "sparse_categorical_crossentropy": """Categorical cross-entropy with integer class
    targets, one value per sample.

    Without `from_logits`, `y_pred` is clipped to [1e-7, 1 - 1e-7] (not renormalized).

    Args:
      y_true: int class indices, of `y_pred`'s shape without the last axis (a trailing
        axis of size 1 is accepted).
      y_pred: class probabilities on the last axis, or logits when `from_logits`.
      from_logits: whether `y_pred` holds logits.
      ignore_class: optional class index whose samples get a loss of 0 (e.g. padding).
      axis: must be the last axis (-1).

    Returns:
      A float tensor of `y_true`'s shape (without the size-1 axis).

    Raises:
      ValueError: `axis` is not the last axis.

    Example:

    >>> tf.keras.losses.sparse_categorical_crossentropy([1], [[0.5, 0.5]]).numpy().round(4)
    array([0.6931], dtype=float32)
    """,
    "binary_crossentropy": """Binary cross-entropy
    `-(y_true * log(y_pred) + (1 - y_true) * log(1 - y_pred))`, averaged over `axis`.

    Without `from_logits`, `y_pred` is clipped to [1e-7, 1 - 1e-7]. When `y_pred` is the
    output of a Keras sigmoid, its logits are used instead (stabler).

    Args:
      y_true: 0/1 (or soft) targets, of `y_pred`'s rank.
      y_pred: probabilities, or logits when `from_logits`.
      from_logits: whether `y_pred` holds logits.
      label_smoothing: in [0, 1]: targets move toward 0.5,
        `y_true * (1 - s) + 0.5 * s`.
      axis: the axis averaged over (default last).

    Returns:
      A float tensor of `y_pred`'s shape without `axis`.

    Raises:
      ValueError: `y_true` and `y_pred` differ in rank.

    Example:

    >>> tf.keras.losses.binary_crossentropy([[1.0, 0.0]], [[0.5, 0.5]]).numpy().round(4)
    array([0.6931], dtype=float32)
    """,
    "serialize": """A loss object's config as Keras saves it.

    Args:
      loss: a `tf.keras.losses.Loss` instance.

    Returns:
      A dict with "module", "class_name", "config" and "registered_name".

    Example:

    >>> tf.keras.losses.serialize(tf.keras.losses.MeanSquaredError())["class_name"]
    'MeanSquaredError'
    """,
    "deserialize": """The loss a name or a saved config stands for.

    Args:
      name: a loss function's name or alias ("mse", "categorical_crossentropy"), a loss
        class' name, or a dict from `serialize` (which gives a new Loss instance).
      custom_objects: optional dict of names to user losses, looked up first.

    Returns:
      A loss function, a Loss class, or (for a dict) a Loss instance.

    Raises:
      ValueError: the identifier names no known loss.

    Example:

    >>> tf.keras.losses.deserialize("mse") is tf.keras.losses.mse
    True
    """,
    "get": """The loss a name, config, class or callable stands for (what `compile(loss=...)`
    accepts).

    Args:
      identifier: None, a function's name or alias ("mse"), a class name (which gives an
        instance), a dict from `serialize`, a Loss subclass (instantiated), or a callable
        (returned as it is).

    Returns:
      A loss function or Loss object, or None for None.

    Raises:
      ValueError: the identifier names no known loss or is of another type.

    Example:

    >>> type(tf.keras.losses.get("Huber")).__name__
    'Huber'
    """,
}

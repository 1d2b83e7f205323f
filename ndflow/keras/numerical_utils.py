"""`tf.keras.utils` numerical helpers: `to_categorical` (one-hot labels as NumPy float64, as
Keras 3 returns them) and `normalize` (Lp normalization along an axis)."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import keras_export


@keras_export("keras.utils.to_categorical")
def to_categorical(x, num_classes=None) -> np.ndarray:
    """One-hot encodes integer class labels (for `categorical_crossentropy`).

    Args:
      x: class indices in [0, num_classes), any shape (a trailing axis of 1 is dropped).
      num_classes: the number of classes (default `max(x) + 1`).

    Returns:
      A float NumPy array of shape `x.shape + (num_classes,)`.

    Raises:
      ValueError: a label outside [0, num_classes).

    Example:

    >>> tf.keras.utils.to_categorical([0, 2], num_classes=3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
    """
    x = np.array(x.numpy() if hasattr(x, "numpy") else x, dtype="int64")
    shape = x.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = tuple(shape[:-1])
    x = x.reshape(-1)
    if not num_classes:
        num_classes = int(np.max(x)) + 1
    if x.size and (x.min() < 0 or x.max() >= num_classes):
        raise ValueError(f"to_categorical: labels must be in [0, {num_classes}); got values "
                         f"from {x.min()} to {x.max()}.")
    out = np.zeros((x.shape[0], num_classes))
    out[np.arange(x.shape[0]), x] = 1
    return out.reshape(tuple(shape) + (num_classes,))


@keras_export("keras.utils.normalize")
def normalize(x, axis=-1, order=2) -> np.ndarray:
    """`x` divided by its `order`-norm along `axis` (all-zero vectors stay zero).

    Args:
      x: an array or tensor.
      axis: the axis of the vectors.
      order: the norm's order (2: Euclidean).

    Returns:
      A NumPy array of `x`'s shape.

    Example:

    >>> tf.keras.utils.normalize(np.array([[3.0, 4.0]]))
    array([[0.6, 0.8]])
    """
    x = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)

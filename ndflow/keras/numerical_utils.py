"""`tf.keras.utils` numerical helpers: `to_categorical` (one-hot labels as NumPy float64, as
Keras 3 returns them) and `normalize` (Lp normalization along an axis)."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import keras_export


@keras_export("keras.utils.to_categorical")
def to_categorical(x, num_classes=None) -> np.ndarray:
    """Class vector (ints from 0 to num_classes - 1) -> binary class matrix."""
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
    """`x` divided by its `order`-norm along `axis` (zero norms left as zeros)."""
    x = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)

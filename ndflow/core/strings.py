"""String tensor values: NumPy object arrays of `bytes` kept on the host (ATen has no string
type). Python `str` values are stored UTF-8 encoded, as TensorFlow stores them."""

from __future__ import annotations

import numpy as np


def to_bytes(x) -> bytes:
    if isinstance(x, bytes):  # np.bytes_ (a bytes subclass) too: stored as plain bytes
        return x if type(x) is bytes else bytes(x)
    if isinstance(x, str):
        return x.encode("utf-8")
    raise TypeError(f"Failed to convert elements of {x!r} to Tensor. Consider casting elements "
                    "to a supported type.")


def as_bytes_array(value) -> np.ndarray:
    """`value` (str/bytes, nested lists of them, or a NumPy array) as an object array of
    bytes."""
    arr = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    out = np.empty(arr.shape, dtype=object)
    flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
    for i, x in enumerate(flat_in):
        if isinstance(x, (list, tuple)):  # NumPy made a ragged nest an array of lists
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.")
        flat_out[i] = to_bytes(x.item() if isinstance(x, np.generic) and
                               not isinstance(x, np.bytes_) else x)
    return out


def is_string_value(value) -> bool:
    """Whether a Python/NumPy value is made of strings (so it converts to tf.string)."""
    if isinstance(value, (str, bytes, np.str_, np.bytes_)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "US" or (value.dtype == object and value.size > 0 and
                                            isinstance(value.reshape(-1)[0], (str, bytes)))
    if isinstance(value, (list, tuple)):
        while isinstance(value, (list, tuple)) and value:
            value = value[0]
        return isinstance(value, (str, bytes))
    return False

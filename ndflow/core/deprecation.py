"""TF1 keyword aliases (`keep_dims`, `reduction_indices`, `dimension`, `dim`, ...).

The `tf.compat.v1` variants of functions take TF1's names beside TF2's and resolve them as
TensorFlow's `deprecation.deprecated_argument_lookup` does: the old name wins when only it is
given, and giving both is an error.
"""

from __future__ import annotations


def deprecated_argument_lookup(new_name: str, new_value, old_name: str, old_value):
    """The effective argument; ValueError when both the new and the old name are given."""
    if old_value is not None:
        if new_value is not None:
            raise ValueError(f"Cannot specify both '{old_name}' and '{new_name}'.")
        return old_value
    return new_value

"""TensorFlow's runtime deprecation warning on every public `tf.feature_column` function
(`@deprecation.deprecated(None, ...)`): logged once per function, naming the caller's file
and line, the function and TF's module of it, then the instructions."""

from __future__ import annotations

import functools
import sys

from ndflow.core import strict_mode

FEATURE_COLUMN_V2 = "tensorflow.python.feature_column.feature_column_v2"
FEATURE_COLUMN_V1 = "tensorflow.python.feature_column.feature_column"
SEQUENCE_FEATURE_COLUMN = "tensorflow.python.feature_column.sequence_feature_column"
USE_KERAS = ("Use Keras preprocessing layers instead, either directly or via the "
             "`tf.keras.utils.FeatureSpace` utility. Each of `tf.feature_column.*` has a "
             "functional equivalent in `tf.keras.layers` for feature preprocessing when training "
             "a Keras model.")

_warned: set = set()


def deprecated(module: str, instructions: str = USE_KERAS):
    """Decorates a feature-column function with TF's once-per-function warning."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if fn not in _warned:
                _warned.add(fn)
                caller = sys._getframe(1)
                strict_mode.log_deprecation(
                    "From %s:%d: %s (from %s) is deprecated and will be removed in a future "
                    "version.\nInstructions for updating:\n%s", caller.f_code.co_filename,
                    caller.f_lineno, fn.__name__, module, instructions)
            return fn(*args, **kwargs)
        return wrapper
    return decorate

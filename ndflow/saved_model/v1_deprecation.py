"""TensorFlow's `@deprecation.deprecated` warning for the TF1 SavedModel functions
(`simple_save`, `tf.compat.v1.saved_model.load`): logged once per function, naming the
caller's file and line and TF's module of the function."""

from __future__ import annotations

import sys

from ndflow.core import strict_mode

_warned: set[str] = set()


def warn_deprecated(name: str, module: str, instructions: str) -> None:
    """Call from the deprecated function itself: the warning names its caller."""
    if name in _warned:
        return
    _warned.add(name)
    caller = sys._getframe(2)
    strict_mode.log_deprecation("From %s:%d: %s (from %s) is deprecated and will be removed "
                                "in a future version.\nInstructions for updating:\n%s",
                                caller.f_code.co_filename, caller.f_lineno, name, module,
                                instructions)

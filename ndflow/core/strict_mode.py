"""`tf.experimental.enable_strict_mode`: deprecation warnings become errors.

TensorFlow's deprecation wrappers log through `_log_deprecation`, which in strict mode logs
the message as an error and raises RuntimeError instead of warning. ndflow's deprecated names
log through `log_deprecation` (or check `fail_if_strict` before their own warning), so each
raises on the call that would have warned; like TensorFlow, the once-per-name bookkeeping
happens first, so a later call of the same name goes through silently.
"""

from __future__ import annotations

from ndflow.core import tf_logging
from ndflow.core.api_export import tf_export

STRICT_MODE = False


@tf_export("experimental.enable_strict_mode")
def enable_strict_mode():
    """Turns every later deprecation warning into a RuntimeError (for the whole process)."""
    global STRICT_MODE
    STRICT_MODE = True


def fail_if_strict(msg: str, *args) -> None:
    """In strict mode, logs `msg % args` as an error and raises TensorFlow's RuntimeError."""
    if STRICT_MODE:
        tf_logging.error(msg, *args)
        raise RuntimeError("This behavior has been deprecated, which raises an error in strict "
                           "mode.")


def log_deprecation(msg: str, *args) -> None:
    """A deprecation warning, or in strict mode an error log and RuntimeError."""
    fail_if_strict(msg, *args)
    tf_logging.warning(msg, *args)

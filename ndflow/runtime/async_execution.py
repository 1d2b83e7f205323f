"""`tf.experimental.async_scope` and `tf.experimental.async_clear_error`.

In TensorFlow an op or function call inside `async_scope` may return before it has run; the
scope's exit is a barrier that waits for them and raises the first error, and
`async_clear_error` drops what is pending after an error. ndflow's eager execution is
synchronous: every op has finished (or raised) when its call returns, so an error surfaces at
the op that caused it - what TensorFlow's barrier would report, only earlier - and there is
never anything pending to sync or clear. The scope still sets, for its duration, the
environment variable TensorFlow sets (TF_ENABLE_EAGER_CLIENT_STREAMING_ENQUEUE=True) and
restores it afterwards.
"""

from __future__ import annotations

import contextlib
import os

from ndflow.core.api_export import tf_export

_STREAMING_VAR = "TF_ENABLE_EAGER_CLIENT_STREAMING_ENQUEUE"


@tf_export("experimental.async_scope")
@contextlib.contextmanager
def async_scope():
    """Groups eager ops whose errors TensorFlow reports by the scope's exit at the latest."""
    old = os.environ.get(_STREAMING_VAR)
    try:
        os.environ[_STREAMING_VAR] = str(True)
        yield
    finally:
        if old is None:
            os.environ.pop(_STREAMING_VAR, None)
        else:
            os.environ[_STREAMING_VAR] = old


@tf_export("experimental.async_clear_error")
def async_clear_error():
    """Clears pending async ops and error states: with synchronous eager, none exist."""

"""`tf.experimental.function_executor_type`: the executor that eager `tf.function` calls use.

TensorFlow keeps the type in the thread's function call options and looks its factory up when
a function is instantiated; an unregistered name is a NotFoundError from that call, never from
the `with` statement. ndflow runs every function through one executor (its compiled plan), so
the registered types - TensorFlow's "", "DEFAULT" and "SINGLE_THREADED_EXECUTOR" - all run
it, and any other name fails each eager call inside the scope with TensorFlow's error.
"""

from __future__ import annotations

import contextlib
import threading

from ndflow.core import errors
from ndflow.core.api_export import tf_export

# TensorFlow's registered executor factories, as its error message lists them.
REGISTERED = ("DEFAULT", "", "SINGLE_THREADED_EXECUTOR")


class _Options(threading.local):
    executor_type = ""


_options = _Options()


def executor_type() -> str:
    """The executor type this thread's eager function calls use."""
    return _options.executor_type


def check_executor_type() -> None:
    """NotFoundError (TensorFlow's, from a function call) for an unregistered executor type."""
    name = _options.executor_type
    if name and name not in REGISTERED:
        raise errors.NotFoundError(
            None, None, "Graph execution error:\n\nNo executor factory registered for the "
            f"given executor type: {name} Registered factories are "
            f"{{{', '.join(REGISTERED)}}}.")


@tf_export("experimental.function_executor_type")
@contextlib.contextmanager
def function_executor_type(executor_type):
    """Sets the executor type of eager `tf.function` calls in this thread for the block."""
    old = _options.executor_type
    _options.executor_type = executor_type
    try:
        yield
    finally:
        _options.executor_type = old

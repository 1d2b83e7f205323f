"""TensorFlow's Python logging: `tf.get_logger()` (the "tensorflow" logger, printing
`WARNING:tensorflow:...` lines) and TF1's `tf.compat.v1.logging` (set_verbosity, info,
warning, log_every_n, ...). Python-level warnings of ndflow go through this logger, so
`tf.get_logger().setLevel("ERROR")` silences them as it does TensorFlow's; the C++-style
runtime log lines (core/logging.py) follow TF_CPP_MIN_LOG_LEVEL instead."""

from __future__ import annotations

import logging as _logging
import sys
import threading

from ndflow.core.api_export import tf_export

DEBUG, INFO, WARN, ERROR, FATAL = (_logging.DEBUG, _logging.INFO, _logging.WARN, _logging.ERROR,
                                   _logging.FATAL)
for _name, _value in (("DEBUG", DEBUG), ("INFO", INFO), ("WARN", WARN), ("ERROR", ERROR),
                      ("FATAL", FATAL)):
    tf_export(v1=[f"logging.{_name}"])(_value)

_logger = None
_lock = threading.Lock()


class _StderrHandler(_logging.StreamHandler):
    """Writes to the `sys.stderr` of the moment, as absl's handler does: a stderr replaced
    after the logger was made (a notebook cell's, a test's capture) still gets the lines."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


@tf_export("get_logger", v1=["get_logger"])
def get_logger() -> _logging.Logger:
    """The "tensorflow" Python logger (one stderr handler, TF's `LEVEL:tensorflow:msg`)."""
    global _logger
    with _lock:
        if _logger is None:
            logger = _logging.getLogger("tensorflow")
            if not logger.handlers:
                handler = _StderrHandler()
                handler.setFormatter(_logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
                logger.addHandler(handler)
            _logger = logger
    return _logger


@tf_export(v1=["logging.log"])
def log(level, msg, *args, **kwargs):
    """Logs `msg % args` at the given level on the "tensorflow" logger.

    Args:
      level: a `logging` level (`tf.compat.v1.logging.INFO`, ...).
      msg: the message, a %-format string.
      *args: values for the format string.
      **kwargs: passed to `logging.Logger.log`.

    Example:
      >>> tf.compat.v1.logging.log(tf.compat.v1.logging.INFO, "loss %.2f", 0.5)
    """
    get_logger().log(level, msg, *args, **kwargs)


@tf_export(v1=["logging.debug"])
def debug(msg, *args, **kwargs):
    """Logs `msg % args` at DEBUG level on the "tensorflow" logger.

    Args:
      msg: the message, a %-format string.
      *args: values for the format string.
      **kwargs: passed to `logging.Logger.debug` (`exc_info`, `stack_info`, ...).

    Example:
      >>> tf.compat.v1.logging.debug("step %d done", 3)
    """
    get_logger().debug(msg, *args, **kwargs)


@tf_export(v1=["logging.info"])
def info(msg, *args, **kwargs):
    """Logs `msg % args` at INFO level on the "tensorflow" logger.

    Args:
      msg: the message, a %-format string.
      *args: values for the format string.
      **kwargs: passed to `logging.Logger.info` (`exc_info`, `stack_info`, ...).

    Example:
      >>> tf.compat.v1.logging.info("step %d done", 3)
    """
    get_logger().info(msg, *args, **kwargs)


@tf_export(v1=["logging.warning"])
def warning(msg, *args, **kwargs):
    """Logs `msg % args` at WARNING level on the "tensorflow" logger.

    Args:
      msg: the message, a %-format string.
      *args: values for the format string.
      **kwargs: passed to `logging.Logger.warning` (`exc_info`, `stack_info`, ...).

    Example:
      >>> tf.compat.v1.logging.warning("step %d done", 3)
    """
    get_logger().warning(msg, *args, **kwargs)


@tf_export(v1=["logging.warn"])
def warn(msg, *args, **kwargs):
    """Logs `msg % args` at WARNING level (the same as `warning`).

    Args:
      msg: the message, a %-format string.
      *args: values for the format string.
      **kwargs: passed to `logging.Logger.warning` (`exc_info`, `stack_info`, ...).

    Example:
      >>> tf.compat.v1.logging.warn("step %d done", 3)
    """
    get_logger().warning(msg, *args, **kwargs)


@tf_export(v1=["logging.error"])
def error(msg, *args, **kwargs):
    """Logs `msg % args` at ERROR level on the "tensorflow" logger.

    Args:
      msg: the message, a %-format string.
      *args: values for the format string.
      **kwargs: passed to `logging.Logger.error` (`exc_info`, `stack_info`, ...).

    Example:
      >>> tf.compat.v1.logging.error("step %d done", 3)
    """
    get_logger().error(msg, *args, **kwargs)


@tf_export(v1=["logging.fatal"])
def fatal(msg, *args, **kwargs):
    """Logs `msg % args` at FATAL (CRITICAL) level on the "tensorflow" logger.

    Args:
      msg: the message, a %-format string.
      *args: values for the format string.
      **kwargs: passed to `logging.Logger.fatal` (`exc_info`, `stack_info`, ...).

    It only logs: the program keeps running.
    """
    get_logger().fatal(msg, *args, **kwargs)


@tf_export(v1=["logging.vlog"])
def vlog(level, msg, *args, **kwargs):
    """Logs `msg % args` at a numeric verbosity level (a plain `logging` level here).

    Args:
      level: the numeric `logging` level.
      msg: the message, a %-format string.
      *args: values for the format string.
      **kwargs: passed to `logging.Logger.log`.

    Example:
      >>> tf.compat.v1.logging.vlog(tf.compat.v1.logging.DEBUG, "detail")
    """
    get_logger().log(level, msg, *args, **kwargs)


_counts: dict = {}


def _count(key) -> int:
    with _lock:
        _counts[key] = _counts.get(key, 0) + 1
        return _counts[key]


def _caller_key():
    frame = sys._getframe(2)
    return frame.f_code.co_filename, frame.f_lineno


@tf_export(v1=["logging.log_every_n"])
def log_every_n(level, msg, n, *args):
    """Logs on the first call from a line and every n-th after it."""
    if (_count(_caller_key()) - 1) % n == 0:
        get_logger().log(level, msg, *args)


@tf_export(v1=["logging.log_first_n"])
def log_first_n(level, msg, n, *args):
    """Logs the first n calls from a line."""
    if _count(_caller_key()) <= n:
        get_logger().log(level, msg, *args)


@tf_export(v1=["logging.log_if"])
def log_if(level, msg, condition, *args):
    """Logs `msg % args` at `level` only when `condition` is true.

    Args:
      level: a `logging` level.
      msg: the message, a %-format string.
      condition: whether to log.
      *args: values for the format string.

    Example:
      >>> tf.compat.v1.logging.log_if(tf.compat.v1.logging.INFO, "step %d", False, 1)
    """
    if condition:
        get_logger().log(level, msg, *args)


@tf_export(v1=["logging.set_verbosity"])
def set_verbosity(v) -> None:
    """Sets the threshold level of the "tensorflow" logger.

    Messages below it are dropped.

    Args:
      v: a `logging` level (`tf.compat.v1.logging.ERROR`, ...) or its name.

    Example:
      >>> old = tf.compat.v1.logging.get_verbosity()
      >>> tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
      >>> tf.compat.v1.logging.get_verbosity() == tf.compat.v1.logging.ERROR
      True
      >>> tf.compat.v1.logging.set_verbosity(old)
    """
    get_logger().setLevel(v)


@tf_export(v1=["logging.get_verbosity"])
def get_verbosity() -> int:
    """The effective threshold level of the "tensorflow" logger.

    Returns:
      An int `logging` level (inherited from the root logger when none is set).

    Example:
      >>> isinstance(tf.compat.v1.logging.get_verbosity(), int)
      True
    """
    return get_logger().getEffectiveLevel()


@tf_export(v1=["logging.flush"])
def flush() -> None:
    """Flushes the handlers of the "tensorflow" logger.

    Example:
      >>> tf.compat.v1.logging.flush()
    """
    for handler in get_logger().handlers:
        handler.flush()


@tf_export(v1=["logging.TaskLevelStatusMessage"])
def TaskLevelStatusMessage(msg) -> None:  # noqa: N802 - TF's name
    """Logs a task status message at ERROR level.

    Args:
      msg: the message.
    """
    error(msg)

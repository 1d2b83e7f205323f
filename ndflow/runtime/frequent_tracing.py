"""TensorFlow's frequent-retracing warning for `tf.function`: per Python function (its code
object, so a tf.function re-created in a loop counts as one), a window of the last ~10 calls
with the calls each trace covered; when 5 of them traced, TF's WARNING is logged, at most
twice per function. Only calls made eagerly count, as in TF."""

from __future__ import annotations

import threading
import weakref

from ndflow.core import tf_logging

MAX_CALL_HISTORY = 10
THRESHOLD = 5
MAX_WARNINGS = 2

_MESSAGE = (
    "{} out of the last {} calls to {} triggered tf.function retracing. Tracing is expensive "
    "and the excessive number of tracings could be due to (1) creating @tf.function "
    "repeatedly in a loop, (2) passing tensors with different shapes, (3) passing Python "
    "objects instead of tensors. For (1), please define your @tf.function outside of the "
    "loop. For (2), @tf.function has reduce_retracing=True option that can avoid unnecessary "
    "retracing. For (3), please refer to "
    "https://www.tensorflow.org/guide/function#controlling_retracing and "
    "https://www.tensorflow.org/api_docs/python/tf/function for  more details.")


class _Detector:
    __slots__ = ("calls_per_tracing", "call_count", "warnings")

    def __init__(self):
        self.calls_per_tracing: list[int] = []   # per recent trace: the calls it covered
        self.call_count = 0
        self.warnings = 0

    def traced(self, function) -> None:
        self.call_count += 1
        self.calls_per_tracing.append(1)
        while self.calls_per_tracing and \
                self.call_count - self.calls_per_tracing[0] > MAX_CALL_HISTORY:
            self.call_count -= self.calls_per_tracing.pop(0)
        if self.warnings >= MAX_WARNINGS or len(self.calls_per_tracing) < THRESHOLD:
            return
        self.warnings += 1
        tf_logging.warning(_MESSAGE.format(len(self.calls_per_tracing), self.call_count,
                                           function))

    def not_traced(self) -> None:
        # a concrete function got directly: the first call counted need not be a trace
        if not self.calls_per_tracing:
            self.calls_per_tracing = [0]
        self.calls_per_tracing[-1] += 1
        self.call_count += 1


_detectors: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def call_stats_key(python_function, function):
    """TF's key: the code object of the innermost wrapped function, else the tf.function."""
    target = python_function
    while hasattr(target, "__wrapped__"):
        target = target.__wrapped__
    target = getattr(target, "__func__", target)
    return getattr(target, "__code__", function)


def record_call(key, traced: bool, python_function) -> None:
    """Counts one eager call of a tf.function; warns as TF when it retraces too often."""
    with _lock:
        detector = _detectors.get(key)
        if detector is None:
            detector = _detectors[key] = _Detector()
        if traced:   # a method shows as its function, as TF's bound-method wrapper
            detector.traced(getattr(python_function, "__func__", python_function))
        else:
            detector.not_traced()

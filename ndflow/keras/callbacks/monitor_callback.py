"""The base of callbacks that watch one metric (ModelCheckpoint, EarlyStopping,
ReduceLROnPlateau): its direction and what counts as an improvement, as Keras 3 decides.

Direction: mode "min"/"max", or "auto": `loss`/`val_loss` are minimized, and a metric named
like one of the model's compiled metrics follows that metric's `_direction` ("up" or
"down"); any other name is a ValueError at the first epoch end. Values are compared as
Keras' `ops.less`/`ops.greater` compare them: Python floats as float32 (Keras' floatx), other
values in their own dtype.
"""

from __future__ import annotations

import warnings

import numpy as np

from ndflow.keras.callbacks.callback import Callback


def _as_keras_operand(x):
    # Exact types: NumPy's float64 and int64 scalars subclass float and int but keep their
    # dtype in Keras.
    if type(x) is int:
        return np.int32(x)
    if type(x) is float:
        return np.float32(x)
    return np.asarray(x)


def _keras_compare(np_op, x1, x2) -> bool:
    x1, x2 = _as_keras_operand(x1), _as_keras_operand(x2)
    floats = [x.dtype for x in (x1, x2) if np.issubdtype(x.dtype, np.floating)]
    if len(floats) == 1:  # an integer against a float: compared in the float's dtype
        x1, x2 = x1.astype(floats[0]), x2.astype(floats[0])
    return bool(np_op(x1, x2))


def less(x1, x2) -> bool:
    return _keras_compare(np.less, x1, x2)


def greater(x1, x2) -> bool:
    return _keras_compare(np.greater, x1, x2)


def _compiled_metrics(model) -> list:
    """The metrics inside the model's compiled-metrics containers (the objects in
    `model.metrics` that themselves hold a `metrics` list)."""
    found = []
    for m in getattr(model, "metrics", None) or []:
        inner = getattr(m, "metrics", None)
        if isinstance(inner, (list, tuple)):
            found.extend(inner)
    return found


class MonitorCallback(Callback):
    """Watches `monitor` in `mode` ("auto", "min", "max"); `baseline` is the initial best
    value; an improvement must exceed `min_delta` (its magnitude)."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ["auto", "min", "max"]:
            warnings.warn(f"{self.__class__.__name__} mode '{mode}' is unknown, fallback to "
                          "auto mode.", stacklevel=2)
            mode = "auto"
        self.monitor = monitor
        self.mode = mode
        self.best = baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self) -> None:
        if self.mode == "min":
            self.monitor_op = less
        elif self.mode == "max":
            self.monitor_op = greater
        else:
            metric_name = self.monitor.removeprefix("val_")
            if metric_name == "loss":
                self.monitor_op = less
            for m in _compiled_metrics(self.model):
                if getattr(m, "name", None) == metric_name and hasattr(m, "_direction"):
                    self.monitor_op = greater if m._direction == "up" else less
            if self.monitor_op is None:
                raise ValueError(
                    f"{self.__class__.__name__} callback received monitor={self.monitor}, "
                    "but Keras isn't able to automatically determine whether that metric "
                    "should be maximized or minimized. Pass `mode='max'` in order to monitor "
                    "based on the highest metric value, or pass `mode='min'` in order to use "
                    "the lowest value.")
        if self.monitor_op is less:
            self.min_delta *= -1

    def _is_improvement(self, monitor_value, reference_value) -> bool:
        if reference_value is None:
            return True
        return self.monitor_op(monitor_value - self.min_delta, reference_value)

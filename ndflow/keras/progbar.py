"""`tf.keras.utils.Progbar`: Keras 3's progress bar, character for character.

Verbose 1 draws one line, redrawn in place:

    ' 12/100 ━━━━━━━━━━━━━━━━━━━━ 1s 12ms/step - loss: 0.1234'

with ANSI bold/green/white around the count and the bar, an ETA while running and the total
time once finalized, then the time per step (`s`, `ms` or `us`) and the metrics (averaged
over steps unless stateful). As in Keras 3, the display is "dynamic" (each update starts with
backspaces over the previous line and a carriage return) when stdout is a terminal, inside
IPython, or on any POSIX system (Keras tests `"posix" in sys.modules`, which is true on Linux
and macOS whatever stdout is: a pipe gets the same bytes as a terminal); otherwise each update
starts on a new line. Keras' `PYCHARM_HOSTED` environment check is not made (it only matters
where `posix` is not loaded, and ndflow reads environment variables in core/config.py only).
Verbose 2 prints one line when finalized: ' 3/3 - 1s - 12ms/step - loss: 0.1234'.

Time comes from `time.time()` (looked up at each call, so a test may patch it).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from ndflow.core.api_export import keras_export


def print_msg(message, line_break: bool = True) -> None:
    """Keras' `io_utils.print_msg` (interactive logging): writes to stdout and flushes; where
    stdout's encoding cannot take the bar characters they become '=' (Keras 2's bar)."""
    message = str(message)
    if line_break:
        message += "\n"
    try:
        sys.stdout.write(message)
    except UnicodeEncodeError:
        encoding = sys.stdout.encoding or "utf-8"
        message = message.replace("━", "=").encode(encoding, errors="ignore").decode(encoding)
        sys.stdout.write(message)
    sys.stdout.flush()


def _dynamic_display() -> bool:
    return ((hasattr(sys.stdout, "isatty") and sys.stdout.isatty())
            or "ipykernel" in sys.modules or "posix" in sys.modules)


def _format_time(time_per_unit: float, unit_name: str) -> str:
    if time_per_unit >= 1 or time_per_unit == 0:
        return f" {time_per_unit:.0f}s/{unit_name}"
    if time_per_unit >= 1e-3:
        return f" {time_per_unit * 1000.0:.0f}ms/{unit_name}"
    return f" {time_per_unit * 1000000.0:.0f}us/{unit_name}"


def _format_eta(eta: float) -> str:
    if eta > 3600:
        return f"{int(eta // 3600)}:{int((eta % 3600) // 60):02d}:{int(eta % 60):02d}"
    if eta > 60:
        return f"{int(eta // 60)}:{int(eta % 60):02d}"
    return f"{int(eta)}s"


@keras_export("keras.utils.Progbar")
class Progbar:
    """Displays a progress bar.

    Args:
        target: total number of steps expected, None if unknown.
        width: the bar's width on screen.
        verbose: 0 (silent), 1 (the bar) or 2 (one line when finalized).
        interval: minimum time between two redraws, in seconds.
        stateful_metrics: names of metrics displayed as given (the others are averaged over
            the steps). Give this or `stateless_metrics`, not both.
        stateless_metrics: names of metrics that are averaged (the others are displayed as
            given).
        unit_name: what a step is called ("step", "sample").
    """

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
                 stateless_metrics=None, unit_name="step"):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError(
                "Only one of `stateful_metrics` or `stateless_metrics` can be provided. "
                "`stateful_metrics` is used to make metrics stateless by default (with an "
                "exclusion list), while `stateless_metrics` is used to make metrics stateful "
                "by default (with an exclusion list).")
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        if stateful_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = set(stateful_metrics), None
        elif stateless_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = None, set(stateless_metrics)
        else:
            self.stateful_metrics, self.stateless_metrics = set(), None
        self._dynamic_display = _dynamic_display()
        self._seen_so_far = 0
        self._values: dict = {}
        self._values_order: list = []
        self._start = time.time()
        self._last_update = 0
        self._time_at_epoch_start = self._start
        self._time_after_first_step = None
        self._prev_total_width = 0

    def update(self, current, values=None, finalize=None) -> None:
        """Moves the bar to step `current`.

        Args:
            current: index of the current step.
            values: list of `(name, value_for_last_step)`; stateless metrics are averaged
                over steps, stateful ones displayed as given.
            finalize: whether this is the last update (default: `current >= target`).
        """
        if finalize is None:
            finalize = False if self.target is None else current >= self.target
        self._record(current, values or [], finalize)
        self._seen_so_far = current

        now = time.time()
        time_per_unit = self._estimate_step_duration(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._draw(current, now, time_per_unit, finalize)
        elif self.verbose == 2:
            if finalize and self.target is not None and self.target > 0:
                self._print_summary(current, now, time_per_unit)
        self._last_update = now

    def add(self, n, values=None) -> None:
        self.update(self._seen_so_far + n, values)

    # -- internals ----------------------------------------------------------------------------
    def _record(self, current, values, finalize) -> None:
        for k, v in values:
            if k not in self._values_order:
                self._values_order.append(k)
            if self.stateful_metrics is not None:
                stateless = k not in self.stateful_metrics
            else:
                stateless = k in self.stateless_metrics
            if not stateless or finalize:
                # A finalizing update (which may repeat the last step) shows the value given.
                self._values[k] = [v, 1]
                continue
            value_base = max(current - self._seen_so_far, 1)
            if k not in self._values:
                self._values[k] = [v * value_base, value_base]
            else:
                self._values[k][0] += v * value_base
                self._values[k][1] += value_base

    def _average(self, k):
        total, count = self._values[k]
        if not isinstance(total, float):
            total = np.mean(total)
        return total / max(1, count)

    def _draw(self, current, now, time_per_unit, finalize) -> None:
        message = "\b" * self._prev_total_width + "\r" if self._dynamic_display else "\n"
        special_char_len = 0
        if self.target is not None and self.target > 0:
            numdigits = int(math.log10(self.target)) + 1
            bar = f"\x1b[1m{int(current):{numdigits}d}/{int(self.target)}\x1b[0m "
            special_char_len += 8
            prog_width = int(self.width * (float(current) / self.target))
            if prog_width > 0:
                bar += f"\33[32m{'━' * prog_width}\x1b[0m"
                special_char_len += 9
            bar += f"\33[37m{'━' * (self.width - prog_width)}\x1b[0m"
            special_char_len += 9
        else:
            bar = f"{int(current):7d}/Unknown"
        message += bar

        if self.target is not None and self.target > 0 and not finalize:
            info = f" \x1b[1m{_format_eta(time_per_unit * (self.target - current))}\x1b[0m"
        else:
            info = f" \x1b[1m{now - self._start:.0f}s\x1b[0m"
        special_char_len += 8
        info += _format_time(time_per_unit, self.unit_name)
        for k in self._values_order:
            info += f" - {k}:"
            if isinstance(self._values[k], list):
                avg = self._average(k)
                info += f" {avg:.4f}" if abs(avg) > 1e-3 else f" {avg:.4e}"
            else:
                info += f" {self._values[k]}"
        message += info

        total_width = len(bar) + len(info) - special_char_len
        if self._prev_total_width > total_width:
            message += " " * (self._prev_total_width - total_width)
        if finalize:
            message += "\n"
        print_msg(message, line_break=False)
        self._prev_total_width = total_width

    def _print_summary(self, current, now, time_per_unit) -> None:
        numdigits = int(math.log10(self.target)) + 1
        info = f"{int(current):{numdigits}d}/{int(self.target)} - {now - self._start:.0f}s"
        info += f" -{_format_time(time_per_unit, self.unit_name)}"
        for k in self._values_order:
            avg = self._average(k)
            # Keras compares the signed average here (the bar above compares its magnitude).
            info += f" - {k}:" + (f" {avg:.4f}" if avg > 1e-3 else f" {avg:.4e}")
        print_msg(info + "\n", line_break=False)

    def _estimate_step_duration(self, current, now) -> float:
        """Seconds per step: 0 before the first step; afterwards the first step (often slow:
        tracing, warm-up) is left out of the estimate once there are more."""
        if not current:
            return 0
        if self._time_after_first_step is not None and current > 1:
            time_per_unit = (now - self._time_after_first_step) / (current - 1)
        else:
            time_per_unit = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return time_per_unit

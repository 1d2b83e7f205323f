"""TF1's `tf.compat.v1.train.GlobalStepWaiterHook` (a worker waits for the global step to
reach a value before it trains) and `tf.compat.v1.train.ProfilerHook` (a Chrome trace of
a step, `timeline-<global step>.json`, every `save_steps` steps or `save_secs` seconds).

ProfilerHook traces the steps it picks with ndflow's profiler (profiler/recorder.py: every
kernel the step's plan runs, with its op, node and shapes) and writes the trace-event JSON
of profiler/trace_events.py, which chrome://tracing and ui.perfetto.dev open as they open
TensorFlow's timelines. TensorFlow also adds the step's RunMetadata (its StepStats) to an
event file in `output_dir`; ndflow has no StepStats, so it writes the timeline only.
"""

from __future__ import annotations

import json
import os
import time

from ndflow.core import file_io, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.profiler import recorder, trace_events
from ndflow.train.session_run_hook import SessionRunArgs, SessionRunHook
from ndflow.train.session_run_hooks import SecondOrStepTimer, _global_step_read


@tf_export(v1=["train.GlobalStepWaiterHook"])
class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first step until the global step reaches `wait_until_step` (read every
    half second; a chief typically advances it), as a worker of a replicated job waits."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _global_step_read("_GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        tf_logging.info("Waiting for global step %d before starting training.",
                        self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = run_context.session.run(self._global_step_tensor)
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                tf_logging.info("Waiting for global step %d before starting training. "
                                "Current step is %d.", self._wait_until_step, current_step)
                last_logged_step = current_step
            time.sleep(0.5)


@tf_export(v1=["train.ProfilerHook"])
class ProfilerHook(SessionRunHook):
    """Writes `output_dir/timeline-<global step>.json`, a Chrome trace of one step, every
    `save_steps` steps or `save_secs` seconds (the first step is never traced: TF starts
    the timer there). `show_dataflow` and `show_memory` are accepted; the trace has
    neither flow arrows nor memory counters."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._window = None

    def begin(self):
        self._next_step = None
        self._global_step_tensor = _global_step_read("ProfilerHook")

    def before_run(self, run_context):
        self._request_summary = (self._next_step is not None
                                 and self._timer.should_trigger_for_step(self._next_step))
        if self._request_summary:
            self._window = recorder.Window()  # closed in after_run: only this step's plans
        return SessionRunArgs({"global_step": self._global_step_tensor})

    def after_run(self, run_context, run_values):
        capture = None
        if self._window is not None:
            capture, self._window = self._window.close(), None
        stale_global_step = run_values.results["global_step"]
        if self._next_step is None:
            # the timer starts here, so the first trace comes N steps or seconds later
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_summary and capture is not None:
            global_step = run_context.session.run(self._global_step_tensor)
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, self._output_file.format(global_step), capture)
        self._next_step = global_step + 1

    def end(self, session):
        if self._window is not None:  # a step that raised
            self._window.close()
            self._window = None

    def _save(self, step, save_path, capture) -> None:
        tf_logging.info("Saving timeline for %d into '%s'.", step, save_path)
        with file_io.GFile(save_path, "w") as f:
            f.write(json.dumps(trace_events.trace(capture)))

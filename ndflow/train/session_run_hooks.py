"""TF1's basic session-run hooks (`tf.compat.v1.train.StopAtStepHook`, NanTensorHook,
LoggingTensorHook, FeedFnHook, FinalOpsHook, CheckpointSaverHook, StepCounterHook,
SummarySaverHook) and the SecondOrStepTimer they use.

As TensorFlow's: hooks that act every N steps fetch the global step (as it was before the
step ran) in `before_run`, and in `after_run` re-read it only when the stale value says the
trigger may be due. CheckpointSaverHook saves once when the session is created and once at
the end, besides every `save_steps`/`save_secs`.
"""

from __future__ import annotations

import os
import time

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary

from ndflow.checkpoint.saver import Saver
from ndflow.core import context, errors, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.graph_io import write_graph
from ndflow.summary.file_writer_v1 import FileWriterCache
from ndflow.train import training_util
from ndflow.train.session_run_hook import SessionRunArgs, SessionRunHook


def _one_of(first, second, neither: str, both: str) -> None:
    """Raises ValueError(`neither`) or ValueError(`both`) unless exactly one is given."""
    if first is None and second is None:
        raise ValueError(neither)
    if first is not None and second is not None:
        raise ValueError(both)


@tf_export(v1=["train.SecondOrStepTimer"])
class SecondOrStepTimer:
    """Triggers at most once every `every_secs` seconds or every `every_steps` steps."""

    def __init__(self, every_secs=None, every_steps=None):
        _one_of(every_secs, every_steps, "Either every_secs or every_steps should be provided.",
                "Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self) -> None:
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step) -> bool:
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= (self._last_triggered_time +
                                                            self._every_secs):
            return True
        return self._every_steps is not None and step >= (self._last_triggered_step +
                                                          self._every_steps)

    def update_last_triggered_step(self, step):
        """Records a trigger at `step`; returns (elapsed secs, elapsed steps) since the last
        one, or (None, None) the first time."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time, self._last_triggered_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


def _global_step_read(hook_name: str):
    step = training_util.get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


@tf_export(v1=["train.StopAtStepHook"])
class StopAtStepHook(SessionRunHook):
    """Requests a stop when the global step reaches `last_step` (or `num_steps` more than it
    was when the session was created)."""

    def __init__(self, num_steps=None, last_step=None):
        _one_of(num_steps, last_step, "One of num_steps or last_step must be specified.",
                "Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _global_step_read("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if run_values.results + 1 >= self._last_step:
            # The fetched value predates this step's increment (if any): re-read it.
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


@tf_export(v1=["train.NanLossDuringTrainingError"])
class NanLossDuringTrainingError(RuntimeError):
    """Raised by `tf.compat.v1.train.NanTensorHook` when the loss becomes NaN.

    Example:
      >>> str(tf.compat.v1.train.NanLossDuringTrainingError())
      'NaN loss during training.'
    """
    def __str__(self):
        return "NaN loss during training."


@tf_export(v1=["train.NanTensorHook"])
class NanTensorHook(SessionRunHook):
    """Fetches `loss_tensor` with every step; a NaN raises NanLossDuringTrainingError (or,
    with `fail_on_nan_loss=False`, logs and requests a stop)."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                tf_logging.error(message)
                raise NanLossDuringTrainingError
            tf_logging.warning(message)
            run_context.request_stop()


@tf_export(v1=["train.CheckpointSaverListener"])
class CheckpointSaverListener:
    """Called around each save of a CheckpointSaverHook; `after_save` returning True stops
    training."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class _NeverTriggerTimer(SecondOrStepTimer):
    """LoggingTensorHook's timer when it logs only at the end."""

    def __init__(self):  # noqa: D107 - no period
        self.reset()

    def should_trigger_for_step(self, step) -> bool:
        return False


def _as_graph_element(obj):
    """A tensor of the default graph, or the tensor a name ("x" or "x:0") names."""
    graph = context.get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(f"Passed {obj} should have graph attribute that is equal to "
                             f"current graph {graph}.")
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(f"Name {obj} is ambiguous, as this `Operation` has multiple outputs "
                     "(at least 2).")


@tf_export(v1=["train.LoggingTensorHook"])
class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` (a list of tensors or names, or a dict tag -> tensor)
    every `every_n_iter` local steps or `every_n_secs` seconds, and/or at the end, as
    `tag = value, ... (0.123 sec)` with INFO (or `formatter(values)`)."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and "
                             "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._timer = _NeverTriggerTimer() if only_at_end else SecondOrStepTimer(
            every_secs=every_n_secs, every_steps=every_n_iter)
        self._log_at_end = at_end

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, values) -> None:
        original = np.get_printoptions()
        np.set_printoptions(suppress=True)
        try:
            elapsed, _ = self._timer.update_last_triggered_step(self._iter_count)
            if self._formatter:
                tf_logging.info(self._formatter(values))
                return
            stats = ", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order)
            if elapsed is not None:
                tf_logging.info("%s (%.3f sec)", stats, elapsed)
            else:
                tf_logging.info("%s", stats)
        finally:
            np.set_printoptions(**original)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


@tf_export(v1=["train.FeedFnHook"])
class FeedFnHook(SessionRunHook):
    """Adds `feed_fn()` (a feed dict) to every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


_FINAL_OPS_OUT_OF_RANGE = (
    "An OutOfRangeError or StopIteration exception is raised by the code in FinalOpsHook. "
    "This typically means the Ops running by the FinalOpsHook have a dependency back to some "
    "input source, which should not happen. For example, for metrics in "
    "tf.estimator.Estimator, all metrics functions return two Ops: `value_op` and  "
    "`update_op`. Estimator.evaluate calls the `update_op` for each batch of the data in "
    "input source and, once it is exhausted, it call the `value_op` to get the metric values. "
    "The `value_op` here should have dependency back to variables reading only, rather than "
    "reading another batch from input. Otherwise, the `value_op`, executed by "
    "`FinalOpsHook`, triggers another data reading, which ends OutOfRangeError/StopIteration. "
    "Please fix that.")


@tf_export(v1=["train.FinalOpsHook"])
class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` (any structure `run` accepts) when the session ends; their values
    are `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
        except (errors.OutOfRangeError, StopIteration):
            tf_logging.warning(_FINAL_OPS_OUT_OF_RANGE)
            raise


@tf_export(v1=["train.CheckpointSaverHook"])
class CheckpointSaverHook(SessionRunHook):
    """Saves `<checkpoint_dir>/<checkpoint_basename>-<global step>` every `save_steps` steps
    or `save_secs` seconds, when the session is created and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def

    def begin(self):
        self._global_step_tensor = _global_step_read("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        global_step = int(session.run(self._global_step_tensor))
        if self._save_graph_def:
            os.makedirs(self._checkpoint_dir, exist_ok=True)
            write_graph(context.get_default_graph(), self._checkpoint_dir, "graph.pbtxt")
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(run_values.results + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session):
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = context.get_default_graph().get_collection(GraphKeys.SAVERS)
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                               "indicate which one to use by passing it to the constructor.")
        if not savers:
            self._saver = Saver(sharded=True, allow_empty=True)
            return self._saver
        return savers[0]

    def _save(self, session, step: int) -> bool:
        """Saves; True when a listener asks to stop."""
        tf_logging.info("Saving checkpoints for %d into %s.", step, self._save_path)
        for listener in self._listeners:
            listener.before_save(session, step)
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        self._get_saver().save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        stop = False
        for listener in self._listeners:
            stop = bool(listener.after_save(session, step)) or stop
        return stop


@tf_export(v1=["train.StepCounterHook"])
class StepCounterHook(SessionRunHook):
    """Logs (and with an output dir, records as `global_step/sec`) the training speed."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be "
                             "provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _global_step_read("StepCounterHook")
        self._summary_tag = self._global_step_tensor.op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if not self._timer.should_trigger_for_step(run_values.results + 1):
            return
        global_step = int(run_context.session.run(self._global_step_tensor))
        if self._timer.should_trigger_for_step(global_step):
            elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
            if elapsed_time:
                steps_per_sec = elapsed_steps / elapsed_time
                if self._summary_writer is not None:
                    summary = Summary()
                    summary.value.add(tag=self._summary_tag, simple_value=steps_per_sec)
                    self._summary_writer.add_summary(summary, global_step)
                tf_logging.info("%s: %g", self._summary_tag, steps_per_sec)


@tf_export(v1=["train.SummarySaverHook"])
class SummarySaverHook(SessionRunHook):
    """Runs the summary op (the scaffold's, or `summary_op`) every `save_steps` steps or
    `save_secs` seconds and writes it to `output_dir`."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _global_step_read("SummarySaverHook")
        self._next_step = None

    def _op(self):
        return self._scaffold.summary_op if self._scaffold is not None else self._summary_op

    def before_run(self, run_context):
        self._request_summary = self._next_step is None or \
            self._timer.should_trigger_for_step(self._next_step)
        fetches = {"global_step": self._global_step_tensor}
        if self._request_summary and self._op() is not None:
            fetches["summary"] = self._op()
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        stale_global_step = int(run_values.results["global_step"])
        global_step = stale_global_step + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            if "summary" in run_values.results and self._summary_writer is not None:
                self._summary_writer.add_summary(run_values.results["summary"], global_step)
        self._next_step = global_step + 1

    def end(self, session):
        if self._summary_writer is not None:
            self._summary_writer.flush()

"""`tf.compat.v1.train.Supervisor`: TF1's high-level training loop driver (before
MonitoredTrainingSession), graph mode only, as in TensorFlow 2.21.

    sv = Supervisor(logdir=d)                       # default ops from the graph's collections
    with sv.managed_session() as sess:
        while not sv.should_stop():
            sess.run(train_op)

The constructor completes the graph with default ready/init/local-init/summary ops, a Saver
and the global step, then finalizes it. `managed_session` (the chief) restores the latest
checkpoint of `logdir` or initializes through a SessionManager, writes the graph, and starts
the standard services: threads saving summaries and the step rate every
`save_summaries_secs` and a checkpoint every `save_model_secs`, plus the queue runners. On
leaving, an exception in the body stops the coordinator and is re-raised by its join (an
OutOfRangeError ends training cleanly); the summary writer gets a STOP log and is closed.
A non-chief waits for the chief to make the model ready (`wait_for_session`).
"""

from __future__ import annotations

import contextlib
import os
import time

from tensorboard.compat.proto.event_pb2 import SessionLog
from tensorboard.compat.proto.summary_pb2 import Summary

from ndflow.checkpoint.meta_graph import build_meta_graph
from ndflow.checkpoint.saver import Saver
from ndflow.core import context, dtypes, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.graph_io import write_graph
from ndflow.ops.array_core import group
from ndflow.ops.lookup_tables import tables_initializer
from ndflow.ops.variables import (
    global_variables,
    global_variables_initializer,
    local_variables_initializer,
)
from ndflow.ops.variables_v1_util import report_uninitialized_variables
from ndflow.summary.file_writer_v1 import FileWriter
from ndflow.summary.v1_summary_ops import merge_all
from ndflow.train import training_util
from ndflow.train.coordinator import Coordinator, LooperThread
from ndflow.train.session_manager import SessionManager


@tf_export(v1=["train.Supervisor"])
class Supervisor:
    """Sessions, checkpoints, summaries and stopping for a training program (module doc)."""

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        if context.executing_eagerly():
            raise RuntimeError("Supervisors are incompatible with eager execution.")
        graph = graph if graph is not None else context.get_default_graph()
        self._graph = graph
        with graph.as_default():
            self._init_ready_op(ready_op, ready_for_local_init_op)
            self._init_init_op(init_op, init_feed_dict)
            self._init_local_init_op(local_init_op)
            self._init_saver(saver)
            self._init_summary_op(summary_op)
            self._init_global_step(global_step)
        self._meta_graph_def = build_meta_graph(graph)
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        self._logdir = self._save_summaries_secs = self._save_model_secs = None
        self._save_path = self._summary_writer = None
        if self._is_chief:
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if self._logdir:
                self._save_path = os.path.join(self._logdir, checkpoint_basename)
            if summary_writer is Supervisor.USE_DEFAULT:
                if self._logdir:
                    self._summary_writer = FileWriter(self._logdir)
            else:
                self._summary_writer = summary_writer
            self._graph_added_to_summary = False
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=self._graph,
            recovery_wait_secs=self._recovery_wait_secs,
            local_init_run_options=self._local_init_run_options)
        self._verify_setup()
        graph.finalize()

    # -- the default ops, from the graph's collections or made (TF's rules) --

    def _first_of_collection(self, key):
        items = self._graph.get_collection(key)
        if len(items) > 1:
            tf_logging.info(f"Found {len(items)} {key} operations. Returning the first one.")
        return items[0] if items else None

    def _init_ready_op(self, ready_op, ready_for_local_init_op) -> None:
        if ready_op is Supervisor.USE_DEFAULT:
            ready_op = self._first_of_collection(GraphKeys.READY_OP)
            if ready_op is None:
                ready_op = report_uninitialized_variables()
                self._graph.add_to_collection(GraphKeys.READY_OP, ready_op)
        self._ready_op = ready_op
        if ready_for_local_init_op is Supervisor.USE_DEFAULT:
            ready_for_local_init_op = self._first_of_collection(
                GraphKeys.READY_FOR_LOCAL_INIT_OP)
        self._ready_for_local_init_op = ready_for_local_init_op

    def _init_init_op(self, init_op, init_feed_dict) -> None:
        if init_op is Supervisor.USE_DEFAULT:
            init_op = self._first_of_collection(GraphKeys.INIT_OP)
            if init_op is None:
                init_op = global_variables_initializer()
                self._graph.add_to_collection(GraphKeys.INIT_OP, init_op)
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict

    def _init_local_init_op(self, local_init_op) -> None:
        if local_init_op is Supervisor.USE_DEFAULT:
            local_init_op = self._first_of_collection(GraphKeys.LOCAL_INIT_OP)
            if local_init_op is None:
                local_init_op = group(local_variables_initializer(), tables_initializer())
                self._graph.add_to_collection(GraphKeys.LOCAL_INIT_OP, local_init_op)
        self._local_init_op = local_init_op

    def _init_saver(self, saver) -> None:
        if saver is Supervisor.USE_DEFAULT:
            saver = self._first_of_collection(GraphKeys.SAVERS)
            if saver is None and global_variables():
                saver = Saver()
                self._graph.add_to_collection(GraphKeys.SAVERS, saver)
        self._saver = saver

    def _init_summary_op(self, summary_op) -> None:
        if summary_op is Supervisor.USE_DEFAULT:
            summary_op = self._first_of_collection(GraphKeys.SUMMARY_OP)
            if summary_op is None:
                summary_op = merge_all()
                if summary_op is not None:
                    self._graph.add_to_collection(GraphKeys.SUMMARY_OP, summary_op)
        self._summary_op = summary_op

    def _init_global_step(self, global_step) -> None:
        if global_step is Supervisor.USE_DEFAULT:
            global_step = self._first_of_collection(GraphKeys.GLOBAL_STEP)
            if global_step is None:
                global_step = self._default_global_step_tensor()
                if global_step is not None:
                    self._graph.add_to_collection(GraphKeys.GLOBAL_STEP, global_step)
        self._global_step = global_step

    def _default_global_step_tensor(self):
        try:
            gs = self._graph.get_tensor_by_name("global_step:0")
        except (KeyError, ValueError):
            return None
        if gs.dtype.base_dtype in (dtypes.int32, dtypes.int64):
            return gs
        tf_logging.warning(f"Found 'global_step' is not an int type: {gs.dtype}")
        return None

    def _verify_setup(self) -> None:
        if not self._is_chief:
            for op in self._graph.get_operations():
                if op.type in ("Variable", "VariableV2") and not op.device:
                    raise ValueError("When using replicas, all Variables must have their "
                                     f"device set: {op}")

    is_chief = property(lambda self: self._is_chief)
    session_manager = property(lambda self: self._session_manager)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    # -- sessions and services --

    def _write_graph(self) -> None:
        if self._logdir:
            write_graph(self._graph.as_graph_def(add_shapes=True), self._logdir,
                        "graph.pbtxt")
        if self._summary_writer and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(self._meta_graph_def)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess):
        """Starts the summary, step-rate and checkpoint threads (chief only)."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because "
                               "only chief supervisors can write events.")
        if not self._logdir:
            tf_logging.warning("Standard services need a 'logdir' passed to the "
                               "SessionManager")
            return None
        if self._global_step is not None and self._summary_writer:
            step = training_util.global_step(sess, self._global_step)
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        threads = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self.saver and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for t in threads:
            t.start()
        return threads

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """The chief's prepared session (restored or initialized), a worker's ready one."""
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self.init_op, saver=self.saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
                config=config, init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                tf_logging.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            tf_logging.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts the graph's (or the given) queue runners under the coordinator."""
        if context.executing_eagerly():
            raise RuntimeError("Queues are not compatible with eager execution.")
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling `target` every `timer_interval_secs`."""
        looper = LooperThread(self._coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops the coordinator, joins the threads (re-raising a reported exception) and
        closes the summary writer."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None):
        self._coord.request_stop(ex=ex)

    def should_stop(self):
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None):
        """Writes a summary computed by the caller (at the current global step)."""
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self.global_step is not None:
            global_step = training_util.global_step(sess, self.global_step)
        self._summary_writer.add_summary(summary, global_step)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """A prepared session; stops the services and closes the session on exit."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(
                master=master, config=config, start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001 - reported to the coordinator, re-raised by join
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    try:
                        sess.close()
                    except Exception:  # noqa: BLE001 - as TF: closing never masks the rest
                        pass

    # TF's CamelCase aliases
    PrepareSession = prepare_or_wait_for_session
    StartQueueRunners = start_queue_runners
    StartStandardServices = start_standard_services
    Stop = stop
    RequestStop = request_stop
    Loop = loop
    ShouldStop = should_stop
    StopOnException = stop_on_exception
    WaitForStop = wait_for_stop
    SummaryComputed = summary_computed


class _ServiceThread(LooperThread):
    """A service of the Supervisor: its loop runs with the session's graph as the default
    graph, so the thread is in graph mode (TF's behaviour under TF1's graph mode; with TF2's
    eager default TF's threads cannot reach the graph's tensors)."""

    def run(self):
        with self._sess.graph.as_default():
            super().run()


class SVSummaryThread(_ServiceThread):
    """Runs the summary op (with the global step) every save_summaries_secs."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self):
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            tf_logging.info(f"Recording summary at step {step}.")
            self._sv.summary_writer.add_summary(summary, step)


class SVStepCounterThread(_ServiceThread):
    """Writes `<global_step op>/sec` every save_summaries_secs."""

    def __init__(self, sv, sess, step_counter=None):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess
        self._last_time, self._last_step = 0.0, 0
        self._step_counter = sv.global_step if step_counter is None else step_counter
        self._summary_tag = f"{self._step_counter.op.name}/sec"

    def start_loop(self):
        self._last_time = time.time()
        self._last_step = training_util.global_step(self._sess, self._step_counter)

    def run_loop(self):
        step = training_util.global_step(self._sess, self._step_counter)
        added, self._last_step = step - self._last_step, step
        now = time.time()
        elapsed, self._last_time = now - self._last_time, now
        rate = added / elapsed if elapsed > 0.0 else float("inf")
        if self._sv.summary_writer:
            self._sv.summary_writer.add_summary(
                Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=rate)]), step)


class SVTimerCheckpointThread(_ServiceThread):
    """Saves a checkpoint to save_path every save_model_secs."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self):
        tf_logging.info(f"Saving checkpoint to path {self._sv.save_path}")
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer and self._sv.global_step is not None:
            step = training_util.global_step(self._sess, self._sv.global_step)
            self._sv.summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._sv.save_path),
                step)

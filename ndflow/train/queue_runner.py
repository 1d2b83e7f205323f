"""`tf.compat.v1.train.QueueRunner`, `add_queue_runner`, `start_queue_runners`: threads
running a queue's enqueue ops in a Session until the input ends (TensorFlow's
queue_runner_impl): when every enqueue thread of a runner has seen the queue closed
(OutOfRangeError from an upstream queue), the runner closes its queue, so the consumer gets
OutOfRangeError once the queue drains; a Coordinator stop cancels the queue."""

from __future__ import annotations

import sys
import threading
import weakref

from ndflow.core import context, errors, logging
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.protos.queue_runner_pb import QueueRunnerDef
from ndflow.runtime.session import get_default_session


@tf_export(v1=["train.QueueRunner"])
class QueueRunner:
    """Holds a queue's enqueue ops, each run by its own thread."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None,
                 import_scope=None):
        if context.executing_eagerly():
            raise RuntimeError("QueueRunners are not supported when eager execution is "
                               "enabled. Instead, please use tf.data to get data into your "
                               "model.")
        if queue_runner_def is not None:
            if queue or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            self._init_from_proto(queue_runner_def, import_scope)
            return
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else \
            queue.close(cancel_pending_enqueues=True)
        if queue_closed_exception_types is None:
            queue_closed_exception_types = (errors.OutOfRangeError,)
        elif not queue_closed_exception_types or not all(
                isinstance(t, type) and issubclass(t, errors.OpError)
                for t in queue_closed_exception_types):
            raise TypeError("queue_closed_exception_types, when provided, must be a tuple "
                            f"of tf.error types, but saw: {queue_closed_exception_types}")
        self._queue_closed_exception_types = tuple(queue_closed_exception_types)
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised: list = []

    def _init_from_proto(self, proto, import_scope):
        graph = context.get_default_graph()

        def element(name):
            return graph.as_graph_element(f"{import_scope}/{name}" if import_scope else name)
        self._queue = _ImportedQueue(element(proto.queue_name))
        self._enqueue_ops = [element(n) for n in proto.enqueue_op_name]
        self._close_op = element(proto.close_op_name)
        self._cancel_op = element(proto.cancel_op_name)
        self._queue_closed_exception_types = tuple(
            errors.exception_type_from_error_code(c)
            for c in proto.queue_closed_exception_types) or (errors.OutOfRangeError,)
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    def to_proto(self, export_scope=None):
        """The QueueRunnerDef of this runner (None when its queue is outside
        `export_scope`)."""
        name = self._queue.name
        if export_scope and not name.startswith(export_scope):
            return None

        def strip(n):
            return n[len(export_scope) + 1:] if export_scope and n.startswith(
                export_scope + "/") else n
        return QueueRunnerDef(
            queue_name=strip(name), enqueue_op_name=[strip(op.name) for op in self._enqueue_ops],
            close_op_name=strip(self._close_op.name), cancel_op_name=strip(self._cancel_op.name),
            queue_closed_exception_types=[t.error_code
                                          for t in self._queue_closed_exception_types])

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        return self._exceptions_raised

    @property
    def name(self):
        return self._queue.name

    def _run(self, sess, enqueue_op, coord=None):
        decremented = False
        try:
            enqueue = sess.make_callable(enqueue_op)
            while not (coord and coord.should_stop()):
                try:
                    enqueue()
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:  # the last thread closes
                            try:
                                sess.run(self._close_op)
                            except Exception as e:  # noqa: BLE001 - as TF: ignored
                                logging.vlog("queue_runner", 1, f"Ignored exception: {e}")
                    return
        except Exception as e:  # noqa: BLE001 - reported to the coordinator, as TF
            if coord:
                coord.request_stop(e)
            else:
                logging.error(f"Exception in QueueRunner: {e}")
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001 - as TF: the session may be closed already
            logging.vlog("queue_runner", 1, f"Ignored exception: {e}")

    def create_threads(self, sess, coord=None, daemon=False, start=False) -> list:
        """One thread per enqueue op (plus one cancelling the queue when `coord` stops);
        none when threads of this runner still run for `sess`."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name=f"QueueRunnerThread-{self.name}-{op.name}")
                   for op in self._enqueue_ops]
        if coord:
            threads.append(threading.Thread(
                target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for t in threads:
            if coord:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads


class _ImportedQueue:
    """The queue of a runner rebuilt from a QueueRunnerDef: its creating op's name."""

    def __init__(self, op):
        self.op = op
        self.name = op.name


@tf_export(v1=["train.add_queue_runner"])
def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    """Adds `qr` to a graph collection (started by `start_queue_runners`)."""
    context.add_to_collection(collection, qr)


@tf_export(v1=["train.start_queue_runners"])
def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS) -> list:
    """Starts the threads of every queue runner in `collection`; returns them."""
    if context.executing_eagerly():
        raise RuntimeError("Queues are not compatible with eager execution.")
    if sess is None:
        sess = get_default_session()
        if not sess:
            raise ValueError("Cannot start queue runners: No default session is registered."
                             " Use `with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    session_graph = getattr(sess, "graph", None)
    if session_graph is None:
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {type(sess)}")
    threads = []
    for qr in session_graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


# TF1 code also spells these `tf.compat.v1.train.queue_runner.QueueRunner` etc.: the module.
tf_export(v1=["train.queue_runner"])(sys.modules[__name__])

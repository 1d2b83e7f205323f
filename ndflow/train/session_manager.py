"""`tf.compat.v1.train.SessionManager`: makes a Session whose model is ready, TF1's way.

    sm = SessionManager(ready_op=report_uninitialized_variables(), local_init_op=...)
    sess = sm.prepare_session("", init_op=init, saver=saver, checkpoint_dir=d)

`prepare_session` restores the latest checkpoint of `checkpoint_dir` (or a given path; with
`wait_for_checkpoint`, polling every `recovery_wait_secs`) or else runs `init_op`/`init_fn`,
then runs `local_init_op` once `ready_for_local_init_op` reports nothing, then checks
`ready_op`. `recover_session` only restores; `wait_for_session` polls until another process
(the chief) made the model ready. A ready op returns the names of what is not ready: an empty
result (or an int32 one, or None) means ready. ndflow's sessions are in-process: a "master"
target is accepted and passed to the Session as TensorFlow does.
"""

from __future__ import annotations

import time

import numpy as np

from ndflow.checkpoint.checkpoint_management import get_checkpoint_state
from ndflow.core import context, errors
from ndflow.core import tf_logging as logging
from ndflow.core.api_export import tf_export
from ndflow.runtime.session import Session

_SAVED_MODEL_INITIALIZERS = "saved_model_initializers"


def check_ready(op, sess, msg: str):
    """(ready, message) from running a ready op."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            logging.warning(f"{msg} : error [{e}]")
            raise
        return False, str(e)
    value = None if value is None else np.asarray(value)
    if value is None or value.dtype == np.int32 or value.size == 0:
        return True, None
    names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v)
                      for v in value.ravel())
    return False, "Variables not initialized: " + names


def _maybe_name(obj):
    if obj is None:
        return None
    return getattr(obj, "name", f"<no name for {obj!r}>")


def restore_and_run_initializers(sess, saver, path: str) -> None:
    """Restores `path`, then runs the graph's SavedModel initializers, as TF."""
    saver.restore(sess, path)
    initializers = sess.graph.get_collection(_SAVED_MODEL_INITIALIZERS)
    if initializers:
        sess.run(initializers)


@tf_export(v1=["train.SessionManager"])
class SessionManager:
    """Creates sessions and checks the model is ready in them (module docstring)."""

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else context.get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._target = None
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             f"local_init_op , ready_for_local_init_op "
                             f"[{ready_for_local_init_op}]")

    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None,
                            checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                            max_wait_secs=7200, config=None):
        self._target = master
        sess = Session(self._target, graph=self._graph, config=config)
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            restore_and_run_initializers(sess, saver, checkpoint_filename_with_path)
            return sess, True
        waited = 0
        ckpt = get_checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if wait_for_checkpoint and waited < max_wait_secs:
                logging.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                waited += self._recovery_wait_secs
                ckpt = get_checkpoint_state(checkpoint_dir)
            else:
                return sess, False
        restore_and_run_initializers(sess, saver, ckpt.model_checkpoint_path)
        saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
        return sess, True

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """A session with the model restored or initialized, local init run, and ready."""
        sess, loaded = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
            config=config)
        if not loaded:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        ok, msg = self._try_run_local_init_op(sess)
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready for local_init.  "
                               f"Init op: {_maybe_name(init_op)}, init fn: {init_fn}, "
                               f"error: {msg}")
        ready, msg = self._model_ready(sess)
        if not ready:
            raise RuntimeError(f"Init operations did not make model ready.  Init op: "
                               f"{_maybe_name(init_op)}, init fn: {init_fn}, local_init_op: "
                               f"{self._local_init_op}, error: {msg}")
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """(session, whether it was restored from a checkpoint and is ready)."""
        sess, loaded = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
            config=config)
        ok, msg = self._try_run_local_init_op(sess)
        if not loaded:
            return sess, False
        source = checkpoint_dir or checkpoint_filename_with_path
        if not ok:
            logging.info(f"Restoring model from {source} did not make model ready for local "
                         f"init: {msg}")
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            logging.info(f"Restoring model from {source} did not make model ready: {msg}")
            return sess, False
        logging.info(f"Restored model from {source}")
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """A session in which the model is ready, polling every `recovery_wait_secs`; a
        DeadlineExceededError after `max_wait_secs`."""
        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        start = time.time()
        while True:
            sess = Session(self._target, graph=self._graph, config=config)
            not_ready = None
            ok, not_ready_local = self._try_run_local_init_op(sess)
            if ok:
                ready, not_ready = self._model_ready(sess)
                if ready:
                    return sess
            try:
                sess.close()
            except Exception:  # noqa: BLE001 - closing a session never fails the wait (TF)
                pass
            remaining = max(0.0, max_wait_secs - (time.time() - start))
            if remaining - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(  # (never with an infinite wait)
                    None, None, f"Session was not ready after waiting {int(max_wait_secs)} "
                                "secs.")
            logging.info(f"Waiting for model to be ready.  Ready_for_local_init_op:  "
                         f"{not_ready_local}, ready: {not_ready}")
            time.sleep(self._recovery_wait_secs)

    def _model_ready(self, sess):
        return check_ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess):
        return check_ready(self._ready_for_local_init_op, sess,
                           "Model not ready for local init")

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        ready, msg = self._model_ready_for_local_init(sess)
        if not ready:
            return False, msg
        logging.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        logging.info("Done running local_init_op.")
        return True, None

"""`tf.compat.v1.train.MonitoredTrainingSession`, `MonitoredSession`, `Scaffold` and
`ChiefSessionCreator`: the TF1 training loop driver.

    with MonitoredTrainingSession(checkpoint_dir=d, hooks=[StopAtStepHook(last_step=n)]) as s:
        while not s.should_stop():
            s.run(train_op)

The Scaffold completes the graph (init op, local init op, merged summaries, a Saver) and
finalizes it. The chief's session creator restores the latest checkpoint of
`checkpoint_dir` if there is one, otherwise runs the init op. Each `run` adds the hooks'
`SessionRunArgs` fetches/feeds to the caller's in ONE `Session.run`, then gives every hook its
results; a hook's `request_stop()` makes `should_stop()` true. Leaving the `with` block on
OutOfRangeError (an input exhausted) ends the session normally: hooks' `end()` run (the final
checkpoint) and the error is swallowed, as TensorFlow does.

Not here (TF's distributed pieces): workers/`master` targets, session recovery after an
AbortedError, `ready_op` checks, `run_step_fn`.
"""

from __future__ import annotations

from ndflow.checkpoint.checkpoint_management import latest_checkpoint
from ndflow.checkpoint.saver import Saver
from ndflow.core import context, errors
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.ops.variables import global_variables_initializer, local_variables_initializer
from ndflow.runtime.session import Session
from ndflow.summary.v1_summary_ops import merge_all
from ndflow.train.coordinator import Coordinator
from ndflow.train.queue_runner import start_queue_runners
from ndflow.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues
from ndflow.train.session_run_hooks import (
    CheckpointSaverHook,
    StepCounterHook,
    SummarySaverHook,
)

_USE_DEFAULT = object()


@tf_export(v1=["train.Scaffold"])
class Scaffold:
    """The graph's init op, local init op, summary op and saver; missing ones are built by
    `finalize()` (from the graph's collections when they hold one, as TF)."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            c = copy_from_scaffold
            init_op = init_op or c.init_op
            init_feed_dict = init_feed_dict or c.init_feed_dict
            init_fn = init_fn or c._user_init_fn
            local_init_op = local_init_op or c.local_init_op
            local_init_feed_dict = local_init_feed_dict or c.local_init_feed_dict
            summary_op = summary_op or c.summary_op
            saver = saver or c.saver
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._user_init_fn = init_fn
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self):
        """Creates the missing ops and finalizes the default graph."""
        graph = context.get_default_graph()
        if self._init_op is None:
            self._init_op = _from_collection(graph, GraphKeys.INIT_OP,
                                             global_variables_initializer)
        if self._local_init_op is None:
            self._local_init_op = _from_collection(graph, GraphKeys.LOCAL_INIT_OP,
                                                   local_variables_initializer)
        if self._summary_op is None:
            self._summary_op = _from_collection(graph, "summary_op", merge_all)  # SUMMARY_OP
        if self._saver is None:
            self._saver = _from_collection(
                graph, GraphKeys.SAVERS, lambda: Saver(sharded=True, allow_empty=True))
        graph.finalize()
        return self

    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    init_fn = property(lambda self: self._user_init_fn)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    local_init_feed_dict = property(lambda self: self._local_init_feed_dict)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)

    @staticmethod
    def default_local_init_op():
        return local_variables_initializer()


def _from_collection(graph, key: str, make):
    items = graph.get_collection(key)
    if len(items) > 1:
        raise RuntimeError(f"More than one item in the collection \"{key}\". Please indicate "
                           f"which one to use by passing it to the tf.Scaffold constructor.")
    if items:
        return items[0]
    op = make()
    if op is not None:
        graph.add_to_collection(key, op)
    return op


@tf_export(v1=["train.SessionCreator"])
class SessionCreator:
    """A factory of tf.Session."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for "
                                  f"{type(self).__name__}.")


@tf_export(v1=["train.ChiefSessionCreator"])
class ChiefSessionCreator(SessionCreator):
    """Creates a session whose variables are restored from the latest checkpoint of
    `checkpoint_dir` (or `checkpoint_filename_with_path`), else initialized."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        scaffold = self._scaffold.finalize()
        sess = Session(self._master, graph=context.get_default_graph(), config=self._config)
        path = self._checkpoint_filename_with_path or (
            latest_checkpoint(self._checkpoint_dir) if self._checkpoint_dir else None)
        if path:
            scaffold.saver.restore(sess, path)
        else:
            if scaffold.init_op is not None:
                sess.run(scaffold.init_op, feed_dict=scaffold.init_feed_dict)
            if scaffold.init_fn is not None:
                scaffold.init_fn(scaffold, sess)
        if scaffold.local_init_op is not None:
            sess.run(scaffold.local_init_op, feed_dict=scaffold.local_init_feed_dict)
        return sess


@tf_export(v1=["train.MonitoredSession"])
class MonitoredSession:
    """A session that runs hooks around every `run` and knows when to stop."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._graph = context.get_default_graph()
        self._sess = (session_creator or ChiefSessionCreator()).create_session()
        # As TF's _CoordinatedSession: the graph's queue runners (tf.compat.v1.train.batch
        # and friends) run under a Coordinator, stopped and joined by close().
        self._coord = Coordinator()
        self._stop_grace_period_secs = stop_grace_period_secs
        self._threads = start_queue_runners(self._sess, self._coord)
        self._should_stop = False
        self._closed = False
        for h in self._hooks:
            h.after_create_session(self._sess, self._coord)

    @property
    def graph(self):
        return self._graph

    def should_stop(self) -> bool:
        return self._closed or self._should_stop or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs `fetches` plus every hook's SessionRunArgs in one Session.run."""
        if self._closed:
            raise RuntimeError("Run called even after should_stop requested.")
        context_ = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        requests = [h.before_run(context_) for h in self._hooks]
        all_fetches = {"caller": fetches}
        feeds = dict(feed_dict or {})
        hook_feeds: dict = {}
        for i, request in enumerate(requests):
            if request is None:
                continue
            if request.fetches is not None:
                all_fetches[i] = request.fetches
            for tensor, value in (request.feed_dict or {}).items():
                if tensor in hook_feeds:
                    raise RuntimeError("Same tensor is fed by two hooks.")
                if tensor in feeds:
                    raise RuntimeError("Same tensor is fed by a SessionRunHook and user.")
                hook_feeds[tensor] = value
        feeds.update(hook_feeds)
        outputs = self._sess.run(all_fetches, feed_dict=feeds or None, options=options,
                                 run_metadata=run_metadata)
        for i, h in enumerate(self._hooks):
            h.after_run(context_, SessionRunValues(results=outputs.get(i), options=options,
                                                   run_metadata=run_metadata))
        self._should_stop = self._should_stop or context_.stop_requested
        return outputs["caller"]

    def close(self) -> None:
        self._close(run_end_hooks=True)

    def _close(self, run_end_hooks: bool) -> None:
        if self._closed:
            return
        try:
            if run_end_hooks:
                for h in self._hooks:
                    h.end(self._sess)
        finally:
            self._closed = True
            self._coord.request_stop()
            try:
                self._coord.join(self._threads, self._stop_grace_period_secs,
                                 ignore_live_threads=True)  # re-raises a runner's error
            finally:
                self._sess.close()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        ends_normally = exception_type in (None, errors.OutOfRangeError, StopIteration)
        self._close(run_end_hooks=ends_normally)
        return exception_type in (errors.OutOfRangeError, StopIteration)


@tf_export(v1=["train.MonitoredTrainingSession"])
def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None,  # noqa: N802
                             scaffold=None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=_USE_DEFAULT,
                             save_summaries_steps=_USE_DEFAULT,
                             save_summaries_secs=_USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=_USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A MonitoredSession for training: restores from / checkpoints into `checkpoint_dir`
    (every 600 s by default, or `save_checkpoint_steps`), writes summaries every 100 steps and
    the step rate to `summary_dir` (default `checkpoint_dir`), runs `hooks`."""
    if not is_chief:
        raise errors.UnimplementedError(None, None, "MonitoredTrainingSession: only the chief "
                                        "(is_chief=True) runs in ndflow's in-process sessions")
    if save_summaries_steps is _USE_DEFAULT and save_summaries_secs is _USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    else:
        save_summaries_steps = None if save_summaries_steps is _USE_DEFAULT \
            else save_summaries_steps
        save_summaries_secs = None if save_summaries_secs is _USE_DEFAULT \
            else save_summaries_secs
    if save_checkpoint_secs is _USE_DEFAULT and save_checkpoint_steps is _USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    else:
        save_checkpoint_secs = None if save_checkpoint_secs is _USE_DEFAULT \
            else save_checkpoint_secs
        save_checkpoint_steps = None if save_checkpoint_steps is _USE_DEFAULT \
            else save_checkpoint_steps
    scaffold = scaffold or Scaffold()
    all_hooks = list(chief_only_hooks or []) + list(hooks or [])
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir,
                                             every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or \
                (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                              save_secs=save_summaries_secs,
                                              output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0) or
                           (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                             save_secs=save_checkpoint_secs, scaffold=scaffold,
                                             save_graph_def=save_graph_def))
    creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                  checkpoint_dir=checkpoint_dir)
    return MonitoredSession(session_creator=creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)

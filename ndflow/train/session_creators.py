"""`tf.compat.v1.train.WorkerSessionCreator` (a non-chief's session: waits, through a
SessionManager, until the model is ready) and `SingularMonitoredSession` (a MonitoredSession
for one process, always the chief, that gives access to its raw Session)."""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.train.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    Scaffold,
    SessionCreator,
)
from ndflow.train.session_manager import SessionManager


@tf_export(v1=["train.WorkerSessionCreator"])
class WorkerSessionCreator(SessionCreator):
    """Creates a session for a worker: finalizes the scaffold, then waits (up to
    `max_wait_secs`) for its ready op to report the model ready, running its local init op."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op,
                local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=context.get_default_graph())
        return self._session_manager

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)


@tf_export(v1=["train.SingularMonitoredSession"])
class SingularMonitoredSession(MonitoredSession):
    """A MonitoredSession whose session the chief creates (restoring `checkpoint_dir` or
    `checkpoint_filename_with_path`, else initializing); `raw_session()` is that Session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(session_creator=creator, hooks=hooks,
                         stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        """The underlying Session (runs without the hooks)."""
        return self._sess

"""`tf.compat.v1.train.SessionRunHook` and the values it exchanges with a MonitoredSession.

Around every `MonitoredSession.run`, each hook's `before_run(run_context)` may return
`SessionRunArgs` (extra fetches and feeds, run in the same `Session.run` call as the
caller's), and `after_run(run_context, run_values)` receives their results; a hook stops the
loop with `run_context.request_stop()`. `begin()` runs before the graph is finalized,
`after_create_session(session, coord)` once the variables are initialized or restored, and
`end(session)` when the session closes normally.
"""

from __future__ import annotations

import collections

from ndflow.core.api_export import tf_export


@tf_export(v1=["train.SessionRunHook"])
class SessionRunHook:
    """Hook to extend calls to MonitoredSession.run()."""

    def begin(self):
        """Called once before using the session; the graph can still be changed here."""

    def after_create_session(self, session, coord):
        """Called when the session has been created (variables initialized or restored)."""

    def before_run(self, run_context):
        """Called before each `run()`; may return SessionRunArgs to add to the call."""
        return None

    def after_run(self, run_context, run_values):
        """Called after each `run()` with the results of this hook's SessionRunArgs."""

    def end(self, session):
        """Called at the end of the session (not when `run()` raised)."""


@tf_export(v1=["train.SessionRunArgs"])
class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What a hook adds to a `Session.run` call: `fetches` (any structure `run` accepts),
    `feed_dict` and `options`."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


@tf_export(v1=["train.SessionRunValues"])
class SessionRunValues(collections.namedtuple("SessionRunValues",
                                              ["results", "options", "run_metadata"])):
    """The results of a hook's SessionRunArgs fetches (same structure), options, metadata."""


@tf_export(v1=["train.SessionRunContext"])
class SessionRunContext:
    """The call being made (`original_args`), the session, and a way to stop the loop."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        """Makes `MonitoredSession.should_stop()` true after this call."""
        self._stop_requested = True

"""Horovod's TF1 `BroadcastGlobalVariablesHook`: a SessionRunHook that broadcasts the global
variables from `root_rank` right after the session is created (MonitoredTrainingSession).
It implements SessionRunHook's interface (begin / after_create_session / before_run /
after_run / end) without deriving from it."""

from __future__ import annotations

from ndflow.distribute.horovod import tensor_ops


class BroadcastGlobalVariablesHook:
    def __init__(self, root_rank: int, device=""):
        self.root_rank = root_rank
        self.bcast_op = None

    def begin(self):
        self.bcast_op = tensor_ops.broadcast_global_variables(self.root_rank)

    def after_create_session(self, session, coord):
        session.run(self.bcast_op)

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass

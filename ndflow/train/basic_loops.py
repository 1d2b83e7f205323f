"""`tf.compat.v1.train.basic_train_loop`: calls `train_step_fn(sess, *args, **kwargs)` in a
Supervisor's managed session until the Supervisor stops; an AbortedError (a restarted server,
in TF's distributed runtime) starts a new session and goes on."""

from __future__ import annotations

from ndflow.core import errors
from ndflow.core.api_export import tf_export


@tf_export(v1=["train.basic_train_loop"])
def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Runs training steps until `supervisor.should_stop()`."""
    args = list(args) if args is not None else []
    kwargs = dict(kwargs) if kwargs is not None else {}
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except errors.AbortedError:
            should_retry = True

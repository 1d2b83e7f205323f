"""The deadline of the current thread's `Session.run` (`RunOptions(timeout_in_ms=...)`),
read by kernels that wait (queue enqueues and dequeues, readers taking a file name), so a
TF1 input pipeline that stalls fails with DeadlineExceededError instead of hanging."""

from __future__ import annotations

import contextlib
import threading
import time

from ndflow.core.errors import CancelledError, DeadlineExceededError

_local = threading.local()


@contextlib.contextmanager
def deadline_after(timeout_ms: int):
    """Sets this thread's deadline to `timeout_ms` from now (no deadline when <= 0)."""
    old = getattr(_local, "deadline", None)
    _local.deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
    try:
        yield
    finally:
        _local.deadline = old


def current() -> float | None:
    """This thread's deadline (a time.monotonic() value), or None."""
    return getattr(_local, "deadline", None)


def earliest(*deadlines) -> float | None:
    """The earliest of the given deadlines (None entries ignored) and this thread's."""
    known = [d for d in (*deadlines, current()) if d is not None]
    return min(known) if known else None


def wait(cond, ready, closed, deadline: float | None = None) -> None:
    """Waits on `cond` (held by the caller) until `ready()`: CancelledError once `closed()`,
    DeadlineExceededError past the earliest of `deadline` and this thread's (the queues' and
    accumulators' waits)."""
    deadline = earliest(deadline)
    while not ready():
        if closed():
            raise CancelledError(None, None, "Session has been closed.")
        if deadline is None:
            cond.wait()
        else:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DeadlineExceededError(None, None, "Timed out waiting for notification")
            cond.wait(left)

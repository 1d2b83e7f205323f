"""Kernels of the mutex ops behind `tf.CriticalSection` (ops/critical_section_ops.py).

A MutexV2 handle's runtime value is a `Mutex`, one per (container, shared_name or node name)
in the runtime context (an eagerly made mutex without a shared name is its kernel's own), so
every plan reaching the same shared name locks the same mutex. MutexLock waits for the mutex
(bounded by a Session's run deadline) and outputs a `MutexLockValue`, the variant that holds
it; ConsumeMutexLock, its one reader, releases it. As in TensorFlow, where the lock is released
when the last reference to that variant goes, a lock value that is dropped without being
consumed (a run that failed between the two ops) releases the mutex when it is freed.

A plan runs a MutexLock and its ConsumeMutexLock on the thread that called it (stateful ops
run on the caller's thread, runtime/parallel_plan.py), and `CriticalSection.execute` never
nests the same section, so a thread asking again for a mutex it still holds through an
unconsumed lock is one whose earlier run failed while that lock value is kept alive by the
error's traceback: that stale lock is released first instead of deadlocking the thread.
"""

from __future__ import annotations

import threading
import time
import weakref

from ndflow.core import run_deadline
from ndflow.core.errors import DeadlineExceededError, InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.kernels.shared_resources import creator_kernel
from ndflow.ops import critical_section_ops as ops


class Mutex:
    """A MutexV2 resource: held by one MutexLockValue at a time."""

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self._holder = None   # weakref to the MutexLock value holding it

    def __repr__(self):
        return f"<Mutex {self.name}>"

    def lock(self, deadline: float | None) -> MutexLockValue:
        holder = self._holder() if self._holder is not None else None
        if holder is not None and holder.thread == threading.get_ident():
            holder.release()   # left by a failed run of this thread (see the module doc)
        deadline = run_deadline.earliest(deadline)
        if deadline is None:
            self._lock.acquire()
        else:
            left = deadline - time.monotonic()
            if left <= 0 or not self._lock.acquire(timeout=left):
                raise DeadlineExceededError(None, None, "Timed out waiting for notification")
        value = MutexLockValue(self)
        self._holder = weakref.ref(value)
        return value

    def _release(self, value: MutexLockValue) -> None:
        if self._holder is not None and self._holder() is value:
            self._holder = None
        self._lock.release()


class MutexLockValue:
    """The value of a MutexLock op: while it is alive and not consumed, its mutex is held."""

    __slots__ = ("mutex", "thread", "_released", "__weakref__")

    def __init__(self, mutex: Mutex):
        self.mutex = mutex
        self.thread = threading.get_ident()
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self.mutex._release(self)

    @property
    def released(self) -> bool:
        return self._released

    def __del__(self):
        self.release()

    def __repr__(self):
        return f"<MutexLock of {self.mutex.name}>"


@kernel(ops.MutexV2)
def _mutex(node):
    return creator_kernel(node, "mutex", ops.ANONYMOUS_PREFIX, Mutex)


@kernel(ops.MutexLock)
def _mutex_lock(node):
    def run(mutex):
        if not isinstance(mutex, Mutex):
            raise InvalidArgumentError(None, None, "Trying to lock a resource that is not a "
                                       f"Mutex: {type(mutex).__name__}")
        return mutex.lock(None)
    return run


@kernel(ops.ConsumeMutexLock)
def _consume_mutex_lock(node):
    def run(lock):
        if not isinstance(lock, MutexLockValue):
            raise InvalidArgumentError(None, None, "Expected input to contain a SharedLockReleaser"
                                       f" object, but saw: {type(lock).__name__}")
        lock.release()
    return run

"""Which strategy is current and whether code runs in a replica or in cross-replica context
(TensorFlow's distribution_strategy_context): a per-thread stack of frames.

- No strategy: the default strategy and its default replica context (one replica).
- Inside `strategy.scope()`: that strategy, cross-replica context (`get_replica_context()` is
  None), and its variable creator.
- Inside `strategy.run(fn)`: fn runs in a replica context, one per replica (its own thread).
- Inside `strategy.extended.update(var, fn)`: fn runs once per component of a mirrored
  variable, which then reads and writes that component (`update_replica_id()`).
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

from ndflow.core.api_export import tf_export


@dataclass
class _Frame:
    strategy: object
    replica_context: object | None  # None: cross-replica context


_local = threading.local()
_default = {}  # "strategy" and "replica_context": set by distribute_lib when it loads


def _stack() -> list:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = [_Frame(_default["strategy"], _default["replica_context"])]
    return stack


def set_default(strategy, replica_context) -> None:
    _default["strategy"], _default["replica_context"] = strategy, replica_context


def default_strategy():
    return _default["strategy"]


@contextlib.contextmanager
def frame(strategy, replica_context):
    stack = _stack()
    stack.append(_Frame(strategy, replica_context))
    try:
        yield
    finally:
        stack.pop()


def current_frame() -> _Frame:
    return _stack()[-1]


@tf_export("distribute.get_strategy")
def get_strategy():
    """The current `tf.distribute.Strategy` (the default strategy outside any scope)."""
    return current_frame().strategy


@tf_export("distribute.has_strategy")
def has_strategy() -> bool:
    """Whether a strategy other than the default one is current."""
    return current_frame().strategy is not _default["strategy"]


@tf_export("distribute.in_cross_replica_context")
def in_cross_replica_context() -> bool:
    """True inside `strategy.scope()` and outside `strategy.run` (not in a replica)."""
    return current_frame().replica_context is None


@tf_export("distribute.get_replica_context")
def get_replica_context():
    """The current `ReplicaContext`; None in cross-replica context."""
    return current_frame().replica_context


@tf_export("distribute.experimental_set_strategy")
def experimental_set_strategy(strategy) -> None:
    """Makes `strategy` current for this thread (as entering its scope without leaving)."""
    old = getattr(_local, "set_scope", None)
    if old is not None:
        old.__exit__(None, None, None)
        _local.set_scope = None
    if strategy is not None:
        scope = strategy.scope()
        scope.__enter__()
        _local.set_scope = scope


# -- mirrored variables' update context --------------------------------------------------------

def update_replica_id():
    """The component `extended.update` is writing now (None outside an update)."""
    return getattr(_local, "update_replica", None)


@contextlib.contextmanager
def update_context(replica_id: int):
    saved = update_replica_id()
    _local.update_replica = replica_id
    try:
        yield
    finally:
        _local.update_replica = saved

"""Running one function per replica (`MirroredStrategy.run`), as TensorFlow's mirrored_run:
each replica runs in its own thread under `tf.device(its device)`, one thread at a time.
When every replica has reached `merge_call` (or finished), the main thread runs the merge
function once in cross-replica context on the regrouped arguments and hands each replica
its part. Inside `tf.function` the replicas trace into the same graph (replica i > 0 under
the name scope `replica_i`), so a traced step holds one tower per device.

The threads share the graph being built: its name/device/control-dependency scopes are
saved when a thread pauses and restored when it resumes, so each replica keeps its own.
"""

from __future__ import annotations

import threading

from ndflow.core import context, scopes
from ndflow.distribute import distribution_context as dc
from ndflow.distribute import values as values_lib
from ndflow.distribute.distribute_lib import ReplicaContext
from ndflow.ops.variable_creators import set_variable_creator_stack, variable_creator_stack


class _Stopped(BaseException):
    """Ends a replica thread when another replica failed (not an Exception: user code
    catching Exception does not swallow it)."""


def _graph_scopes():
    if context.executing_eagerly():
        return None
    g = context.get_default_graph()
    return g, g._name_stack, list(g._device_stack), [list(d) for d in g._control_deps]


def _restore_graph_scopes(saved) -> None:
    if saved is None:
        return
    g, names, devs, deps = saved
    g._name_stack, g._device_stack, g._control_deps = names, list(devs), [list(d) for d in deps]


class _ReplicaThread(threading.Thread):
    def __init__(self, strategy, replica_id, device, fn, args, kwargs, parent):
        super().__init__(name=f"replica_{replica_id}", daemon=True)
        self.strategy, self.replica_id, self.device = strategy, replica_id, device
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.parent = parent  # the caller's thread-local state, copied in run()
        self.should_run, self.has_paused = threading.Event(), threading.Event()
        self.stopped = False
        self.done = False
        self.result = self.error = None
        self.merge = None  # (merge_fn, args, kwargs) while waiting in merge_call
        self.merge_result = None
        self.saved_scopes = None

    def _wait_turn(self) -> None:
        self.should_run.wait()
        self.should_run.clear()
        if self.stopped:
            raise _Stopped()

    def run(self) -> None:
        try:
            self._wait_turn()
            state = context.state()
            (state.graph_stack, state.device_stack, state.name_scope, state.seed,
             state.seed_counter, creators) = self.parent
            set_variable_creator_stack(creators)
            ctx = ReplicaContext(self.strategy, self.replica_id)
            ctx._merge_hook = self.merge_call
            with dc.frame(self.strategy, ctx), scopes.device(self.device):
                if self.replica_id > 0 and not context.executing_eagerly():
                    with scopes.name_scope(f"replica_{self.replica_id}"):
                        self.result = self.fn(*self.args, **self.kwargs)
                else:
                    self.result = self.fn(*self.args, **self.kwargs)
        except _Stopped:
            pass
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            self.error = e
        finally:
            self.done = True
            self.has_paused.set()

    def merge_call(self, merge_fn, args, kwargs):
        self.merge = (merge_fn, args, kwargs)
        self.saved_scopes = _graph_scopes()
        self.has_paused.set()
        self._wait_turn()
        _restore_graph_scopes(self.saved_scopes)
        return self.merge_result


def call_for_each_replica(strategy, fn, args, kwargs):
    devices = strategy.extended.worker_devices
    state = context.state()
    parent = (list(state.graph_stack), list(state.device_stack), state.name_scope,
              state.seed, state.seed_counter, list(variable_creator_stack()))
    threads = [_ReplicaThread(strategy, i, d, fn, values_lib.select_replica(i, args),
                              values_lib.select_replica(i, kwargs), parent)
               for i, d in enumerate(devices)]
    main_scopes = _graph_scopes()
    for t in threads:
        t.start()
    try:
        while True:
            for t in threads:
                t.should_run.set()
                t.has_paused.wait()
                t.has_paused.clear()
                _restore_graph_scopes(main_scopes)
                if t.error is not None:
                    raise t.error
            if all(t.done for t in threads):
                break
            if any(t.done for t in threads):
                raise RuntimeError("Some replicas made a different number of "
                                   "replica_context().merge_call() calls.")
            _merge(strategy, threads)
    finally:
        for t in threads:
            if not t.done:
                t.stopped = True
                t.should_run.set()
        for t in threads:
            t.join(timeout=5)
        _restore_graph_scopes(main_scopes)
    return values_lib.regroup([t.result for t in threads])


def _merge(strategy, threads) -> None:
    merge_fn = threads[0].merge[0]
    args = values_lib.regroup([list(t.merge[1]) for t in threads])
    kwargs = values_lib.regroup([dict(t.merge[2]) for t in threads])
    with dc.frame(strategy, None), strategy.extended.creator_scope():
        if threads[0].saved_scopes is not None:
            _restore_graph_scopes(threads[0].saved_scopes)  # TF: replica 0's name scope
        result = merge_fn(strategy, *args, **kwargs)
    for i, t in enumerate(threads):
        t.merge_result = values_lib.select_replica(i, result)

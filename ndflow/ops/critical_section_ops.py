"""`tf.CriticalSection`: runs functions under a mutex resource, one execution at a time.

TensorFlow's ops (kernels in kernels/mutex_ops.py):

    MutexV2() -> resource                        the mutex (container, shared_name)
    MutexLock(mutex: resource) -> variant        waits for the mutex; the lock is the variant
    ConsumeMutexLock(mutex_lock: variant)        the lock's one reader: releases the mutex

`execute(fn)` builds, as TensorFlow does, MutexLock -> fn's ops (all under a control
dependency on the lock) -> ConsumeMutexLock (after fn's results) -> the results' identities
(after the release). Eagerly the three ops run in that order, so a thread waits at the lock
while another is inside fn. In graphs (tf.function, TF1 Sessions) the order holds in every
plan: a plan runs ops in creation order, where the lock comes before fn's ops and the consume
after their results, and when a plan runs branches on several inter-op threads these are
stateful ops, which run on the calling thread as barriers (runtime/parallel_plan.py); fn's
ops wait for the lock through their control dependency. Two executions of one section in one
graph therefore run one after the other, and concurrent calls of a graph (threads calling one
tf.function) wait for each other at the lock. The ops that fn's ops read are made control
inputs of the lock (TensorFlow's rule against deadlocks: everything fn needs from outside is
computed before the lock is taken). Graph passes that move stateful ops keep fn's inside: the
grouped optimizer updates (passes/grouped_updates.py) stop at a lock and at a release.

TensorFlow's checks: a section executed inside its own execution (directly, or through an op
fn makes on its mutex) is a ValueError, and, unless both allow it with
`exclusive_resource_access=False`, two sections of one graph may not touch the same resource
(variable). An eager section without a `shared_name` has its own mutex (TensorFlow 2.21's
eager sections without one all share a single mutex, so that nesting two of them deadlocks
there); when fn raises, the lock is released before the error propagates (TensorFlow releases
it when the error's traceback is freed).
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import threading

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.dtypes import resource
from ndflow.core.graph import Operation
from ndflow.core.nest import flatten, map_structure, pack_sequence_as
from ndflow.core.scopes import control_dependencies, init_scope, name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import group, identity
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.op_def import op_def
from ndflow.ops.tensor_array_ops import TensorArray

# An eagerly made section with no shared_name gets this prefix plus a counter: its MutexV2
# kernel then owns one fresh mutex.
ANONYMOUS_PREFIX = "_ndflow_anonymous_mutex_"
_anonymous_ids = itertools.count()

CRITICAL_SECTIONS = "critical_sections"
CRITICAL_SECTION_EXECUTIONS = "critical_section_executions"

MutexV2 = op_def(
    "MutexV2", outputs=["resource: resource"],
    attrs=["container: string = ''", "shared_name: string = ''"],
    shape=lambda ctx: [TensorShape([])], stateful=True, gradient_undefined=True,
    doc="Creates a Mutex resource that can be locked by `MutexLock`.")
MutexLock = op_def(
    "MutexLock", inputs=["mutex: resource"], outputs=["mutex_lock: variant"],
    shape=lambda ctx: [TensorShape([])], stateful=True, gradient_undefined=True,
    doc="Locks a mutex resource; the lock is held while the output variant lives.")
ConsumeMutexLock = op_def(
    "ConsumeMutexLock", inputs=["mutex_lock: variant"], shape=lambda ctx: [], stateful=True,
    gradient_undefined=True, doc="Consumes (releases) the lock created by `MutexLock`.")


class _ExecutionSignature(collections.namedtuple(
        "_ExecutionSignature", ("op", "handle", "resources", "exclusive_resource_access"))):
    """An execution's MutexLock op, its section's handle and the resources fn touched."""


_stack = threading.local()


def _critical_section_stack() -> list:
    if not hasattr(_stack, "value"):
        _stack.value = []
    return _stack.value


@contextlib.contextmanager
def _push_critical_section_stack(signature):
    """Marks this thread as running inside the section `signature` (nesting it is an error:
    the inner lock would wait for the outer one forever)."""
    stack = _critical_section_stack()
    if signature in stack:
        raise ValueError(f"Attempting to lock a CriticalSection (signature={signature}) in "
                         "which we are already running. This is illegal and may cause "
                         "deadlocks.")
    stack.append(signature)
    try:
        yield
    finally:
        received = stack.pop()
        if received != signature:
            raise RuntimeError(f"CriticalSection stack inconsistency: expected signature "
                               f"{signature} but received {received}")


def _identity(x):
    """An identity that knows TensorArrays, Operations, IndexedSlices and composites."""
    if isinstance(x, TensorArray):
        return x.identity()
    if isinstance(x, Operation):
        return group(x)
    if x is None and context.executing_eagerly():
        return None
    if isinstance(x, IndexedSlices):
        return IndexedSlices(*[None if c is None else identity(c)
                               for c in (x.values, x.indices, x.dense_shape)])
    if isinstance(x, CompositeTensor):
        return x._from_components_like([identity(c) for c in x._to_components()])
    if isinstance(x, Tensor) or context.executing_eagerly():
        return identity(x)
    if x is None:   # TF's graph-mode Identity of None
        raise ValueError("Tried to convert 'input' to a tensor and failed. Error: None values "
                         "not supported.")
    try:
        return identity(convert_to_tensor(x))
    except ValueError:   # TF's graph-mode conversion error for a value it cannot convert
        raise TypeError(f"Failed to convert elements of {x!r} to Tensor. Consider casting "
                        "elements to a supported type. See https://www.tensorflow.org/"
                        "api_docs/python/tf/dtypes for supported TF dtypes.") from None


_STRUCTURED = (Tensor, Operation, IndexedSlices, TensorArray, CompositeTensor)


def _control_op(x):
    """The op a control dependency on result `x` waits for (graphs)."""
    if isinstance(x, TensorArray):
        return x.flow.op
    if isinstance(x, CompositeTensor):
        return group(*[c.op for c in x._to_components()])
    return x if isinstance(x, Operation) else x.op


def _gated(tensors: list) -> list:
    """TF's `tf.tuple`: each result gated on all of them having been computed (graphs)."""
    if context.executing_eagerly():
        return list(tensors)
    with name_scope(None, "tuple"):
        tensors = [t if t is None or isinstance(t, _STRUCTURED) else convert_to_tensor(t)
                   for t in tensors]
        ops = {id(op): op for op in (_control_op(t) for t in tensors if t is not None)}
        gate = group(*ops.values())
        out = []
        with control_dependencies([gate]):
            for t in tensors:
                if isinstance(t, Operation):
                    out.append(group(t))
                elif t is None:
                    out.append(None)
                else:
                    out.append(_identity(t))
        return out


@tf_export("CriticalSection")
class CriticalSection:
    """A resource that runs the functions given to `execute` in serial order:

        cs = tf.CriticalSection()
        v = tf.Variable(0)
        def count():
            value = v.read_value()
            with tf.control_dependencies([value]):
                with tf.control_dependencies([v.assign_add(1)]):
                    return tf.identity(value)
        cs.execute(count)   # from any number of threads: each sees a distinct count
    """

    def __init__(self, name=None, shared_name=None, critical_section_def=None,
                 import_scope=None):
        if critical_section_def and name is not None:
            raise ValueError(f"Arguments critical_section_def={critical_section_def} and "
                             f"shared_name={shared_name} are mutually exclusive. Please only "
                             "specify one of them.")
        if critical_section_def:
            raise ValueError("Argument `critical_section_def` is not supported.")
        self._init_from_args(name, shared_name)

    def _init_from_args(self, name, shared_name) -> None:
        with init_scope():
            if context.executing_eagerly():
                attr = shared_name if shared_name else \
                    f"{ANONYMOUS_PREFIX}{next(_anonymous_ids)}"
                self._handle = apply_op(MutexV2, [], {"container": "", "shared_name": attr},
                                        name=name).outputs[0]
                self._signature = ("", shared_name or id(self._handle), self._handle.device)
                return
            graph = context.get_default_graph()
            # TF names the MutexV2 op after the section's name scope, which it shares by
            # default: "CriticalSection", shared_name "CriticalSection/"
            scope = graph.unique_name(name or "CriticalSection", mark_as_used=False)
            if shared_name is None:
                shared_name = scope + "/"
            self._handle = apply_op(MutexV2, [], {"container": "", "shared_name": shared_name},
                                    name=scope.rsplit("/", 1)[-1]).outputs[0]
            self._signature = ("", shared_name or id(self._handle),
                               self._handle.op.device or None)
            graph.add_to_collections([CRITICAL_SECTIONS], self)

    @property
    def name(self) -> str:
        if not hasattr(self._handle, "op"):
            raise AttributeError("Tensor.op is undefined when eager execution is enabled.")
        return self._handle.op.name

    def execute(self, fn, exclusive_resource_access=True, name=None):
        """Runs `fn()` inside the critical section; returns its results (tensors, or what
        TensorFlow also accepts: TensorArrays, IndexedSlices, ops in graphs, None eagerly).

        Raises ValueError when fn would lock this section again (a deadlock), or when another
        section of the graph touches a resource fn touches while either asked for exclusive
        access (`exclusive_resource_access`, default True)."""
        with name_scope(name, "critical_section_execute"):
            eager = context.executing_eagerly()
            with _push_critical_section_stack(self._signature):
                lock = apply_op(MutexLock, [self._handle]).outputs[0]
                if eager:
                    try:
                        r = fn()
                    except BaseException:
                        apply_op(ConsumeMutexLock, [lock])   # TF: released when freed
                        raise
                else:
                    graph = context.get_default_graph()
                    with graph._lock:   # no ops of other threads are taken for fn's
                        existing = set(graph.get_operations())
                        with control_dependencies([lock]):
                            r = fn()
                        created = [op for op in graph.get_operations() if op not in existing]
            if eager:
                try:
                    return self._finish(r, lock)
                except BaseException:
                    apply_op(ConsumeMutexLock, [lock])
                    raise
            self._add_control_dependencies_to_lock(created, lock.op)
            # the resources the ops made by fn read directly (not through other ops)
            captured = {}
            for op in created:
                for t in op.inputs:
                    if t.dtype is resource:
                        captured.setdefault(id(t), t)
            if any(self._is_self_handle(t) for t in captured.values()):
                raise ValueError(f"Attempting to lock a CriticalSection in which we are "
                                 f"already running (signature={self._signature}). This is "
                                 "illegal and may cause deadlocks.")
            self._check_multiple_access_to_resources(captured, exclusive_resource_access)
            outputs = self._finish(r, lock)
            context.get_default_graph().add_to_collections(
                [CRITICAL_SECTION_EXECUTIONS],
                _ExecutionSignature(op=lock.op, handle=self._handle,
                                    resources=list(captured.values()),
                                    exclusive_resource_access=exclusive_resource_access))
            return outputs

    def _finish(self, r, lock):
        """fn's results after the lock's release, which comes after all of them."""
        eager = context.executing_eagerly()
        r_flat = [_identity(x) for x in flatten(r, expand_composites=False)]
        deps = [] if eager else [_control_op(x) for x in r_flat if x is not None]
        with control_dependencies(deps):
            ensure_lock_exists = apply_op(ConsumeMutexLock, [lock])
            r = pack_sequence_as(r, _gated(flatten(r, expand_composites=False)),
                                 expand_composites=False)
        with control_dependencies([] if eager else [ensure_lock_exists]):
            return map_structure(_identity, r, expand_composites=False)

    def _add_control_dependencies_to_lock(self, created_ops: list, lock_op) -> None:
        """Every op outside fn that fn's ops read runs before the lock is taken. (They were
        all made before it, so the graph's creation order stays a topological order.)"""
        args: dict = {}
        for op in created_ops:
            for t in op.inputs:
                args.setdefault(id(t.op), t.op)
            for c in op.control_inputs:
                args.setdefault(id(c), c)
        drop = [*created_ops, *lock_op.control_inputs, *(t.op for t in lock_op.inputs), lock_op]
        for op in drop:
            args.pop(id(op), None)
        for op in args.values():
            lock_op._add_control_input(op)

    def _is_self_handle(self, x) -> bool:
        """Whether resource tensor `x` is this section's mutex."""
        if not (hasattr(x, "op") and hasattr(self._handle, "op")):
            return x is self._handle   # eager handles: the same tensor
        mine = self._handle.op
        shared = x.op.attrs.get("shared_name") if x.op.type == "MutexV2" else None
        return bool(shared) and shared == mine.attrs.get("shared_name") and \
            x.op.device == mine.device

    def _check_multiple_access_to_resources(self, captured: dict, exclusive: bool) -> None:
        """TF's ValueError when another section of the graph touches one of `captured` and
        either execution asked for exclusive access."""
        graph = context.get_default_graph()
        for sg in graph.get_collection(CRITICAL_SECTION_EXECUTIONS):
            if self._is_self_handle(sg.handle):
                continue   # other executions of this section are serialized with this one
            if not (exclusive or sg.exclusive_resource_access):
                continue
            common = [t for t in sg.resources if id(t) in captured]
            if common:
                raise ValueError(
                    f"This execution would access resources: {common}. Either this lock "
                    f"(CriticalSection: {self._handle}) or lock '{sg}' (CriticalSection: "
                    f"{sg.handle}) requested exclusive resource access of this resource. "
                    "Did you mean to call execute with keyword argument "
                    "exclusive_resource_access=False?")

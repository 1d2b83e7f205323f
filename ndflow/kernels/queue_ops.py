"""Kernels of the TF1 queue ops (ops/data_flow_queues.py), with TensorFlow's semantics and
error messages.

A queue handle's runtime value is the `Queue` itself, one per (container, shared_name or
node name) in the runtime context: so every plan of a Session (an enqueue run by a queue
runner thread, a dequeue run by the training loop) reaches the same queue. Enqueues and
dequeues wait on the queue's condition variable; closing wakes every waiter. Elements are
tuples of per-component values: ATen tensors, or NumPy object arrays for strings.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import torch

from ndflow.core import dtypes, run_deadline
from ndflow.core.errors import (
    CancelledError,
    InvalidArgumentError,
    OutOfRangeError,
)
from ndflow.core.shapes import TensorShape
from ndflow.kernels import random as random_kernels
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.kernels.shared_resources import creator_kernel
from ndflow.ops import data_flow_queues as ops
from ndflow.ops import random as random_ops


def _shape_of(v) -> tuple:
    return tuple(v.shape)


def _to_cpu(v):
    if isinstance(v, torch.Tensor):
        return v.detach() if v.device.type == "cpu" else v.detach().cpu()
    return np.asarray(v, dtype=object)


def _stack(values: list, dtype, pad_shape=None):
    """Stacks the components of several elements along a new first dimension; with
    `pad_shape` (a padding queue), pads each to the batch's largest size first."""
    if pad_shape is not None:
        dims = [max(_shape_of(v)[i] for v in values) if d is None else d
                for i, d in enumerate(pad_shape)] if values else \
            [0 if d is None else d for d in pad_shape]
        if dtype is dtypes.string:
            out = np.full([len(values)] + dims, b"", dtype=object)
        else:
            out = torch.zeros([len(values)] + dims, dtype=dtype.torch_dtype)
        for i, v in enumerate(values):
            out[(i,) + tuple(slice(0, s) for s in _shape_of(v))] = v
        return out
    if dtype is dtypes.string:
        if not values:
            return np.empty((0,), dtype=object)
        return np.stack([np.asarray(v, dtype=object) for v in values])
    return torch.stack(values) if values else torch.zeros((0,), dtype=dtype.torch_dtype)


class Queue:
    """A bounded queue of elements shared by the kernels of one runtime context."""

    def __init__(self, kind: str, name: str, attrs: dict):
        self.kind = kind          # FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue, ...
        self.name = name
        self.dtypes = list(attrs["component_types"])
        if kind == "PriorityQueue":
            self.dtypes = [dtypes.int64] + self.dtypes
        shapes = [TensorShape(s) for s in attrs.get("shapes") or []]
        if kind == "PriorityQueue":
            shapes = [TensorShape([])] + shapes
        self.shapes = shapes      # [] when the queue declares none
        # per component: its dims (None: unknown size) to check elements against quickly
        self._dims = [None if sh.rank is None else tuple(sh.as_list()) for sh in shapes]
        self.capacity = int(attrs.get("capacity", -1))
        self.min_after_dequeue = int(attrs.get("min_after_dequeue", 0))
        self.items: list = []
        self.closed = False
        self.cancelled = False
        self.session_closed = False
        self.cond = threading.Condition()
        self._generator = None
        if kind == "RandomShuffleQueue":
            self._generator = np.random.default_rng(
                None if attrs["seed"] == 0 and attrs["seed2"] == 0
                else [int(attrs["seed"]) & 0xFFFFFFFF, int(attrs["seed2"]) & 0xFFFFFFFF])

    def __repr__(self):
        return f"<{self.kind} {self.name} size={len(self.items)}>"

    # -- waiting ------------------------------------------------------------------------------
    def _wait(self, ready, deadline) -> None:
        run_deadline.wait(self.cond, ready, lambda: self.session_closed, deadline)

    # -- enqueue ------------------------------------------------------------------------------
    def _check_element(self, element: tuple) -> None:
        if len(element) != len(self.dtypes):
            raise InvalidArgumentError(None, None, f"Expected {len(self.dtypes)} components, "
                                       f"got {len(element)}")
        for i, (v, dims) in enumerate(zip(element, self._dims)):
            if dims is None:
                continue
            got = _shape_of(v)
            if len(got) != len(dims) or any(d is not None and d != g for d, g in zip(dims, got)):
                raise InvalidArgumentError(None, None, f"Shape mismatch in tuple component "
                                           f"{i}. Expected {_dims(self.shapes[i])}, got "
                                           f"{list(got)}")

    def enqueue(self, elements: list, deadline) -> None:
        for e in elements:
            self._check_element(e)
        with self.cond:
            for element in elements:
                if self.closed:
                    raise CancelledError(None, None, f"{self.kind} '{self.name}' is closed.")
                self._wait(lambda: self.cancelled or self.capacity < 0
                           or len(self.items) < self.capacity, deadline)
                if self.cancelled:
                    raise CancelledError(None, None, f"{self.kind} '{self.name}' is closed.")
                self.items.append(element)
                self.cond.notify_all()

    # -- dequeue ------------------------------------------------------------------------------
    def _available(self) -> int:
        if self.kind == "RandomShuffleQueue" and not self.closed:
            return max(0, len(self.items) - self.min_after_dequeue)
        return len(self.items)

    def _take(self):
        if self.kind == "RandomShuffleQueue":
            i = int(self._generator.integers(len(self.items)))
            self.items[i], self.items[-1] = self.items[-1], self.items[i]
            return self.items.pop()
        if self.kind == "PriorityQueue":
            i = min(range(len(self.items)), key=lambda k: int(self.items[k][0]))
            return self.items.pop(i)
        return self.items.pop(0)

    def _insufficient(self, n: int) -> OutOfRangeError:
        return OutOfRangeError(None, None, f"{self.kind} '{self.name}' is closed and has "
                               f"insufficient elements (requested {n}, current size "
                               f"{len(self.items)})")

    def dequeue(self, n: int, up_to: bool, deadline) -> list:
        """n elements (a list of tuples); fewer only for `up_to` once closed."""
        with self.cond:
            self._wait(lambda: self.closed or self._available() >= n, deadline)
            if self._available() < n:  # closed
                if not up_to or not self.items:
                    raise self._insufficient(n)
                n = len(self.items)
            out = [self._take() for _ in range(n)]
            self.cond.notify_all()
            return out

    def check_batchable(self, op: str) -> None:
        if self.kind == "PaddingFIFOQueue":
            return
        if not self.shapes or not all(s.is_fully_defined() for s in self.shapes):
            raise InvalidArgumentError(None, None, f"{self.kind}'s {op} require the "
                                       "components to have specified shapes.")

    def cancel_on_session_close(self) -> None:
        """Session.close: the ops still waiting fail with CancelledError, as in TF."""
        with self.cond:
            self.session_closed = True
            self.cond.notify_all()

    def close(self, cancel_pending_enqueues: bool) -> None:
        with self.cond:
            self.closed = True
            self.cancelled = self.cancelled or cancel_pending_enqueues
            self.cond.notify_all()


def _dims(shape: TensorShape) -> list:
    return [-1 if d is None else d for d in shape.as_list()] if shape.rank is not None else []


def _register(op_def, factory):
    kernel(op_def)(factory)
    host_kernel(op_def)(factory)
    return factory


def _queue_kernel(kind: str):
    def check(q: Queue, name: str) -> None:
        if q.kind != kind:
            raise InvalidArgumentError(None, None, f"Shared queue '{name}' is a {q.kind},"
                                       f" not a {kind}")

    def factory(node):
        a = node.attrs
        return creator_kernel(node, "queue", ops.ANONYMOUS_PREFIX,
                              lambda name: Queue(kind, name, a), check)
    return factory


_register(ops.FIFOQueueV2, _queue_kernel("FIFOQueue"))
_register(ops.PaddingFIFOQueueV2, _queue_kernel("PaddingFIFOQueue"))
_register(ops.RandomShuffleQueueV2, _queue_kernel("RandomShuffleQueue"))
_register(ops.PriorityQueueV2, _queue_kernel("PriorityQueue"))


def _deadline(node):
    ms = int(node.attrs.get("timeout_ms", -1))
    return None if ms <= 0 else ms / 1000.0


def _enqueue_kernel(many: bool):
    def factory(node):
        timeout = _deadline(node)

        def run(q, *components):
            deadline = None if timeout is None else time.monotonic() + timeout
            comps = [_to_cpu(c) for c in components]
            if many:
                sizes = {_shape_of(c)[0] if _shape_of(c) else None for c in comps}
                if None in sizes:
                    raise InvalidArgumentError(None, None, "Shape must be at least rank 1 "
                                               "for enqueue_many components")
                if len(sizes) > 1:
                    raise InvalidArgumentError(None, None, "Expected all components to have "
                                               f"the same first dimension, got {sorted(sizes)}")
                n = sizes.pop() if sizes else 0
                elements = [tuple(_copy(c[i]) for c in comps) for i in range(n)]
            else:
                elements = [tuple(_copy(c) for c in comps)]
            q.enqueue(elements, deadline)
        return run
    return factory


def _copy(v):
    """An element's own storage (a fed array or a slice must not alias the queue's copy)."""
    return v.clone() if isinstance(v, torch.Tensor) else np.array(v, dtype=object)


_register(ops.QueueEnqueueV2, _enqueue_kernel(False))
_register(ops.QueueEnqueueManyV2, _enqueue_kernel(True))


def _outputs(values: list):
    return values[0] if len(values) == 1 else tuple(values)


def _dequeue_kernel(node):
    timeout = _deadline(node)

    def run(q):
        deadline = None if timeout is None else time.monotonic() + timeout
        (element,) = q.dequeue(1, False, deadline)
        return _outputs(list(element))
    return run


def _dequeue_many_kernel(up_to: bool):
    def factory(node):
        timeout = _deadline(node)

        def run(q, n):
            n = int(n)
            if n < 0:
                raise InvalidArgumentError(None, None, f"Dequeue{'UpTo' if up_to else 'Many'}"
                                           f" requested {n} < 0 elements")
            q.check_batchable("DequeueMany and DequeueUpTo")
            deadline = None if timeout is None else time.monotonic() + timeout
            elements = q.dequeue(n, up_to, deadline) if n else []
            pad = [s.as_list() for s in q.shapes] if q.kind == "PaddingFIFOQueue" else None
            return _outputs([_stack([e[i] for e in elements], dt,
                                    None if pad is None else pad[i])
                             for i, dt in enumerate(q.dtypes)])
        return run
    return factory


_register(ops.QueueDequeueV2, _dequeue_kernel)
_register(ops.QueueDequeueManyV2, _dequeue_many_kernel(False))
_register(ops.QueueDequeueUpToV2, _dequeue_many_kernel(True))


def _close_kernel(node):
    cancel = bool(node.attrs["cancel_pending_enqueues"])

    def run(q):
        q.close(cancel)
    return run


_register(ops.QueueCloseV2, _close_kernel)
_register(ops.QueueIsClosedV2, lambda node: lambda q: torch.tensor(q.closed))
_register(ops.QueueSizeV2,
          lambda node: lambda q: torch.tensor(len(q.items), dtype=torch.int32))


_COUNT_LOCK = threading.Lock()


def _count_up_to(node):
    limit = int(node.attrs["limit"])

    def run(res):
        with _COUNT_LOCK:
            v = res.value
            if v is None:
                raise InvalidArgumentError(None, None, f"Variable {res.name} is uninitialized")
            old = int(v)
            if old >= limit:
                raise OutOfRangeError(None, None, f"Reached limit of {limit}")
            res.value = torch.tensor(old + 1, dtype=v.dtype, device=v.device)
            return torch.tensor(old, dtype=v.dtype)
    return run


kernel(ops.ResourceCountUpTo)(_count_up_to)


def _random_shuffle_strings(node):
    """RandomShuffle of a string tensor (string_input_producer shuffles file names): the
    ATen kernel's permutation, from the same per-node generator, applied on the host."""
    gen = random_kernels._generator_fn(node)

    def run(x):
        x = np.asarray(x, dtype=object)
        if x.ndim == 0 or x.shape[0] <= 1:
            return x
        perm = torch.randperm(x.shape[0], generator=gen(), device=node.device).cpu().numpy()
        return x[perm]
    return run


host_kernel(random_ops.RandomShuffle)(_random_shuffle_strings)

"""`tf.nondifferentiable_batch_function`: concurrent calls of a function batched into one run.

    @tf.nondifferentiable_batch_function(num_batch_threads=1, max_batch_size=8,
                                         batch_timeout_micros=2000, allowed_batch_sizes=[4, 8])
    def model(x):
        return tf.matmul(x, w)

    y = model(x)    # from many threads: their x are concatenated along the first dimension,
                    # `model` runs once on the batch, and each caller gets its own rows

As TensorFlow does, the decorated function traces `fn` as a tf.function and calls it through a
BatchFunction op (ops/batch_ops.py), eagerly or inside a graph (a tf.function, a Session), so
the op's kernel here does the batching. The kernel's `BatchResource` is shared by every call
of the same traced function (TensorFlow shares it by the op's shared_name; ndflow keys it by
the function too, so two batch functions never mix): a call's inputs (a *task*) join the
batch being filled; the first task of a batch makes its thread that batch's runner, which
waits until the batch is full or `batch_timeout_micros` have passed, then runs `fn` on the
concatenated inputs, padded with copies of the batch's first row up to the smallest of
`allowed_batch_sizes` that holds them, and hands each task its rows of every output. So a
single call runs alone after the timeout, as in TensorFlow.

A batch holds at most `max_batch_size` rows, or with `enable_large_batch_splitting` and
`allowed_batch_sizes` the largest allowed size: a task then fills the current batch and
continues in new ones (its caller gets the pieces concatenated), while without splitting a
task that does not fit starts a new batch. At most `num_batch_threads` batches run at once;
more than `max_enqueued_batches` batches waiting is TF's UnavailableError. TensorFlow's
argument checks and error messages are kept (a task larger than `max_batch_size`, inputs of
different sizes or of rank 0, outputs whose first dimension is not the batch's).

`fn` is traced with the first dimension of every argument unknown (TensorFlow traces the
caller's exact shapes), so that calls of any batch size share one function and one batch.
"""

from __future__ import annotations

import inspect
import threading
import time
import weakref

import numpy as np
import torch

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.errors import FailedPreconditionError, InvalidArgumentError, UnavailableError
from ndflow.core.nest import pack_sequence_as
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import as_shape
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.kernels import registry
from ndflow.ops.apply import apply_op
from ndflow.ops.batch_ops import BatchFunction
from ndflow.runtime.control_flow_kernels import compile_function
from ndflow.runtime.function import function

# function graph -> {(runtime context id, container, shared_name): BatchResource}: a
# resource lives as long as the function it batches
_RESOURCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_RESOURCES_LOCK = threading.Lock()


def _rows(v) -> int:
    return int(v.shape[0])


def _concat(values: list):
    if len(values) == 1:
        return values[0]
    if isinstance(values[0], torch.Tensor):
        return torch.cat(values)
    return np.concatenate(values)


def _pad(v, extra: int):
    """`v` with `extra` copies of its first row appended (TF's padding of a batch)."""
    if isinstance(v, torch.Tensor):
        return torch.cat([v, v[:1].expand(extra, *v.shape[1:])])
    return np.concatenate([v, np.repeat(v[:1], extra, axis=0)])


def _listing(values: list) -> str:
    return "\nBelow are the input tensors: \n" + "".join(
        f" - in__tensors_{i} has shape {list(v.shape)}\n" for i, v in enumerate(values))


class _Task:
    """One call's rows (or a piece of them) waiting for their outputs."""

    __slots__ = ("inputs", "captured", "size", "done", "outputs", "error")

    def __init__(self, inputs: list, captured: list, size: int):
        self.inputs, self.captured, self.size = inputs, captured, size
        self.done = threading.Event()
        self.outputs = None
        self.error = None


class _Batch:
    __slots__ = ("tasks", "size", "closed", "deadline")

    def __init__(self, deadline: float):
        self.tasks: list = []
        self.size = 0
        self.closed = False
        self.deadline = deadline


class BatchResource:
    """The batching state of one BatchFunction (TF's batch resource)."""

    def __init__(self, attrs: dict, run):
        self.max_batch_size = int(attrs["max_batch_size"])
        self.timeout = max(int(attrs["batch_timeout_micros"]), 0) / 1e6
        self.allowed = [int(s) for s in attrs["allowed_batch_sizes"]]
        self.splitting = bool(attrs["enable_large_batch_splitting"])
        self.max_enqueued = int(attrs["max_enqueued_batches"])
        self.limit = self.allowed[-1] if self.splitting and self.allowed \
            else self.max_batch_size
        self._run = run
        self._cond = threading.Condition()
        self._open: _Batch | None = None
        self._waiting = 0          # batches made and not yet running (TF's queue depth)
        self._threads = threading.Semaphore(max(int(attrs["num_batch_threads"]), 1))

    def check_options(self) -> None:
        """TF's checks of the op's batching options."""
        if any(b <= a for a, b in zip(self.allowed, self.allowed[1:])):
            raise InvalidArgumentError(None, None, "allowed_batch_sizes entries must be "
                                       "monotonically increasing")
        if self.allowed and not self.splitting and self.allowed[-1] != self.max_batch_size:
            raise InvalidArgumentError(None, None, "final entry in allowed_batch_sizes must "
                                       "equal max_batch_size when enable_large_batch_splitting "
                                       "is False")
        if self.allowed and self.splitting and self.allowed[-1] > self.max_batch_size:
            raise InvalidArgumentError(None, None, "When enable_large_batch_splitting is "
                                       "true, input_batch_size_limit must be greater than or "
                                       "equal to max_execution_batch_size.")

    # -- a call --------------------------------------------------------------------------------
    def submit(self, inputs: list, captured: list) -> list:
        """Runs one call's inputs as part of batches; returns its rows of the outputs."""
        self.check_options()
        if any(len(v.shape) == 0 for v in inputs):
            raise InvalidArgumentError(None, None, "Batching input tensors must have at least "
                                       "one dimension." + _listing(inputs))
        size = _rows(inputs[0])
        if any(_rows(v) != size for v in inputs):
            raise InvalidArgumentError(None, None, "Batching input tensors supplied in a given "
                                       "op invocation must have equal 0th-dimension size."
                                       + _listing(inputs))
        if size > self.max_batch_size:
            raise InvalidArgumentError(None, None, f"Task size {size} is larger than maximum "
                                       f"input batch size {self.max_batch_size}")
        pieces, led, error = self._enqueue(inputs, captured, size)
        for batch in led:   # run even when the rest of the task found the queue full
            self._lead(batch)
        if error is not None:
            raise error
        for task in pieces:
            task.done.wait()
        for task in pieces:
            if task.error is not None:
                raise task.error
        if len(pieces) == 1:
            return pieces[0].outputs
        return [_concat([t.outputs[i] for t in pieces]) for i in range(len(pieces[0].outputs))]

    def _enqueue(self, inputs: list, captured: list, size: int):
        """Adds the task to the open batch (splitting it over new ones where allowed);
        returns its pieces, the batches this thread opened, and so runs, and TF's error when
        the queue was full."""
        pieces, led = [], []
        offset = 0
        with self._cond:
            while offset < size or not pieces:
                left = size - offset
                b = self._open
                if b is None or b.closed or b.size >= self.limit or \
                        (not self.splitting and b.size + left > self.limit):
                    if b is not None and not b.closed:
                        b.closed = True
                        self._cond.notify_all()
                    if self._waiting >= self.max_enqueued > 0:
                        return pieces, led, UnavailableError(
                            None, None, "The batch scheduling queue to which this task was "
                            "submitted is full")
                    b = self._open = _Batch(time.monotonic() + self.timeout)
                    self._waiting += 1
                    led.append(b)
                take = min(left, self.limit - b.size) if self.splitting else left
                part = inputs if take == size else [v[offset:offset + take] for v in inputs]
                task = _Task(part, captured, take)
                b.tasks.append(task)
                b.size += take
                offset += take
                pieces.append(task)
                if b.size >= self.limit:
                    b.closed = True
                    self._cond.notify_all()
        return pieces, led, None

    def _lead(self, batch: _Batch) -> None:
        """Waits until `batch` is full or its time is up, then runs it."""
        with self._cond:
            while not batch.closed:
                left = batch.deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            batch.closed = True
            if self._open is batch:
                self._open = None
        with self._threads:
            with self._cond:
                self._waiting -= 1
            self._process(batch)

    def _process(self, batch: _Batch) -> None:
        tasks = batch.tasks
        try:
            n_in = len(tasks[0].inputs)
            batched = [_concat([t.inputs[i] for t in tasks]) for i in range(n_in)]
            padded = next((s for s in self.allowed if s >= batch.size), batch.size)
            if padded > batch.size:
                batched = [_pad(v, padded - batch.size) for v in batched]
            outputs = self._run(batched + tasks[0].captured)
            for out in outputs:
                if len(out.shape) == 0:
                    raise FailedPreconditionError(None, None, "Batched output tensor has 0 "
                                                  "dimensions")
                if _rows(out) != padded:
                    raise FailedPreconditionError(
                        None, None, "Batched output tensor's 0th dimension does not equal the "
                        "sum of the 0th dimension sizes of the input tensors. 0th dimension "
                        f"size: {_rows(out)}; batch size: {batch.size}; unbatched tasks size: "
                        f"0; padding size: {padded - batch.size}")
            offset = 0
            for t in tasks:
                t.outputs = [out[offset:offset + t.size] for out in outputs]
                offset += t.size
        except Exception as e:  # noqa: BLE001 - every task of the batch gets the error
            for t in tasks:
                t.error = e
        finally:
            for t in tasks:
                t.done.set()


def _resource(node) -> BatchResource:
    fg, a = node.attrs["f"], node.attrs
    key = (id(node.ctx), a["container"], a["shared_name"])
    with _RESOURCES_LOCK:
        table = _RESOURCES.setdefault(fg, {})
        res = table.get(key)
        if res is None:
            res = table[key] = BatchResource(a, _lazy_plan(weakref.ref(fg), node.ctx,
                                                           node.pass_config))
    return res


def _lazy_plan(fg_ref, ctx, pass_config):
    """`run(values)` of the function's plan, compiled on the first batch. It holds the graph
    weakly: the resource (a value of _RESOURCES) must not keep its key alive."""
    plan: list = []
    lock = threading.Lock()

    def run(values: list) -> list:
        with lock:
            if not plan:
                plan.append(compile_function(fg_ref(), ctx, pass_config))
        return plan[0].run(values)
    return run


@registry.kernel(BatchFunction)
def _batch_function_kernel(node):
    n_in = len(node.attrs["Tin"])
    res = _resource(node)

    def kernel(*args):
        outs = res.submit(list(args[:n_in]), list(args[n_in:]))
        return outs[0] if len(outs) == 1 else tuple(outs)
    return kernel


@tf_export("nondifferentiable_batch_function")
def batch_function(num_batch_threads, max_batch_size, batch_timeout_micros,
                   allowed_batch_sizes=None, max_enqueued_batches=10, autograph=True,
                   enable_large_batch_splitting=True):
    """Batches the computation of the decorated function over concurrent calls: their tensor
    arguments are concatenated along the first dimension (at most `max_batch_size` rows,
    waiting at most `batch_timeout_micros` for more, padded up to one of
    `allowed_batch_sizes`), the function runs once on the batch, and each call returns its
    rows of the results. Every argument must be a tensor; the function must return a tensor
    or a structure of tensors, each batched along its first dimension."""
    def decorator(fn):
        traced: dict = {}    # eagerly: (dtype, shape) per argument -> ConcreteFunction
        lock = threading.Lock()

        def trace(specs: list):
            def computation(*computation_args):
                return fn(*computation_args)
            # parameters named as TF's placeholders: batch_0, batch_1, ...
            computation.__signature__ = inspect.Signature(
                [inspect.Parameter(s.name, inspect.Parameter.POSITIONAL_ONLY) for s in specs])
            return function(computation, autograph=autograph).get_concrete_function(*specs)

        def decorated(*args):
            specs = [TensorSpec(dtype=x.dtype, shape=_relaxed(as_shape(x.shape)),
                                name=f"batch_{i}")
                     for i, x in enumerate(args)]
            if context.executing_eagerly():
                key = tuple((s.dtype, s.shape) for s in specs)
                with lock:
                    computation = traced.get(key)
                    if computation is None:
                        computation = traced[key] = trace(specs)
            else:   # a trace of its own: what fn captures belongs to the graph being built
                computation = trace(specs)
            with name_scope("batch") as name:
                for a in args:
                    if not isinstance(a, Tensor):
                        raise ValueError("All arguments to functions decorated with "
                                         "`batch_function`  are supposed to be Tensors; "
                                         f"found {a!r}.")
                for attr, n in (("Tin", len(args)), ("Tout", len(computation.outputs))):
                    if n < 1:
                        raise InvalidArgumentError(None, None, f"Length for attr '{attr}' of "
                                                   f"{n} must be at least minimum 1")
                op = apply_op(BatchFunction, [list(args), list(computation.captured_inputs)], {
                    "f": computation.graph, "num_batch_threads": num_batch_threads,
                    "max_batch_size": max_batch_size,
                    "batch_timeout_micros": batch_timeout_micros,
                    "allowed_batch_sizes": list(allowed_batch_sizes or []),
                    "max_enqueued_batches": max_enqueued_batches, "shared_name": name,
                    "enable_large_batch_splitting": enable_large_batch_splitting,
                    "Tout": [o.dtype for o in computation.outputs]})
            return pack_sequence_as(computation.structured_outputs, list(op.outputs))
        return decorated
    return decorator


def _relaxed(shape):
    """The traced shape: the caller's with the batch dimension unknown."""
    if shape.rank is None or shape.rank == 0:
        return shape
    return [None] + shape.as_list()[1:]

"""TF1 queues (`tf.queue.FIFOQueue`, `RandomShuffleQueue`, `PaddingFIFOQueue`,
`PriorityQueue`, their base `QueueBase`): resource ops with TensorFlow's op names
(FIFOQueueV2, QueueEnqueueV2, QueueDequeueManyV2, QueueCloseV2, ...), so GraphDefs of TF
queue programs import and run. Kernels (blocking on a condition variable) in
kernels/queue_ops.py. Queue runners and input producers built on them: ndflow/train.
"""

from __future__ import annotations

import itertools

from ndflow.core import context
from ndflow.core import dtypes as _dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import init_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import static_value
from ndflow.ops.op_def import no_outputs, op_def, scalar_output
from ndflow.ops.random_seed import get_seed

# An eagerly created queue with no shared_name gets this prefix plus a counter: its kernel
# then owns one fresh queue (TF's anonymous eager resources).
ANONYMOUS_PREFIX = "_ndflow_anonymous_queue_"
_anonymous_ids = itertools.count()




def _element_shapes(ctx, batch):
    """A dequeue's static shapes: the queue's declared shapes when its creator is visible."""
    n = len(ctx.attrs["component_types"])
    creator = getattr(getattr(ctx._inputs[0], "op", None), "attrs", None) or {}
    shapes = [TensorShape(s) for s in creator.get("shapes", [])] or [TensorShape(None)] * n
    if batch is False:
        return shapes
    return [TensorShape([batch]).concatenate(s) for s in shapes]


def _dequeue_many_shape(ctx, exact: bool):
    n = static_value(ctx, 1) if exact else None
    return _element_shapes(ctx, int(n) if n is not None else None)


_RESOURCE = ["container: string = ''", "shared_name: string = ''"]
_QUEUE_ATTRS = ["component_types: list(type)", "shapes: list(shape) = []",
                "capacity: int = -1"] + _RESOURCE

FIFOQueueV2 = op_def("FIFOQueueV2", outputs=["handle: resource"], attrs=_QUEUE_ATTRS,
                     shape=scalar_output, stateful=True, gradient_undefined=True,
                     doc="A queue producing elements in first-in first-out order.")
PaddingFIFOQueueV2 = op_def(
    "PaddingFIFOQueueV2", outputs=["handle: resource"], attrs=_QUEUE_ATTRS, shape=scalar_output,
    stateful=True, gradient_undefined=True,
    doc="A FIFO queue whose dequeue_many pads variable-size components with zeros.")
RandomShuffleQueueV2 = op_def(
    "RandomShuffleQueueV2", outputs=["handle: resource"],
    attrs=_QUEUE_ATTRS[:3] + ["min_after_dequeue: int = 0", "seed: int = 0", "seed2: int = 0"]
    + _RESOURCE, shape=scalar_output, stateful=True, gradient_undefined=True,
    doc="A queue dequeuing elements in a random order.")
PriorityQueueV2 = op_def(
    "PriorityQueueV2", outputs=["handle: resource"],
    attrs=["component_types: list(type) = []", "shapes: list(shape)",
           "capacity: int = -1"] + _RESOURCE, shape=scalar_output, stateful=True,
    gradient_undefined=True,
    doc="A queue producing elements sorted by their first (int64) component.")

QueueEnqueueV2 = op_def(
    "QueueEnqueueV2", inputs=["handle: resource", "components: Tcomponents"],
    attrs=["Tcomponents: list(type)", "timeout_ms: int = -1"], shape=no_outputs,
    stateful=True, gradient_undefined=True, doc="Enqueues one element.")
QueueEnqueueManyV2 = op_def(
    "QueueEnqueueManyV2", inputs=["handle: resource", "components: Tcomponents"],
    attrs=["Tcomponents: list(type)", "timeout_ms: int = -1"], shape=no_outputs,
    stateful=True, gradient_undefined=True,
    doc="Enqueues the slices of the components along their first dimension.")
QueueDequeueV2 = op_def(
    "QueueDequeueV2", inputs=["handle: resource"], outputs=["components: component_types"],
    attrs=["component_types: list(type)", "timeout_ms: int = -1"],
    shape=lambda ctx: _element_shapes(ctx, False), stateful=True, gradient_undefined=True,
    doc="Dequeues one element, waiting for one.")
QueueDequeueManyV2 = op_def(
    "QueueDequeueManyV2", inputs=["handle: resource", "n: int32"],
    outputs=["components: component_types"],
    attrs=["component_types: list(type)", "timeout_ms: int = -1"],
    shape=lambda ctx: _dequeue_many_shape(ctx, True), stateful=True,
    gradient_undefined=True, doc="Dequeues n elements stacked, waiting for them.")
QueueDequeueUpToV2 = op_def(
    "QueueDequeueUpToV2", inputs=["handle: resource", "n: int32"],
    outputs=["components: component_types"],
    attrs=["component_types: list(type)", "timeout_ms: int = -1"],
    shape=lambda ctx: _dequeue_many_shape(ctx, False), stateful=True,
    gradient_undefined=True,
    doc="Dequeues n elements stacked, or fewer once the queue is closed.")
QueueCloseV2 = op_def(
    "QueueCloseV2", inputs=["handle: resource"],
    attrs=["cancel_pending_enqueues: bool = false"], shape=no_outputs, stateful=True,
    gradient_undefined=True, doc="Closes the queue: later enqueues fail.")
QueueIsClosedV2 = op_def(
    "QueueIsClosedV2", inputs=["handle: resource"], outputs=["is_closed: bool"],
    shape=scalar_output, stateful=True, gradient_undefined=True, doc="Whether the queue is closed.")
QueueSizeV2 = op_def(
    "QueueSizeV2", inputs=["handle: resource"], outputs=["size: int32"], shape=scalar_output,
    stateful=True, gradient_undefined=True, doc="The number of elements in the queue.")


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


@tf_export("queue.QueueBase", v1=["queue.QueueBase", "io.QueueBase", "QueueBase"])
class QueueBase:
    """A queue resource and the ops on it (TF's data_flow_ops.QueueBase)."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = [_dtypes.as_dtype(d) for d in dtypes]
        self._shapes = [TensorShape(s) for s in shapes] if shapes is not None else \
            [TensorShape(None)] * len(self._dtypes)
        if len(self._shapes) != len(self._dtypes):
            raise ValueError("Queue shapes must have the same length as dtypes")
        if names is not None and len(names) != len(self._dtypes):
            raise ValueError("Queue names must have the same length as dtypes")
        self._names = list(names) if names is not None else None
        self._queue_ref = queue_ref
        op = getattr(queue_ref, "op", None)  # eager handles have none
        self._name = op.name.split("/")[-1] if op is not None else "queue"

    @staticmethod
    def from_list(index, queues):
        """A queue (QueueBase) selecting `queues[index]`: all must share dtypes."""
        raise NotImplementedError("QueueBase.from_list is not supported by ndflow")

    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self):
        op = getattr(self._queue_ref, "op", None)
        return op.name if op is not None else self._name

    @property
    def dtypes(self):
        return self._dtypes

    @property
    def shapes(self):
        return self._shapes

    @property
    def names(self):
        return self._names

    def _check_enqueue_dtypes(self, vals, many: bool):
        """The components as tensors in dtypes order (a dict when the queue has names)."""
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals.keys()):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue."
                                 f"  Dictionary: {sorted(vals.keys())},Queue: "
                                 f"{sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            vals = _as_list(vals)
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} components to enqueue, got "
                             f"{len(vals)}")
        tensors = []
        for i, (v, dt) in enumerate(zip(vals, self._dtypes)):
            t = convert_to_tensor(v, dtype=dt, name=f"component_{i}")
            shape = self._shapes[i]
            got = t.shape[1:] if many and t.shape.rank is not None else t.shape
            if many and t.shape.rank == 0:
                raise ValueError(f"Shape must be at least rank 1 but is rank 0 for "
                                 f"enqueue_many component {i}")
            if not got.is_compatible_with(shape):
                raise ValueError(f"Shapes {got} and {shape} are incompatible")
            tensors.append(t)
        return tensors

    def enqueue(self, vals, name=None):
        """Enqueues one element (a tensor, a tuple, or a dict for named queues)."""
        return self._enqueue(QueueEnqueueV2, vals, False, name or f"{self._name}_enqueue")

    def enqueue_many(self, vals, name=None):
        """Enqueues the slices of `vals` along their first dimension."""
        return self._enqueue(QueueEnqueueManyV2, vals, True,
                             name or f"{self._name}_EnqueueMany")

    def _enqueue(self, op_def, vals, many: bool, name: str):
        """As TF: the components' conversions inside scope `name`, the op named `name`."""
        if context.executing_eagerly():
            return apply_op(op_def, [self._queue_ref, self._check_enqueue_dtypes(vals, many)])
        graph = context.get_default_graph()
        final = graph.unique_name(name, mark_as_used=False)  # the full name, e.g. batch/x
        with graph.name_scope(final + "/"):
            tensors = self._check_enqueue_dtypes(vals, many)
        return apply_op(op_def, [self._queue_ref, tensors], name=final.rsplit("/", 1)[-1])

    def _structured(self, outputs):
        outputs = list(outputs)
        if self._names:
            return dict(zip(self._names, outputs))
        return outputs[0] if len(outputs) == 1 else outputs

    def _dequeue(self, op_def, n, name, batch_dim):
        inputs = [self._queue_ref] if n is None else \
            [self._queue_ref, convert_to_tensor(n, dtype=_dtypes.int32)]
        op = apply_op(op_def, inputs, {"component_types": self._dtypes}, name=name)
        outs = list(op.outputs)
        if not context.executing_eagerly():
            for t, s in zip(outs, self._shapes):
                t.set_shape(s if batch_dim is False else TensorShape([batch_dim]).concatenate(s))
        return self._structured(outs)

    def dequeue(self, name=None):
        """Dequeues one element; waits while the queue is empty."""
        return self._dequeue(QueueDequeueV2, None, name or f"{self._name}_Dequeue", False)

    def dequeue_many(self, n, name=None):
        """Dequeues `n` elements stacked along a new first dimension."""
        static_n = n if isinstance(n, int) else None
        return self._dequeue(QueueDequeueManyV2, n, name or f"{self._name}_DequeueMany",
                             static_n)

    def dequeue_up_to(self, n, name=None):
        """Dequeues `n` elements, or what is left once the queue is closed."""
        return self._dequeue(QueueDequeueUpToV2, n, name or f"{self._name}_DequeueUpTo", None)

    def close(self, cancel_pending_enqueues=False, name=None):
        """Closes the queue: enqueues fail; dequeues drain what is left, then fail."""
        return apply_op(QueueCloseV2, [self._queue_ref],
                        {"cancel_pending_enqueues": bool(cancel_pending_enqueues)},
                        name=name or f"{self._name}_Close")

    def is_closed(self, name=None):
        return apply_op(QueueIsClosedV2, [self._queue_ref],
                        name=name or f"{self._name}_IsClosed").outputs[0]

    def size(self, name=None):
        return apply_op(QueueSizeV2, [self._queue_ref],
                        name=name or f"{self._name}_Size").outputs[0]


def _make_queue(op_def, attrs: dict, shared_name, name):
    """The queue's resource handle, made in the outermost context (as TF's resources)."""
    if context.executing_eagerly() and not shared_name:
        shared_name = f"{ANONYMOUS_PREFIX}{next(_anonymous_ids)}"
    attrs = dict(attrs, shared_name=shared_name or "")
    with init_scope():
        return apply_op(op_def, [], attrs, name=name).outputs[0]


def _normalize(dtypes_, shapes, names):
    dtypes_ = _as_list(dtypes_)
    if shapes is not None:
        shapes = list(shapes)
        # one component's shape, as TF's _as_shape_list (`shapes=()`: one scalar component)
        if (not shapes or not isinstance(shapes[0], (list, tuple, TensorShape))) and \
                len(dtypes_) == 1:
            shapes = [shapes]
        shapes = [TensorShape(s) for s in shapes]
    if names is not None:
        names = _as_list(names)
    return [_dtypes.as_dtype(d) for d in dtypes_], shapes, names


def _attr_shapes(shapes):
    return [] if shapes is None else list(shapes)


@tf_export("queue.FIFOQueue", v1=["queue.FIFOQueue", "FIFOQueue"])
class FIFOQueue(QueueBase):
    """A queue producing its elements in the order they were enqueued."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dts, shapes, names = _normalize(dtypes, shapes, names)
        ref = _make_queue(FIFOQueueV2, {"component_types": dts,
                                        "shapes": _attr_shapes(shapes),
                                        "capacity": int(capacity)}, shared_name, name)
        super().__init__(dts, shapes, names, ref)


@tf_export("queue.PaddingFIFOQueue", v1=["queue.PaddingFIFOQueue", "io.PaddingFIFOQueue",
                                         "PaddingFIFOQueue"])
class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose dequeue_many pads components of unknown dimensions (None in
    `shapes`) with zeros to the longest element of the batch."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        dts, shapes, names = _normalize(dtypes, shapes, names)
        if len(shapes) != len(dts):
            raise ValueError(f"Shapes must be provided for all components, but received "
                             f"{len(dts)} dtypes and {len(shapes)} shapes.")
        ref = _make_queue(PaddingFIFOQueueV2, {"component_types": dts, "shapes": shapes,
                                               "capacity": int(capacity)}, shared_name, name)
        super().__init__(dts, shapes, names, ref)


@tf_export("queue.RandomShuffleQueue", v1=["queue.RandomShuffleQueue",
                                           "io.RandomShuffleQueue", "RandomShuffleQueue"])
class RandomShuffleQueue(QueueBase):
    """A queue dequeuing a random element, keeping at least `min_after_dequeue` elements
    until closed (so consecutive batches mix)."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name="random_shuffle_queue"):
        dts, shapes, names = _normalize(dtypes, shapes, names)
        seed1, seed2 = _seeds(seed)
        ref = _make_queue(RandomShuffleQueueV2, {
            "component_types": dts, "shapes": _attr_shapes(shapes), "capacity": int(capacity),
            "min_after_dequeue": int(min_after_dequeue), "seed": seed1, "seed2": seed2},
            shared_name, name)
        super().__init__(dts, shapes, names, ref)


def _seeds(seed):
    """(seed, seed2) as TF's random_seed.get_seed: the op seed with the graph's seed."""
    s1, s2 = get_seed(seed)
    return (0 if s1 is None else int(s1)), (0 if s2 is None else int(s2))


@tf_export("queue.PriorityQueue", v1=["queue.PriorityQueue", "io.PriorityQueue",
                                      "PriorityQueue"])
class PriorityQueue(QueueBase):
    """A queue whose elements are dequeued by priority (an int64 first component, lowest
    first; `types` and `shapes` describe the remaining components)."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        dts, shapes, names = _normalize(types, shapes, names)
        if shapes is None:
            raise ValueError("PriorityQueue requires shapes for all components")
        ref = _make_queue(PriorityQueueV2, {"component_types": dts, "shapes": shapes,
                                            "capacity": int(capacity)}, shared_name, name)
        all_names = None if names is None else ["priority"] + list(names)
        super().__init__([_dtypes.int64] + dts, [TensorShape([])] + shapes, all_names, ref)


# limit_epochs' counter (TF's state op): increments a variable, failing with OutOfRangeError
# once it reaches `limit`.
ResourceCountUpTo = op_def(
    "ResourceCountUpTo", inputs=["resource: resource"], outputs=["output: T"],
    attrs=["limit: int", "T: {int32, int64}"], shape=scalar_output, stateful=True,
    gradient_undefined=True, doc="Increments the variable unless it reached `limit`.")


def resource_count_up_to(handle, limit: int, dtype, name=None):
    """The variable's value before incrementing it; OutOfRangeError once it is `limit`."""
    return apply_op(ResourceCountUpTo, [handle], {"limit": int(limit), "T": dtype},
                    name=name).outputs[0]

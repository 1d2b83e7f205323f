"""Distributed input: `tf.distribute.DistributedDataset` / `DistributedIterator`.

`experimental_distribute_dataset(ds)`: each element of `ds` is a global batch; it is split
along the first dimension into one part per replica, sizes as TensorFlow's rebatching
gives them (differing by at most one, the first replicas larger; a short final batch fills
the first replicas first, the last may get empty parts), and yielded as PerReplica values.
`distribute_datasets_from_function(fn)`: `fn(InputContext)` makes one dataset per input
pipeline, whose elements are already per-replica batches; replica r takes successive
elements, and where the data ends within a step the replicas left without get TF's empty
dummy batches (unless every shape is static: TF then ends there). `get_next_as_optional`
(eagerly, or in a tf.function taking the iterator: the dataset iterator's optional, split
in the graph) has a value while any replica has data. Either way each replica's part is on
its replica's device (a GPU's memory), as TensorFlow's distributed datasets prefetch to the
devices.
"""

from __future__ import annotations

from ndflow.core import context, devices, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import OutOfRangeError
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data.dataset import EagerOptional
from ndflow.distribute import values as values_lib
from ndflow.distribute.distribute_lib import InputContext
from ndflow.ops.arithmetic import maximum, minimum
from ndflow.ops.array_core import shape, stack
from ndflow.ops.array_fill import zeros
from ndflow.ops.array_slicing import slice as slice_op
from ndflow.ops.cast import cast
from ndflow.ops.ragged_tensor_spec import RaggedTensorSpec
from ndflow.ops.sparse_tensor_spec import SparseTensorSpec


def rebatch_sizes(global_batch: int, num_replicas: int) -> list:
    """Per-replica sizes of a global batch: as even as possible, the first ones larger."""
    base, extra = divmod(global_batch, num_replicas)
    return [base + (1 if i < extra else 0) for i in range(num_replicas)]


def _static_batch(element_spec) -> int | None:
    for spec in flatten(element_spec):
        dims = getattr(getattr(spec, "shape", None), "as_list", lambda: None)()
        if dims:
            return dims[0]
    return None


def per_replica_element_spec(element_spec, sizes):
    """A distributed dataset's element_spec: each leaf a PerReplicaSpec of the replicas' parts,
    whose batch dimension is the part size where every part has the same static size (TF's
    rebatching); one replica keeps the dataset's spec."""
    if sizes is None or len(sizes) == 1:
        return element_spec
    size = sizes[0] if len(set(sizes)) == 1 else None

    def part(spec):
        dims = spec.shape.as_list() if spec.shape.rank else None
        if not dims:
            return spec
        return TensorSpec([size] + dims[1:], spec.dtype, spec.name)

    leaves = [values_lib.PerReplicaSpec(*[part(spec)] * len(sizes))
              for spec in flatten(element_spec)]
    return pack_sequence_as(element_spec, leaves)


def split_batch(element, sizes: list) -> list:
    """The element (a structure of tensors with a batch dimension) cut into `sizes` parts
    (clamped to what the batch holds)."""
    flat = flatten(element)
    n = int(shape(flat[0])[0].numpy()) if flat else 0
    parts, start = [], 0
    for size in sizes:
        take = max(0, min(size, n - start))
        leaves = []
        for t in flat:
            begin = [start] + [0] * (t.shape.rank - 1)
            leaves.append(slice_op(t, begin, [take] + [-1] * (t.shape.rank - 1)))
        parts.append(pack_sequence_as(element, leaves))
        start += take
    return parts


def split_batch_graph(element, sizes: list | None, num_parts: int, skip: int = 0) -> list:
    """`split_batch` in a graph, where the batch size is a tensor: with the static `sizes`
    ([rows of other workers, part sizes...]) clamped to the batch, else an even split."""
    flat = flatten(element)
    n = shape(flat[0])[0]
    if sizes is None:
        base, extra = n // (num_parts + skip), n % (num_parts + skip)
        begins = [base * i + minimum(extra, i) for i in range(skip, skip + num_parts)]
        lengths = [base + cast(i < extra, dtypes.int32) for i in range(skip, skip + num_parts)]
    else:
        offsets = [sum(sizes[:i + 1]) for i in range(len(sizes) - 1)]
        begins = [minimum(o, n) for o in offsets]
        lengths = [maximum(0, minimum(size, n - b)) for size, b in zip(sizes[1:], begins)]
    parts = []
    for begin, length in zip(begins, lengths):
        leaves = [slice_op(t, stack([begin] + [0] * (t.shape.rank - 1)),
                           stack([length] + [-1] * (t.shape.rank - 1))) for t in flat]
        parts.append(pack_sequence_as(element, leaves))
    return parts


def on_replica_devices(parts: list, strategy) -> list:
    """Each replica's part copied to its device where that is not the CPU (logical CPU
    devices share the CPU's memory); symbolic tensors (inside a tf.function) stay."""
    specs = strategy.extended.worker_devices
    if len(specs) != len(parts):
        return parts
    out = []
    for part, spec in zip(parts, specs):
        dev = devices.to_torch_device(spec) if devices.is_available(spec) else None
        if dev is None or dev.type == "cpu":
            out.append(part)
            continue
        leaves = [EagerTensor(t._value.to(dev), t.dtype)
                  if isinstance(t, EagerTensor) and t._value.device != dev else t
                  for t in flatten(part)]
        out.append(pack_sequence_as(part, leaves))
    return out


def statically_shaped(element_spec) -> bool:
    """TF's test for partial-batch handling: every shape fully known (for a sparse or ragged
    value, its batch dimension)."""
    for spec in flatten(element_spec, expand_composites=False):
        shape_ = spec.shape
        if isinstance(spec, (SparseTensorSpec, RaggedTensorSpec)):
            if shape_.rank and shape_.as_list()[0] is None:
                return False
        elif not shape_.is_fully_defined():
            return False
    return True


def dummy_element(element_spec):
    """TF's stand-in for a replica the data ran out for (a partial batch): zeros whose unknown
    dimensions are 0, and whose first dimension is 0 where the shape is fully known."""
    def dummy(spec):
        dims = [0 if d is None else d for d in spec.shape.as_list()] if spec.shape.rank else []
        if dims and spec.shape.is_fully_defined():
            dims[0] = 0
        return zeros(dims, spec.dtype)
    return pack_sequence_as(element_spec, [dummy(s) for s in flatten(element_spec)])


class _GraphDistributedOptional:
    """`get_next_as_optional()` of a distributed iterator in a tf.function: the source
    iterator's optional, its value split per replica in the graph."""

    def __init__(self, optional, split, element_spec):
        self._optional, self._split, self.element_spec = optional, split, element_spec

    def has_value(self, name=None):
        return self._optional.has_value(name=name)

    def get_value(self, name=None):
        return values_lib.regroup(self._split(self._optional.get_value(name=name)))


@tf_export("distribute.DistributedIterator", v1=[])
class DistributedIterator:
    """Yields PerReplica batches (see the module doc). `source` and `split_graph`, where
    given, are the dataset's iterator and the per-replica split of its element in a graph
    (a tf.function taking the iterator)."""

    def __init__(self, next_parts, element_spec=None, source=None, split_graph=None):
        self._next_parts = next_parts
        self._element_spec = element_spec
        self._source, self._split_graph = source, split_graph

    @property
    def element_spec(self):
        return self._element_spec

    def __iter__(self):
        return self

    def _in_graph(self) -> bool:
        return not context.executing_eagerly() and self._split_graph is not None

    def __next__(self):
        if self._in_graph():
            return values_lib.regroup(self._split_graph(self._source.get_next()))
        return values_lib.regroup(self._next_parts())

    def get_next(self):
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self):
        """The next PerReplica batch as a `tf.experimental.Optional` (no value at the end)."""
        if self._in_graph():
            return _GraphDistributedOptional(self._source.get_next_as_optional(),
                                             self._split_graph, self._element_spec)
        try:
            return EagerOptional(next(self), self._element_spec)
        except StopIteration:
            return EagerOptional(None, self._element_spec)


@tf_export("distribute.DistributedDataset", v1=[])
class DistributedDataset:
    """A dataset of global batches, delivered split per replica."""

    def __init__(self, dataset, strategy, num_workers: int = 1, worker_index: int = 0):
        self._dataset = dataset
        self._strategy = strategy
        self._num_workers, self._worker_index = num_workers, worker_index
        static = _static_batch(dataset.element_spec)
        self._sizes = self._local_sizes(static) if static is not None else None

    def _local_sizes(self, global_batch: int) -> list:
        """This worker's rows of a global batch: [skip, size of local replica 0, ...]."""
        total = self._strategy.num_replicas_in_sync
        local = total // self._num_workers
        sizes = rebatch_sizes(global_batch, total)
        first = self._worker_index * local
        return [sum(sizes[:first])] + sizes[first:first + local]

    @property
    def element_spec(self):
        sizes = self._sizes[1:] if self._sizes is not None else \
            [None] * (self._strategy.num_replicas_in_sync // self._num_workers)
        return per_replica_element_spec(self._dataset.element_spec, sizes)

    def __iter__(self):
        it = iter(self._dataset)
        n = self._strategy.num_replicas_in_sync

        def next_parts():
            element = next(it)
            if n == 1:
                return on_replica_devices([element], self._strategy)
            sizes = self._sizes
            if sizes is None:
                first = flatten(element)[0]
                sizes = self._local_sizes(int(shape(first)[0].numpy()))
            # (the first part: other workers' rows)
            return on_replica_devices(split_batch(element, sizes)[1:], self._strategy)

        local = n // self._num_workers

        def split_graph(element):
            if n == 1:
                return [element]
            return split_batch_graph(element, self._sizes, local,
                                     skip=self._worker_index * local)

        return DistributedIterator(next_parts, self.element_spec, it, split_graph)

    def _autograph_for_stmt(self, extra_test, body, get_state, set_state, symbol_names, opts):
        """`for x in dist_dataset:` in a tf.function: the dataset's graph loop, each element
        split per replica in the graph."""
        n = self._strategy.num_replicas_in_sync
        local = n // self._num_workers

        def per_replica_body(element):
            if n == 1:
                return body(element)
            parts = split_batch_graph(element, self._sizes, local,
                                      skip=self._worker_index * local)
            return body(values_lib.regroup(parts))

        self._dataset._autograph_for_stmt(extra_test, per_replica_body, get_state, set_state,
                                          symbol_names, opts)

    def reduce(self, initial_state, reduce_func):
        state = initial_state
        for batch in self:
            state = reduce_func(state, batch)
        return state


class DistributedDatasetsFromFunction:
    """Per-replica batches from `dataset_fn(InputContext)` (one input pipeline here)."""

    def __init__(self, dataset_fn, strategy):
        self._strategy = strategy
        ctx = InputContext(num_input_pipelines=1, input_pipeline_id=0,
                           num_replicas_in_sync=strategy.num_replicas_in_sync)
        self._dataset = dataset_fn(ctx)

    @property
    def element_spec(self):
        static = _static_batch(self._dataset.element_spec)
        return per_replica_element_spec(self._dataset.element_spec,
                                        [static] * self._strategy.num_replicas_in_sync)

    def __iter__(self):
        it = iter(self._dataset)
        n = self._strategy.num_replicas_in_sync

        spec = self._dataset.element_spec
        partial = not statically_shaped(spec)

        def next_parts():
            # replica r takes the r-th next element; where the data ends after the first,
            # the others get TF's empty dummy batches, unless the elements' shapes are all
            # static (TF then ends the data there: no partial batches expected)
            parts = [next(it)]
            for _ in range(n - 1):
                try:
                    parts.append(next(it))
                except StopIteration:
                    if not partial:
                        raise
                    parts.append(dummy_element(spec))
            return on_replica_devices(parts, self._strategy)

        return DistributedIterator(next_parts, self.element_spec)

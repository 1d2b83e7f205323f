"""`tf.data.Dataset`: the base class of every dataset, its iteration and its method surface.

A dataset is a Python object that makes fresh iterators of flat elements (tuples of eager
tensors, see structure.py). Transformations are subclasses in the modules beside this one
(sources.py, mapping.py, batching.py, ...), registered by name with `register_op`; the
methods here (`ds.map(...)`, `Dataset.range(...)`) look them up, so this module does not
import them and they can subclass `DatasetV2`.

Iteration: eagerly `iter(ds)` is an `OwnedIterator` pulling from a Python iterator; inside a
`tf.function` (or a TF1 graph) it is a graph iterator (iterator_ops.py) whose ops pull from
the same Python iterators when the graph runs.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import TypeSpec, is_composite
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import Tensor
from ndflow.data import dataset_docs, structure
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.dataset_ops import IteratorResource, end_of_sequence

AUTOTUNE = -1
INFINITE = -1
UNKNOWN = -2
tf_export("data.AUTOTUNE", "data.experimental.AUTOTUNE")(AUTOTUNE)
tf_export("data.INFINITE_CARDINALITY",
          "data.experimental.INFINITE_CARDINALITY")(INFINITE)
tf_export("data.UNKNOWN_CARDINALITY", "data.experimental.UNKNOWN_CARDINALITY")(UNKNOWN)

_OPS: dict = {}


def register_op(name: str):
    """Registers the class (or function) implementing `Dataset.<name>`."""
    def register(obj):
        _OPS[name] = obj
        return obj
    return register


def _op(name: str):
    return _OPS[name]


@tf_export("data.Dataset", v1=["data.Dataset"])
class DatasetV2:
    """A sequence of elements, each a nest of tensors described by `element_spec`.

    Subclassing (for new sources, e.g. `TFRecordDataset`): call
    `super().__init__(element_spec)` with the element's nest of `tf.TensorSpec`, and
    implement either

    - `_elements(self)`: a fresh Python iterator of elements as nests shaped like
      `element_spec` whose leaves are tensors, NumPy arrays or Python values (bytes for a
      string spec); each is converted to the spec's dtype and checked against its shape, or
    - `_iter_flat(self)`: a fresh iterator of *flat* elements — tuples of `EagerTensor`s in
      `tf.nest.flatten(element_spec)` order, already of the specs' dtypes (the fast path:
      `EagerTensor(torch_tensor, tf.float32)`; a string scalar is
      `EagerTensor(np.array(b"...", dtype=object), tf.string)`);

    and optionally `_cardinality(self)` (a count, `INFINITE` or `UNKNOWN`, the default) and
    `_inputs(self)` (the datasets it reads, for `repr`/options). Errors raised while
    iterating should be `tf.errors` types (`DataLossError`, `NotFoundError`, ...): they
    reach the user unchanged, eagerly and from graph iterators.

        class LinesDataset(tf.data.Dataset):
            def __init__(self, path):
                super().__init__(tf.TensorSpec([], tf.string))
                self._path = path
            def _elements(self):
                with open(self._path, "rb") as f:
                    yield from (line.rstrip(b"\\n") for line in f)
    """

    def __init__(self, element_spec, variant_tensor=None):
        # variant_tensor: TensorFlow's graph value of a dataset; ndflow's datasets are Python
        # objects (graphs refer to them through iterator ops), so it is accepted and unused.
        structure.check_spec(element_spec, "element_spec")
        self._element_spec = element_spec
        self._flat_specs = flatten(element_spec)

    # -- what subclasses provide ---------------------------------------------------------------
    def _elements(self):
        raise NotImplementedError(f"{type(self).__name__} must implement _elements or "
                                  "_iter_flat")

    def _iter_flat(self):
        spec, what = self._element_spec, type(self).__name__
        for element in self._elements():
            yield structure.to_flat(element, spec, what)

    def _cardinality(self) -> int:
        return UNKNOWN

    def _inputs(self) -> list:
        return []

    def _batches(self, size: int, drop_remainder: bool):
        """An iterator of whole flat batches when this dataset can slice them in bulk (the
        `batch` fast path), else None."""
        return None

    def _scalar_chunks(self):
        """An iterator of non-empty lists of the elements as plain Python values, for a
        dataset whose element is one scalar string its source makes as bytes (a TFRecord
        file's records), so that `shuffle` and `batch` after it move lists of bytes instead
        of one tensor per element; else None (the default). Like `_iter_flat`, nothing runs
        before the first pull; the values before an error come out before it."""
        return None

    def _make_unread_iterator(self) -> None:
        """What making an iterator of this dataset that is never read does (a finite
        `repeat` makes one after its last epoch): TF makes its inputs' iterators with it, and
        each shuffle among them takes a seed pair (shuffling.py)."""
        for d in self._inputs():
            d._make_unread_iterator()

    # -- element structure ---------------------------------------------------------------------
    @property
    def element_spec(self):
        """The type specification of an element: a nest of `tf.TensorSpec`."""
        return self._element_spec

    def _pack(self, flat):
        return flat[0] if len(flat) == 1 and not isinstance(
            self._element_spec, (tuple, list, dict)) and \
            not is_composite(self._element_spec) else \
            pack_sequence_as(self._element_spec, flat)

    # -- iteration -----------------------------------------------------------------------------
    def __iter__(self):
        if context.executing_eagerly():
            return OwnedIterator(self)
        return _op("graph_iterator")(self)

    def _autograph_for_stmt(self, extra_test, body, get_state, set_state, symbol_names, opts):
        """AutoGraph's `for x in ds:` in a graph: a while loop over a graph iterator."""
        _op("for_stmt")(self, extra_test, body, get_state, set_state, symbol_names, opts)

    def make_one_shot_iterator(self):
        """TF1 (`tf.compat.v1.data.Dataset`): an iterator initialized on first use."""
        return _op("make_one_shot_iterator")(self)

    def make_initializable_iterator(self, shared_name=None):
        """TF1: an iterator with an `initializer` op to run first."""
        return _op("make_initializable_iterator")(self, shared_name)

    def as_numpy_iterator(self):
        """Elements as NumPy arrays (strings as bytes), eagerly."""
        if not context.executing_eagerly():
            raise RuntimeError("`tf.data.Dataset.as_numpy_iterator()` is only supported in "
                               "eager mode.")
        for spec in self._flat_specs:
            if getattr(spec, "_is_dataset_spec", False):  # a component that is a dataset
                raise TypeError("`tf.data.Dataset.as_numpy_iterator()` is not supported for "
                                f"datasets that produce values of type {spec.value_type}")
        return NumpyIterator(self)

    def cardinality(self):
        """The number of elements as an int64 scalar tensor: `INFINITE_CARDINALITY` (-1) for
        an endless dataset, `UNKNOWN_CARDINALITY` (-2) when it cannot be known statically.
        In a graph, for a pipeline reading graph tensors, the count when the graph runs."""
        if not context.executing_eagerly() and "graph_cardinality" in _OPS:
            return _op("graph_cardinality")(self)
        return convert_to_tensor(np.int64(self._cardinality()), dtypes.int64)

    def __len__(self):
        if not context.executing_eagerly():
            raise TypeError("`tf.data.Dataset` only supports `len` in eager mode. Use "
                            "`tf.data.Dataset.cardinality()` instead.")
        n = self._cardinality()
        if n == INFINITE:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True

    def __repr__(self):
        name = type(self).__name__
        return f"<_{name} element_spec={self._element_spec}>"

    # -- sources (static constructors) --------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        return _op("from_tensor_slices")(tensors)

    @staticmethod
    def from_tensors(tensors, name=None):
        return _op("from_tensors")(tensors)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None, name=None):
        return _op("from_generator")(generator, output_types, output_shapes, args,
                                     output_signature)

    @staticmethod
    def range(*args, output_type=dtypes.int64, name=None):
        return _op("range")(*args, output_type=output_type)

    @staticmethod
    def zip(*args, datasets=None, name=None):
        return _op("zip")(*args, datasets=datasets)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        return _op("choose_from_datasets")(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        return _op("sample_from_datasets")(datasets, weights, seed, stop_on_empty_dataset,
                                           rerandomize_each_iteration)

    @staticmethod
    def counter(start=0, step=1, dtype=dtypes.int64, name=None):
        return _op("counter")(start, step, dtype)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        return _op("random")(seed, rerandomize_each_iteration)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        return _op("list_files")(file_pattern, shuffle, seed)

    # -- transformations ---------------------------------------------------------------------
    def shard(self, num_shards, index, name=None):
        return _op("shard")(self, num_shards, index)

    def ignore_errors(self, log_warning=False, name=None):
        return _op("ignore_errors")(self, log_warning)

    def sparse_batch(self, batch_size, row_shape, name=None):
        return _op("sparse_batch")(self, int(getattr(batch_size, "numpy", lambda: batch_size)()),
                                   row_shape)

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None,
                           name=None):
        return _op("rejection_resample")(self, class_func, target_dist, initial_dist, seed)

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None,
                 name=None):
        return _op("snapshot")(self, path, compression, reader_func, shard_func)

    def take_while(self, predicate, name=None):
        return _op("take_while")(self, predicate)

    def unique(self, name=None):
        return _op("unique")(self)

    def scan(self, initial_state, scan_func, name=None):
        return _op("scan")(self, initial_state, scan_func)

    def get_single_element(self, name=None):
        """The only element of the dataset (InvalidArgumentError when it has 0 or 2+)."""
        return _op("get_single_element")(self)

    def concatenate(self, dataset, name=None):
        return _op("concatenate")(self, dataset)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, synchronous=None,
            use_unbounded_threadpool=False, name=None):
        return _op("map")(self, map_func, num_parallel_calls, deterministic)

    def filter(self, predicate, name=None):
        return _op("filter")(self, predicate)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        return _op("batch")(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        return _op("padded_batch")(self, batch_size, padded_shapes, padding_values,
                                   drop_remainder)

    def unbatch(self, name=None):
        return _op("unbatch")(self)

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=dtypes.int64,
                     name=None):
        """Batches elements whose shapes differ into RaggedTensors (data/ragged_batching.py)."""
        return _op("ragged_batch")(self, batch_size, drop_remainder, row_splits_dtype)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        return _op("shuffle")(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count=None, name=None):
        return _op("repeat")(self, count)

    def take(self, count, name=None):
        return _op("take")(self, count)

    def skip(self, count, name=None):
        return _op("skip")(self, count)

    def cache(self, filename="", name=None):
        return _op("cache")(self, filename)

    def prefetch(self, buffer_size, name=None):
        return _op("prefetch")(self, buffer_size)

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        return _op("interleave")(self, map_func, cycle_length, block_length,
                                 num_parallel_calls, deterministic)

    def flat_map(self, map_func, name=None):
        return _op("interleave")(self, map_func, 1, 1, None, None)

    def enumerate(self, start=0, name=None):
        return _op("enumerate")(self, start)

    def reduce(self, initial_state, reduce_func, name=None):
        return _op("reduce")(self, initial_state, reduce_func)

    def save(self, path, compression=None, shard_func=None, checkpoint_args=None):
        """Writes the dataset under `path` in TensorFlow's format (save_load.py)."""
        return _op("save")(self, path, compression, shard_func, checkpoint_args)

    @staticmethod
    def load(path, element_spec=None, compression=None, reader_func=None, wait=False):
        """A dataset `Dataset.save` (ndflow's or TensorFlow's) wrote under `path`."""
        return _op("load")(path, element_spec, compression, reader_func, wait)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        return _op("window")(self, size, shift, stride, drop_remainder)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None,
                        name=None):
        return _op("group_by_window")(self, key_func, reduce_func, window_size,
                                      window_size_func)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries,
                                  bucket_batch_sizes, padded_shapes=None, padding_values=None,
                                  pad_to_bucket_boundary=False, no_padding=False,
                                  drop_remainder=False, name=None):
        return _op("bucket_by_sequence_length")(
            self, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
            padding_values, pad_to_bucket_boundary, no_padding, drop_remainder)

    def with_options(self, options, name=None):
        """This dataset with `options` (a `tf.data.Options`) merged into its own."""
        return _op("with_options")(self, options)

    def options(self):
        """The `tf.data.Options` set on this dataset and its inputs."""
        own = getattr(self, "_options", None)
        if own is not None:
            return own
        inputs = self._inputs()
        return inputs[0].options() if inputs else _op("options_class")()

    def apply(self, transformation_func):
        out = transformation_func(self)
        if not isinstance(out, DatasetV2):
            raise TypeError("`transformation_func` must return a `tf.data.Dataset` object. "
                            f"Got {type(out)}.")
        return out


dataset_docs.attach(DatasetV2)
Dataset = DatasetV2


@tf_export("data.Iterator", v1=[])
class IteratorBase:
    """The type of dataset iterators (`isinstance(iter(ds), tf.data.Iterator)`)."""

    @property
    def element_spec(self):
        raise NotImplementedError

    def get_next(self):
        raise NotImplementedError


class OwnedIterator(IteratorBase):
    """`iter(dataset)` eagerly: the next element packed in the dataset's structure. Thread
    safe: `next` from several threads hands each element to one of them."""

    def __init__(self, dataset: DatasetV2):
        self._dataset = dataset
        self._resource = IteratorResource("OwnedIterator")
        self._start_states = pass_states(dataset)
        self._resource.reset(dataset)

    def __del__(self):
        unread(self)

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        if not context.executing_eagerly():
            raise graph_loop_error()
        return self

    def _next_flat(self):
        flat = self._resource.get_next()
        if flat is None:
            raise StopIteration
        return flat

    def __next__(self):
        if not context.executing_eagerly():  # in a tf.function: an op pulling from this
            return self._graph_iterator().get_next()
        return self._dataset._pack(self._next_flat())

    def _graph_iterator(self):
        return _op("owned_graph_iterator")(self)

    def _autograph_for_stmt(self, extra_test, body, get_state, set_state, symbol_names, opts):
        self._graph_iterator()._autograph_for_stmt(extra_test, body, get_state, set_state,
                                                   symbol_names, opts)

    def get_next(self):
        """The next element; `tf.errors.OutOfRangeError` at the end (TF's get_next)."""
        if not context.executing_eagerly():
            return self._graph_iterator().get_next()
        try:
            return next(self)
        except StopIteration:
            raise end_of_sequence() from None

    def get_next_as_optional(self):
        """The next element as an optional (`has_value()` False at the end)."""
        if not context.executing_eagerly():
            return self._graph_iterator().get_next_as_optional()
        try:
            return EagerOptional(next(self), self.element_spec)
        except StopIteration:
            return EagerOptional(None, self.element_spec)

    # -- tf.train.Checkpoint(iterator=iterator) ------------------------------------------------
    # Saved under TensorFlow's key and object-graph attribute (`ITERATOR`, tensor suffix
    # `_STATE`: `<path>/.ATTRIBUTES/ITERATOR_STATE`). TensorFlow stores its
    # iterators' whole state (shuffle buffers too) as a serialized variant; ndflow stores an
    # int64 vector, the position (elements handed out) and how many seed pairs each shuffle
    # of the pipeline had handed out when the iterator started (its seed generator's state,
    # shuffling.py), and on restore replays the pipeline to that position from that state:
    # the same elements follow for a deterministic pipeline (shuffles with a seed, op-level
    # or global). Neither library reads the other's iterator entry
    # (restoring TensorFlow's names the key and its variant dtype); the checkpoint's
    # variables move both ways as ever.
    _legacy_saveable_name = "ITERATOR"
    _checkpoint_suffixes = ("_STATE",)

    def _serialize_to_tensors(self):
        state = np.array([self._resource.produced, *self._start_states], dtype=np.int64)
        return {"_STATE": convert_to_tensor(state)}

    def _restore_from_tensors(self, restored):
        state = np.asarray(restored["_STATE"])
        n_states = len(self._start_states)
        if state.dtype != np.int64 or state.shape != (1 + n_states,):
            raise InvalidArgumentError(
                None, None, "The checkpointed iterator state does not fit this iterator: "
                f"expected int64 [{1 + n_states}] (a position, and the seed pairs each of the "
                f"pipeline's {n_states} shuffle(s) had drawn), got {state.dtype} "
                f"{list(state.shape)}")
        states = [int(s) for s in state[1:]]
        nodes = _stateful_nodes(self._dataset)
        for node, s in zip(nodes, states):
            node._set_pass_state(s)
        self._start_states = states
        self._resource.reset(self._dataset)
        for _ in range(int(state[0])):   # the replay moves the passes on as the run did
            if self._resource.get_next() is None:
                break


def unread(iterator) -> None:
    """An eager iterator going without having been read: TF made its pipeline's iterators
    (and drew their shuffles' seeds) when it was made, ndflow makes them on the first pull,
    so the draws happen now (before any iterator made after it is read, as in Keras' `fit`,
    which makes the next epoch's iterator at the end of each epoch and replaces it)."""
    try:
        resource = iterator._resource
        if resource.initialized and not resource.pulled:
            resource.pulled = True
            iterator._dataset._make_unread_iterator()
    except Exception:  # noqa: BLE001, S110 - a finalizer (also at interpreter exit)
        pass


def _stateful_nodes(dataset) -> list:
    """The pipeline's datasets whose passes differ (shuffles), in a fixed walk order."""
    out, stack, seen = [], [dataset], set()
    while stack:
        d = stack.pop()
        if id(d) in seen:
            continue
        seen.add(id(d))
        if callable(getattr(d, "_pass_state", None)):
            out.append(d)
        stack.extend(reversed(d._inputs()))
    return out


def pass_states(dataset) -> list:
    """Each stateful node's state (a shuffle: the seed pairs it has drawn; see
    OwnedIterator's checkpoint state)."""
    return [d._pass_state() for d in _stateful_nodes(dataset)]


def graph_loop_error() -> TypeError:
    """A Python `for` over an iterator while a graph is built would add ops forever."""
    return TypeError("Iterating over a tf.data iterator with a Python loop is not allowed "
                     "while building a graph: use AutoGraph (`tf.function` converts `for x in "
                     "iterator:`), or call `next(iterator)` a fixed number of times.")


class EagerOptional:
    """An eager iterator's next element, or nothing (TF's `tf.experimental.Optional`)."""

    def __init__(self, value, element_spec):
        self._value = value
        self.element_spec = element_spec

    def has_value(self, name=None):
        return convert_to_tensor(self._value is not None)

    def get_value(self, name=None):
        if self._value is None:
            raise InvalidArgumentError(None, None, "The optional does not have a value.")
        return self._value


@tf_export("data.NumpyIterator")
class NumpyIterator:
    """`as_numpy_iterator()`: elements with NumPy arrays for tensors."""

    def __init__(self, dataset: DatasetV2):
        self._dataset = dataset
        self._resource = IteratorResource("NumpyIterator")
        self._resource.reset(dataset)

    def __del__(self):
        unread(self)

    def __iter__(self):
        return self

    def __next__(self):
        flat = self._resource.get_next()
        if flat is None:
            raise StopIteration
        spec = self._dataset.element_spec
        if any(is_composite(x) for x in flatten(spec, False)):
            # a RaggedTensor part: its .numpy() (an object array of rows); a SparseTensor:
            # its dense array (TF's SparseTensor._numpy)
            return structure.numpy_element(spec, flat)
        return self._dataset._pack([structure.to_numpy(t) for t in flat])

    next = __next__


@tf_export("data.experimental.cardinality")
def cardinality(dataset: DatasetV2):
    """`dataset.cardinality()` (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY or a count)."""
    return dataset.cardinality()


@tf_export(v1=["data.get_output_types"])
def get_output_types(dataset_or_iterator):
    """The dtypes of the elements, as a nest like `element_spec` (TF 1.x's output_types).

    >>> tf.compat.v1.data.get_output_types(tf.data.Dataset.range(3))
    tf.int64
    """
    return structure.map_leaves(lambda s: s.dtype, dataset_or_iterator.element_spec)


@tf_export(v1=["data.get_output_shapes"])
def get_output_shapes(dataset_or_iterator):
    """The static shapes of the elements, as a nest like `element_spec` (TF 1.x's).

    >>> tf.compat.v1.data.get_output_shapes(tf.data.Dataset.range(3))
    TensorShape([])
    """
    return structure.map_leaves(lambda s: s.shape, dataset_or_iterator.element_spec)


@tf_export(v1=["data.get_output_classes"])
def get_output_classes(dataset_or_iterator):
    """Tensor for a tensor leaf, the value type (tf.SparseTensor, ...) of a composite's."""
    return structure.map_leaves(lambda s: s.value_type if isinstance(s, TypeSpec) else Tensor,
                                dataset_or_iterator.element_spec)

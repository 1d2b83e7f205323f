"""The docstrings of `tf.data.Dataset`'s sources and transformations, attached to the methods
of data/dataset.py (which stays the short map of names to implementations). Each says what
the method makes, what its arguments mean, what it raises, and shows one call; the examples
run as doctests (tests/data/test_dataset_docstrings.py), so they stay true.
"""

from __future__ import annotations

DOCS = {
    "from_tensor_slices": """A dataset of the slices of `tensors` along their first dimension.

    Args:
      tensors: a tensor, array or nest of them (tuple, dict); every component must have the
        same size in its first dimension, which becomes the number of elements.
      name: optional name for the operation.

    Raises:
      ValueError: the components' first dimensions differ, or a component is a scalar.

    >>> ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3], ["a", "b", "c"]))
    >>> [(int(x), s.numpy().decode()) for x, s in ds]
    [(1, 'a'), (2, 'b'), (3, 'c')]
    """,
    "from_tensors": """A dataset of exactly one element: `tensors` itself, unsliced.

    Args:
      tensors: a tensor, array or nest of them.
      name: optional name for the operation.

    >>> ds = tf.data.Dataset.from_tensors([1, 2, 3])
    >>> [x.numpy().tolist() for x in ds]
    [[1, 2, 3]]
    """,
    "from_generator": """A dataset whose elements a Python generator yields.

    Args:
      generator: a callable returning an iterator (called anew for each iteration of the
        dataset, with `args` when given).
      output_types, output_shapes: the elements' dtypes and shapes (deprecated form).
      args: tensors passed to `generator` as NumPy values.
      output_signature: a nest of `tf.TensorSpec` describing each element (preferred).
      name: optional name for the operation.

    Raises:
      TypeError: neither `output_signature` nor `output_types` is given.
      InvalidArgumentError (when iterated): a yielded value does not match the signature.

    >>> def gen():
    ...     for i in range(3):
    ...         yield i, [i] * i
    >>> ds = tf.data.Dataset.from_generator(gen, output_signature=(
    ...     tf.TensorSpec((), tf.int32), tf.TensorSpec((None,), tf.int32)))
    >>> [(int(i), v.numpy().tolist()) for i, v in ds]
    [(0, []), (1, [1]), (2, [2, 2])]
    """,
    "range": """A dataset of evenly spaced integers, as Python's `range`.

    Args:
      *args: `stop`, `start, stop` or `start, stop, step` (step 0 is an error).
      output_type: the elements' integer (or float) dtype, int64 by default.
      name: optional name for the operation.

    Raises:
      InvalidArgumentError: `step` is 0.

    >>> [int(x) for x in tf.data.Dataset.range(2, 9, 3)]
    [2, 5, 8]
    """,
    "zip": """A dataset of tuples (or the given nest) of the elements of several datasets,
    ending with the shortest.

    Args:
      *args: datasets, or one nest (tuple, dict) of datasets.
      datasets: the same, by keyword.
      name: optional name for the operation.

    Raises:
      TypeError: an argument is not a dataset.

    >>> a = tf.data.Dataset.range(3)
    >>> b = tf.data.Dataset.range(10, 15)
    >>> [(int(x), int(y)) for x, y in tf.data.Dataset.zip(a, b)]
    [(0, 10), (1, 11), (2, 12)]
    """,
    "choose_from_datasets": """Elements taken from `datasets` in the order an index dataset
    chooses.

    Args:
      datasets: a list of datasets with compatible element structures.
      choice_dataset: a dataset of scalar int64 indices into `datasets`.
      stop_on_empty_dataset: stop when a chosen dataset is exhausted (default) instead of
        skipping it.

    Raises:
      TypeError: the datasets' structures differ, or `choice_dataset` is not scalar int64.

    >>> ds = tf.data.Dataset.choose_from_datasets(
    ...     [tf.data.Dataset.from_tensors(0).repeat(), tf.data.Dataset.from_tensors(1).repeat()],
    ...     tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1, 0], tf.int64)))
    >>> [int(x) for x in ds]
    [0, 1, 1, 0]
    """,
    "sample_from_datasets": """Elements drawn at random from `datasets`, each pick weighted.

    Args:
      datasets: a list of datasets with compatible element structures.
      weights: one probability per dataset (a list, tensor or dataset of them); uniform
        when None.
      seed: the random seed of the picks.
      stop_on_empty_dataset: stop when any dataset is exhausted, instead of drawing from the
        others.
      rerandomize_each_iteration: draw a new sequence of picks for each iteration.

    Raises:
      ValueError: `weights` has another length than `datasets`.

    >>> ds = tf.data.Dataset.sample_from_datasets(
    ...     [tf.data.Dataset.range(3), tf.data.Dataset.range(10, 13)], seed=1)
    >>> sorted(int(x) for x in ds)
    [0, 1, 2, 10, 11, 12]
    """,
    "counter": """An endless dataset counting from `start` by `step`.

    Args:
      start, step: the first value and the increment.
      dtype: the elements' dtype (int64 by default).
      name: optional name for the operation.

    >>> [int(x) for x in tf.data.Dataset.counter(5, 2).take(3)]
    [5, 7, 9]
    """,
    "random": """An endless dataset of pseudorandom int64 scalars.

    Args:
      seed: the random seed; with the same seed two datasets give the same values.
      rerandomize_each_iteration: give new values on each iteration of the dataset.
      name: optional name for the operation.

    >>> a = [int(x) for x in tf.data.Dataset.random(seed=4).take(3)]
    >>> b = [int(x) for x in tf.data.Dataset.random(seed=4).take(3)]
    >>> a == b
    True
    """,
    "list_files": """A dataset of the file names matching one or more glob patterns.

    Args:
      file_pattern: a pattern string (`"/data/*.csv"`), a list of them or a string tensor.
      shuffle: shuffle the names (the default when `seed` is None is True).
      seed: the random seed of the shuffle.
      name: optional name for the operation.

    Raises:
      InvalidArgumentError (when iterated): no file matches.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> for n in ("a.txt", "b.txt", "c.csv"):
    ...     open(os.path.join(d, n), "w").close()
    >>> sorted(os.path.basename(f.numpy().decode())
    ...        for f in tf.data.Dataset.list_files(os.path.join(d, "*.txt")))
    ['a.txt', 'b.txt']
    """,
    "shard": """Every `num_shards`-th element, starting at `index`: this worker's share.

    Args:
      num_shards: the number of shards (workers).
      index: this shard's number, 0 <= index < num_shards.
      name: optional name for the operation.

    Raises:
      InvalidArgumentError: `index` is out of range or `num_shards` is not positive.

    >>> [int(x) for x in tf.data.Dataset.range(10).shard(3, 1)]
    [1, 4, 7]
    """,
    "ignore_errors": """This dataset with the elements whose computation raised an error
    dropped (a failing map or a corrupt record), instead of ending the iteration.

    Args:
      log_warning: log each dropped error.
      name: optional name for the operation.

    >>> ds = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0]).map(
    ...     lambda x: tf.debugging.check_numerics(1.0 / x, "division"))
    >>> [float(x) for x in ds.ignore_errors()]
    [1.0, 0.5]
    """,
    "sparse_batch": """Batches of `batch_size` elements as `tf.sparse.SparseTensor`s of
    dense shape `[batch, *row_shape]`.

    Args:
      batch_size: the number of elements in each batch (the last may be smaller).
      row_shape: the dense shape each element is placed in.
      name: optional name for the operation.

    Raises:
      InvalidArgumentError (when iterated): an element does not fit in `row_shape`.

    >>> ds = tf.data.Dataset.from_tensor_slices([[1], [2]]).sparse_batch(2, [3])
    >>> batch = next(iter(ds))
    >>> tf.sparse.to_dense(batch).numpy().tolist()
    [[1, 0, 0], [2, 0, 0]]
    """,
    "rejection_resample": """Resamples the elements so that their classes follow
    `target_dist`, by dropping elements of over-represented classes; yields
    `(class, element)` pairs.

    Args:
      class_func: maps an element to its int32/int64 class.
      target_dist: the wanted probability of each class.
      initial_dist: the classes' probabilities in this dataset (estimated when None).
      seed: the random seed of the resampling.
      name: optional name for the operation.

    >>> ds = tf.data.Dataset.from_tensor_slices(tf.constant([0, 0, 0, 1] * 50, tf.int64))
    >>> out = ds.rejection_resample(lambda x: x, [0.5, 0.5], seed=0)
    >>> all(int(c) == int(x) for c, x in out)
    True
    """,
    "snapshot": """This dataset, written under `path` on its first full iteration and read
    back from there by later iterations (and later programs) with the same fingerprint.

    Args:
      path: the directory holding the snapshot.
      compression: "AUTO", "GZIP", "SNAPPY" or None.
      reader_func, shard_func: how the snapshot's shards are read and assigned.
      name: optional name for the operation.

    >>> import tempfile
    >>> ds = tf.data.Dataset.range(3).snapshot(tempfile.mkdtemp())
    >>> [int(x) for x in ds] == [int(x) for x in ds]
    True
    """,
    "take_while": """The elements up to (not including) the first for which `predicate`
    is False.

    Args:
      predicate: maps an element to a scalar bool tensor.
      name: optional name for the operation.

    Raises:
      ValueError: `predicate` does not return a scalar bool.

    >>> [int(x) for x in tf.data.Dataset.range(10).take_while(lambda x: x < 4)]
    [0, 1, 2, 3]
    """,
    "unique": """The elements not seen before, in first-seen order (scalar int32, int64 or
    string elements).

    Args:
      name: optional name for the operation.

    Raises:
      TypeError: the elements are not scalars of a supported dtype.

    >>> ds = tf.data.Dataset.from_tensor_slices([1, 3, 1, 2, 3])
    >>> [int(x) for x in ds.unique()]
    [1, 3, 2]
    """,
    "scan": """A running state threaded through the elements: `scan_func(state, element)`
    returns `(new_state, output)` and the outputs make the new dataset.

    Args:
      initial_state: the first state (a nest of tensors).
      scan_func: maps (state, element) to (new state, output); the state keeps its
        structure and dtypes.
      name: optional name for the operation.

    Raises:
      TypeError: the new state's structure or dtypes differ from the initial state's.

    >>> ds = tf.data.Dataset.range(5).scan(
    ...     tf.constant(0, tf.int64), lambda total, x: (total + x, total + x))
    >>> [int(x) for x in ds]
    [0, 1, 3, 6, 10]
    """,
    "concatenate": """This dataset's elements followed by those of `dataset`.

    Args:
      dataset: a dataset with a compatible element structure and dtypes.
      name: optional name for the operation.

    Raises:
      TypeError: the two element structures or dtypes differ.

    >>> a = tf.data.Dataset.range(2)
    >>> [int(x) for x in a.concatenate(tf.data.Dataset.range(5, 7))]
    [0, 1, 5, 6]
    """,
    "map": """`map_func` applied to each element.

    Args:
      map_func: maps an element (its components as separate arguments when it is a tuple)
        to a new element; traced once as a graph function, so Python side effects run at
        tracing only.
      num_parallel_calls: elements computed concurrently (`tf.data.AUTOTUNE` to let the
        runtime choose); sequential when None.
      deterministic: keep the input order when computing in parallel (the default).
      synchronous, use_unbounded_threadpool: accepted for TensorFlow's signature.
      name: optional name for the operation.

    Raises:
      TypeError, ValueError: `map_func` returns something that is not a nest of tensors.

    >>> ds = tf.data.Dataset.range(4).map(lambda x: x * x, num_parallel_calls=tf.data.AUTOTUNE)
    >>> [int(x) for x in ds]
    [0, 1, 4, 9]
    """,
    "filter": """The elements for which `predicate` is True.

    Args:
      predicate: maps an element to a scalar bool tensor.
      name: optional name for the operation.

    Raises:
      ValueError: `predicate` does not return a scalar bool.

    >>> [int(x) for x in tf.data.Dataset.range(10).filter(lambda x: x % 3 == 0)]
    [0, 3, 6, 9]
    """,
    "batch": """Consecutive elements stacked into batches of `batch_size` along a new first
    dimension.

    Args:
      batch_size: the number of elements in each batch.
      drop_remainder: drop a last batch smaller than `batch_size` (then the batch dimension
        is static).
      num_parallel_calls, deterministic: accepted for TensorFlow's signature.
      name: optional name for the operation.

    Raises:
      InvalidArgumentError (when iterated): the elements of a batch have different shapes
        (see `padded_batch` and `ragged_batch`).

    >>> [b.numpy().tolist() for b in tf.data.Dataset.range(7).batch(3)]
    [[0, 1, 2], [3, 4, 5], [6]]
    """,
    "padded_batch": """Batches of elements of different shapes, each padded to a common
    shape.

    Args:
      batch_size: the number of elements in each batch.
      padded_shapes: the shape to pad each component to (None dimensions: the longest in
        the batch); the elements' shapes when None.
      padding_values: the value padding each component (0, or "" for strings).
      drop_remainder: drop a last batch smaller than `batch_size`.
      name: optional name for the operation.

    Raises:
      InvalidArgumentError (when iterated): an element is larger than its padded shape.

    >>> ds = tf.data.Dataset.range(1, 4).map(lambda n: tf.fill([n], n))
    >>> ds.padded_batch(3).get_single_element().numpy().tolist()
    [[1, 0, 0], [2, 2, 0], [3, 3, 3]]
    """,
    "unbatch": """The slices of each element along its first dimension: `batch` undone.

    Args:
      name: optional name for the operation.

    Raises:
      ValueError: an element component is a scalar.

    >>> ds = tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).unbatch()
    >>> [int(x) for x in ds]
    [1, 2, 3, 4]
    """,
    "shuffle": """The elements in random order, drawn from a buffer of `buffer_size`
    elements that is refilled as it is emptied.

    Args:
      buffer_size: the number of elements in the buffer; a full shuffle needs at least the
        dataset's size.
      seed: the random seed of the shuffle.
      reshuffle_each_iteration: a new order on each iteration (the default) or the same.
      name: optional name for the operation.

    Raises:
      InvalidArgumentError: `buffer_size` is not positive.

    >>> ds = tf.data.Dataset.range(5).shuffle(5, seed=3)
    >>> sorted(int(x) for x in ds)
    [0, 1, 2, 3, 4]
    """,
    "repeat": """This dataset's elements again `count` times (forever when None or -1).

    Args:
      count: the number of repetitions.
      name: optional name for the operation.

    >>> [int(x) for x in tf.data.Dataset.range(2).repeat(3)]
    [0, 1, 0, 1, 0, 1]
    """,
    "take": """The first `count` elements (all of them when -1).

    Args:
      count: the number of elements to keep.
      name: optional name for the operation.

    >>> [int(x) for x in tf.data.Dataset.range(10).take(3)]
    [0, 1, 2]
    """,
    "skip": """The elements after the first `count` (none when -1).

    Args:
      count: the number of elements to drop.
      name: optional name for the operation.

    >>> [int(x) for x in tf.data.Dataset.range(5).skip(3)]
    [3, 4]
    """,
    "cache": """This dataset's elements kept after its first full iteration, in memory
    (`filename` "") or in files at `filename`; later iterations read the cache.

    Args:
      filename: "" for memory, else the prefix of the cache files.
      name: optional name for the operation.

    >>> calls = []
    >>> ds = tf.data.Dataset.range(3).map(
    ...     lambda x: tf.py_function(lambda v: calls.append(1) or v, [x], tf.int64)).cache()
    >>> _ = list(ds); _ = list(ds)
    >>> len(calls)
    3
    """,
    "prefetch": """This dataset with up to `buffer_size` elements computed ahead, in the
    background, while the consumer works on the current one.

    Args:
      buffer_size: the number of elements to keep ready (`tf.data.AUTOTUNE` to choose).
      name: optional name for the operation.

    >>> [int(x) for x in tf.data.Dataset.range(3).prefetch(tf.data.AUTOTUNE)]
    [0, 1, 2]
    """,
    "interleave": """The elements of the datasets `map_func` makes from each element,
    cycling over `cycle_length` of them at a time, `block_length` elements from each.

    Args:
      map_func: maps an element to a dataset.
      cycle_length: the number of input elements open at once (AUTOTUNE by default).
      block_length: the elements taken from one before moving to the next.
      num_parallel_calls: open datasets read concurrently; sequential when None.
      deterministic: keep the cycle's order when reading in parallel.
      name: optional name for the operation.

    Raises:
      TypeError: `map_func` does not return a dataset.

    >>> ds = tf.data.Dataset.range(1, 3).interleave(
    ...     lambda x: tf.data.Dataset.from_tensors(x).repeat(3), cycle_length=2)
    >>> [int(x) for x in ds]
    [1, 2, 1, 2, 1, 2]
    """,
    "flat_map": """The elements of the datasets `map_func` makes from each element, one
    dataset after another.

    Args:
      map_func: maps an element to a dataset.
      name: optional name for the operation.

    Raises:
      TypeError: `map_func` does not return a dataset.

    >>> ds = tf.data.Dataset.range(3).flat_map(lambda x: tf.data.Dataset.range(x))
    >>> [int(x) for x in ds]
    [0, 0, 1]
    """,
    "enumerate": """`(index, element)` pairs, the index counting from `start`.

    Args:
      start: the first index.
      name: optional name for the operation.

    >>> ds = tf.data.Dataset.from_tensor_slices(["a", "b"]).enumerate(1)
    >>> [(int(i), s.numpy().decode()) for i, s in ds]
    [(1, 'a'), (2, 'b')]
    """,
    "reduce": """The dataset reduced to one value: `reduce_func(state, element)` folded over
    all elements from `initial_state`.

    Args:
      initial_state: the first state (a nest of tensors).
      reduce_func: maps (state, element) to the new state, of the same structure and dtypes.
      name: optional name for the operation.

    Raises:
      TypeError: the new state's structure or dtypes differ from the initial state's.

    >>> int(tf.data.Dataset.range(5).reduce(tf.constant(0, tf.int64), lambda s, x: s + x))
    10
    """,
    "window": """Windows of `size` consecutive elements, each a dataset (or a nest of
    datasets), starting every `shift` elements and taking every `stride`-th.

    Args:
      size: the number of elements in a window.
      shift: the step between window starts (`size` when None).
      stride: the step between elements in a window.
      drop_remainder: drop last windows smaller than `size`.
      name: optional name for the operation.

    >>> ds = tf.data.Dataset.range(5).window(3, shift=2, drop_remainder=True)
    >>> [[int(x) for x in w] for w in ds]
    [[0, 1, 2], [2, 3, 4]]
    """,
    "group_by_window": """Elements grouped by a key, each group cut into windows of
    `window_size` that `reduce_func(key, window_dataset)` turns into a dataset.

    Args:
      key_func: maps an element to a scalar int64 key.
      reduce_func: maps (key, dataset of up to `window_size` elements) to a dataset.
      window_size: the elements per window (or `window_size_func(key)`).
      window_size_func: maps a key to its window size.
      name: optional name for the operation.

    Raises:
      ValueError: both or neither of `window_size` and `window_size_func` are given.

    >>> ds = tf.data.Dataset.range(6).group_by_window(
    ...     key_func=lambda x: x % 2, reduce_func=lambda k, w: w.batch(3), window_size=3)
    >>> [b.numpy().tolist() for b in ds]
    [[0, 2, 4], [1, 3, 5]]
    """,
    "bucket_by_sequence_length": """Elements batched with others of similar length:
    each goes to the bucket its length falls in, and each bucket is padded-batched with its
    own batch size (less padding than batching everything together).

    Args:
      element_length_func: maps an element to its int32 length.
      bucket_boundaries: the increasing upper bounds (exclusive) of all but the last bucket.
      bucket_batch_sizes: one batch size per bucket (len(bucket_boundaries) + 1).
      padded_shapes, padding_values: as `padded_batch`.
      pad_to_bucket_boundary: pad to the bucket's bound rather than the batch's longest.
      no_padding: the elements need no padding (plain batches).
      drop_remainder: drop each bucket's last, smaller batch.
      name: optional name for the operation.

    Raises:
      ValueError: `bucket_batch_sizes` does not have one more entry than the boundaries.

    >>> ds = tf.data.Dataset.from_tensor_slices([1, 5, 2, 6]).map(lambda n: tf.fill([n], n))
    >>> ds = ds.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [4], [2, 2])
    >>> [b.numpy().shape for b in ds]
    [(2, 2), (2, 6)]
    """,
    "apply": """`transformation_func(self)`: a transformation written as a function of a
    dataset, applied in a method chain.

    Args:
      transformation_func: maps this dataset to a dataset.

    Raises:
      TypeError: `transformation_func` does not return a dataset.

    >>> def evens(ds):
    ...     return ds.filter(lambda x: x % 2 == 0)
    >>> [int(x) for x in tf.data.Dataset.range(6).apply(evens)]
    [0, 2, 4]
    """,
}


def attach(cls) -> None:
    """Sets the docstrings above on `cls`'s methods (static methods' functions too)."""
    for name, doc in DOCS.items():
        member = cls.__dict__[name]
        getattr(member, "__func__", member).__doc__ = doc

"""`tf.data.experimental` readers of features and lookup tables built from datasets:
`parse_example_dataset`, `make_batched_features_dataset`, `DatasetInitializer`,
`table_from_dataset` and `index_table_from_dataset`, with TensorFlow's pipelines and errors.
"""

from __future__ import annotations

import glob

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import structure
from ndflow.data.csv_pipeline import FilesInterleaveDataset
from ndflow.data.dataset import AUTOTUNE, DatasetV2
from ndflow.data.experimental_ops import AssertCardinalityDataset
from ndflow.data.tfrecord_dataset import TFRecordDatasetV2
from ndflow.ops.lookup_initializers import KeyValueTensorInitializer
from ndflow.ops.lookup_tables import StaticHashTableV1, StaticVocabularyTableV1
from ndflow.ops.parsing_ops import parse_example


# -- parsing -----------------------------------------------------------------------------------
@tf_export("data.experimental.parse_example_dataset")
def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """A transformation parsing batches (vectors) of serialized `tf.train.Example`s into
    dicts of features (as `tf.io.parse_example`)."""
    if features is None:
        raise ValueError("Argument `features` is required, but not specified.")

    def apply(dataset: DatasetV2) -> DatasetV2:
        spec = dataset.element_spec
        if not (isinstance(spec, TensorSpec) and spec.dtype is dtypes.string
                and spec.shape.rank in (None, 1)):
            raise TypeError("Input dataset should be a dataset of vectors of strings, got "
                            f"elements of {spec}.")
        return dataset.map(lambda serialized: parse_example(serialized, features),
                           num_parallel_calls=num_parallel_calls,
                           deterministic=deterministic)
    return apply


def _matching_files(file_pattern) -> list:
    value = file_pattern.numpy() if hasattr(file_pattern, "numpy") else file_pattern
    if isinstance(value, np.ndarray):
        value = value.reshape(-1).tolist()
    patterns = value if isinstance(value, (list, tuple)) else [value]
    names = []
    for p in patterns:
        names.extend(glob.glob(p.decode() if isinstance(p, bytes) else str(p)))
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")  # TF's list_files
    return sorted(set(names))                                               # InvalidArgument


@tf_export("data.experimental.make_batched_features_dataset")
def make_batched_features_dataset(file_pattern, batch_size, features, reader=None,
                                  label_key=None, reader_args=None, num_epochs=None,
                                  shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                                  prefetch_buffer_size=None, reader_num_threads=None,
                                  parser_num_threads=None, sloppy_ordering=False,
                                  drop_final_batch=False):
    """Batches of parsed `tf.train.Example`s read from files (TFRecord by default): files
    (shuffled) interleaved, records shuffled, repeated, batched, parsed, label popped."""
    reader = TFRecordDatasetV2 if reader is None else reader
    reader_args = list(reader_args or [])
    threads = 1 if reader_num_threads is None else int(reader_num_threads)
    prefetch_buffer_size = AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size
    parser_threads = 2 if parser_num_threads is None else parser_num_threads
    if label_key and label_key not in features:
        raise ValueError(f"The `label_key` provided ({label_key}) must be one of the "
                         f"`features` keys: {features.keys()}.")
    names = _matching_files(file_pattern)
    name_ds = DatasetV2.from_tensor_slices(names)
    if shuffle:
        name_ds = name_ds.shuffle(len(names), shuffle_seed)
    files = {n: reader(n, *reader_args) for n in names}
    for n, ds in files.items():
        if not isinstance(ds, DatasetV2):
            raise TypeError("The `reader` argument must return a `Dataset` object, got "
                            f"{type(ds).__name__} for {n}.")
    dataset: DatasetV2 = FilesInterleaveDataset(name_ds, files, threads)
    spec = dataset.element_spec
    if isinstance(spec, tuple) and [s.dtype for s in flatten(spec)] == [dtypes.string] * 2:
        dataset = dataset.map(lambda _, v: v)  # (key, value) readers: the values
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    dataset = dataset.apply(parse_example_dataset(features, num_parallel_calls=parser_threads))
    if label_key:
        dataset = dataset.map(lambda x: (x, x.pop(label_key)))
    return dataset.prefetch(prefetch_buffer_size)


# -- lookup tables -----------------------------------------------------------------------------
_BASE_ERROR = ("Datasets used to initialize lookup tables must produce elements in the form "
               "(key, value), where the keys and values are scalar tensors. ")


def _check_element_spec(spec) -> None:
    if not isinstance(spec, tuple) or len(spec) != 2:
        n = len(spec) if isinstance(spec, (tuple, list, dict)) else 1
        raise ValueError(_BASE_ERROR + f"However, the given dataset produces {n} components "
                         "instead of two (key, value) components. Full dataset element spec: "
                         f"{spec}.")
    for what, s in (("key", spec[0]), ("value", spec[1])):
        if not isinstance(s, TensorSpec):
            raise ValueError(_BASE_ERROR + f"However, the given dataset produces non-Tensor "
                             f"{what}s of type {type(s)}.")
        if s.shape.rank not in (None, 0):
            raise ValueError(_BASE_ERROR + "However, the given dataset produces non-scalar "
                             f"{what} Tensors of rank {s.shape.rank}.")


@tf_export("data.experimental.DatasetInitializer")
class DatasetInitializer(KeyValueTensorInitializer):
    """Fills a lookup table with the `(key, value)` elements of a dataset (read once, when
    the initializer is made)."""

    def __init__(self, dataset):
        spec = dataset.element_spec
        _check_element_spec(spec)
        self.dataset = dataset
        columns = ([], [])
        for key, value in dataset._iter_flat():
            columns[0].append(structure.to_numpy(key))
            columns[1].append(structure.to_numpy(value))
        keys, values = (np.array(c, dtype=object if s.dtype is dtypes.string
                                 else s.dtype.as_numpy_dtype).reshape(-1)
                        for c, s in zip(columns, spec))
        super().__init__(keys, values, spec[0].dtype, spec[1].dtype, name="dataset_init")


@tf_export("data.experimental.table_from_dataset")
def table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=None,
                       hasher_spec=None, key_dtype=dtypes.string, name=None):
    """A lookup table of a dataset of `(key, value)` pairs; with `num_oov_buckets`, keys
    outside it hash to ids after the table's (as TF's IdTableWithHashBuckets)."""
    spec = dataset.element_spec
    _check_element_spec(spec)
    if default_value is None:
        default_value = -1
        if not (spec[1].dtype.is_integer or spec[1].dtype.is_floating):
            raise ValueError("`default_value` must be specified when creating a table from a "
                             f"dataset that produces values of type {spec[1].dtype}.")
    if num_oov_buckets < 0:
        raise ValueError("`num_oov_buckets` must be greater than or equal to 0, got "
                         f"{num_oov_buckets}.")
    if vocab_size is not None and not hasattr(vocab_size, "numpy") and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    key_dtype = dtypes.as_dtype(key_dtype)
    if not key_dtype.is_integer and key_dtype is not dtypes.string:
        raise TypeError("`key_dtype` must be either an integer or string type, but got "
                        f"{key_dtype}")
    if vocab_size is not None:
        n = int(vocab_size.numpy() if hasattr(vocab_size, "numpy") else vocab_size)
        dataset = AssertCardinalityDataset(dataset.take(n), n)
    initializer = DatasetInitializer(dataset)
    if num_oov_buckets:
        return StaticVocabularyTableV1(initializer, num_oov_buckets, lookup_key_dtype=key_dtype,
                                       name=name)
    return StaticHashTableV1(initializer, default_value, name=name)


@tf_export("data.experimental.index_table_from_dataset")
def index_table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None,
                             default_value=-1, hasher_spec=None, key_dtype=dtypes.string,
                             name=None):
    """A table mapping each element of a dataset of keys to its position (int64)."""
    return table_from_dataset(dataset.enumerate().map(lambda v, k: (k, v)), num_oov_buckets,
                              vocab_size, default_value, hasher_spec, key_dtype, name)

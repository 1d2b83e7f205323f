"""`tf.data`: input pipelines (`tf.data.Dataset` and its transformations, iterators eagerly,
in `tf.function` and in TF1 Sessions). This package is the `tf.data` namespace module: only
the names exported by its modules show in `dir(tf.data)`."""

# The runtime first: it and autograph import each other in that order.
from ndflow import runtime  # noqa: F401, I001
from ndflow.data import (  # noqa: F401 - importing runs their tf_exports and registrations
    batching,
    caching,
    combinators,
    csv_dataset,
    csv_pipeline,
    dataset,
    dataset_spec,
    dataset_variants,
    element_batching,
    experimental_transforms,
    experimental_v1,
    feature_datasets,
    experimental_ops,
    fixed_length,
    graph_datasets,
    graph_sources,
    grouping,
    interleave,
    iterator_ops,
    iterator_saveable,
    mapping,
    optional_ops,
    options,
    ordering,
    prefetching,
    ragged_batching,
    reducing,
    resampling,
    save_load,
    selection,
    shuffling,
    snapshot,
    sql_dataset,
    sources,
    sparse_batching,
    text_line,
    windowing,
)
from ndflow.data import tfrecord_io  # noqa: F401, I001 - TFRecord files (tf.io.TFRecordWriter...)
from ndflow.data import tfrecord_dataset  # noqa: F401, I001 - tf.data.TFRecordDataset

"""`tf.data`: input pipelines (`tf.data.Dataset` and its transformations, iterators eagerly,
in `tf.function` and in TF1 Sessions). This package is the `tf.data` namespace module: only
the names exported by its modules show in `dir(tf.data)`."""

from ndflow.data import dataset, sources  # noqa: F401 - importing runs their tf_exports

"""`tf.feature_column` (TF2's FeatureColumn API) and `tf.compat.v1.feature_column`
(`input_layer`, `linear_model`): declarative feature preprocessing of raw feature dicts into
model input, with TensorFlow's column objects, hashing, variable names and errors."""

from ndflow.feature_column import (  # noqa: F401 - importing runs the tf_export declarations
    base,
    categorical_columns,
    constructors,
    dense_columns,
    input_layers,
    sequence_columns,
)

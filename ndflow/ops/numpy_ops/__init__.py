"""`tf.experimental.numpy` (TF-NumPy): NumPy's API on tf.Tensor, with NumPy's dtype
promotion (`tnp.asarray(1.0)` is float64 unless `experimental_enable_numpy_behavior(
prefer_float32=True)`). Importing the modules runs their `tf_export` declarations."""

from ndflow.ops.numpy_ops import (  # noqa: F401
    np_array_ops,
    np_arrays,
    np_config,
    np_creation,
    np_dtypes,
    np_indexing,
    np_linalg,
    np_math_ops,
    np_random,
    np_reductions,
)

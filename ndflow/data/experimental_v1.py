"""TF1-only names of `tf.compat.v1.data.experimental`: the `*Structure` factories (TF 1.x's
element types, now the TypeSpec classes: `Structure` itself is `tf.TypeSpec`, declared in
core/composite_tensor.py) and `map_and_batch_with_legacy_function`. Each logs TF's
deprecation warning on its first call."""

from __future__ import annotations

from ndflow.core import strict_mode
from ndflow.core.api_export import tf_export
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data.experimental_ops import map_parallel_calls
from ndflow.ops.ragged_tensor_spec import RaggedTensorSpec
from ndflow.ops.sparse_tensor_spec import SparseTensorSpec
from ndflow.ops.type_specs_extra import TensorArraySpec

_warned: set[str] = set()


def _deprecated(name: str, module: str, instructions: str) -> None:
    if name not in _warned:  # TF warns once per function
        _warned.add(name)
        strict_mode.log_deprecation("From %s: %s (from %s) is deprecated and will be removed "
                                    "in a future version.\nInstructions for updating:\n%s",
                                    __name__, name, module, instructions)


@tf_export(v1=["data.experimental.TensorStructure"])
def _TensorStructure(dtype, shape):  # noqa: N802 - TensorFlow's name
    """The spec of a dense tensor (TF 1.x's name; deprecated, logs a warning once).

    Args:
      dtype: the element dtype.
      shape: the shape (a list, tuple or `tf.TensorShape`).

    Returns:
      `tf.TensorSpec(shape, dtype)`.

    Example:
      >>> tf.compat.v1.data.experimental.TensorStructure(tf.float32, [2])
      TensorSpec(shape=(2,), dtype=tf.float32, name=None)
    """
    _deprecated("_TensorStructure", "tensorflow.python.data.util.structure",
                "Use `tf.TensorSpec` instead.")
    return TensorSpec(shape, dtype)


@tf_export(v1=["data.experimental.SparseTensorStructure"])
def _SparseTensorStructure(dtype, shape):  # noqa: N802 - TensorFlow's name
    """The spec of a sparse tensor (TF 1.x's name; deprecated, logs a warning once).

    Args:
      dtype: the dtype of the values.
      shape: the dense shape.

    Returns:
      `tf.SparseTensorSpec(shape, dtype)`.

    Example:
      >>> tf.compat.v1.data.experimental.SparseTensorStructure(tf.int64, [3, 4]).shape
      TensorShape([3, 4])
    """
    _deprecated("_SparseTensorStructure", "tensorflow.python.data.util.structure",
                "Use `tf.SparseTensorSpec` instead.")
    return SparseTensorSpec(shape, dtype)


@tf_export(v1=["data.experimental.TensorArrayStructure"])
def _TensorArrayStructure(dtype, element_shape, dynamic_size, infer_shape):  # noqa: N802
    """The spec of a TensorArray (TF 1.x's name; deprecated, logs a warning once).

    Args:
      dtype: the dtype of the elements.
      element_shape: the shape of each element.
      dynamic_size: whether the array may grow.
      infer_shape: whether the element shape is inferred from the first write.

    Returns:
      `tf.TensorArraySpec(element_shape, dtype, dynamic_size, infer_shape)`.

    Example:
      >>> spec = tf.compat.v1.data.experimental.TensorArrayStructure(tf.float32, [2], False, True)
      >>> isinstance(spec, tf.TensorArraySpec)
      True
    """
    _deprecated("_TensorArrayStructure", "tensorflow.python.data.util.structure",
                "Use `tf.TensorArraySpec` instead.")
    return TensorArraySpec(element_shape, dtype, dynamic_size, infer_shape)


@tf_export(v1=["data.experimental.RaggedTensorStructure"])
def _RaggedTensorStructure(dtype, shape, ragged_rank):  # noqa: N802 - TensorFlow's name
    """The spec of a ragged tensor (TF 1.x's name; deprecated, logs a warning once).

    Args:
      dtype: the dtype of the values.
      shape: the shape, None for ragged dimensions.
      ragged_rank: the number of ragged dimensions.

    Returns:
      `tf.RaggedTensorSpec(shape, dtype, ragged_rank)`.

    Example:
      >>> tf.compat.v1.data.experimental.RaggedTensorStructure(
      ...     tf.int32, [None, None], 1).ragged_rank
      1
    """
    _deprecated("_RaggedTensorStructure", "tensorflow.python.data.util.structure",
                "Use `tf.RaggedTensorSpec` instead.")
    return RaggedTensorSpec(shape, dtype, ragged_rank)


@tf_export(v1=["data.experimental.map_and_batch_with_legacy_function"])
def map_and_batch_with_legacy_function(map_func, batch_size, num_parallel_batches=None,
                                       drop_remainder=False, num_parallel_calls=None):
    """Fused `map` and `batch` (TF's escape hatch for map functions traced as TF1 Defuns;
    ndflow traces every map function the same way, so this is `map_and_batch`)."""
    _deprecated("map_and_batch_with_legacy_function",
                "tensorflow.python.data.experimental.ops.batching",
                "Use `tf.data.experimental.map_and_batch()")
    num_parallel_calls = map_parallel_calls("map_and_batch_with_legacy_function", batch_size,
                                            num_parallel_batches, num_parallel_calls)

    def _apply_fn(dataset):
        return dataset.map(map_func, num_parallel_calls).batch(batch_size, drop_remainder)
    return _apply_fn

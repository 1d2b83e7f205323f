"""Reading any checkpoint by key: `tf.train.load_checkpoint` (a `CheckpointReader`),
`tf.train.list_variables`, `tf.train.load_variable`, TF1's `NewCheckpointReader`."""

from __future__ import annotations

import os

from ndflow.checkpoint import checkpoint_management, tensor_bundle
from ndflow.checkpoint.unordered_key_order import unordered_map_order
from ndflow.core import dtypes, errors
from ndflow.core.api_export import tf_export


class CheckpointReader:
    """The tensors of one checkpoint by key (TensorFlow's py_checkpoint_reader)."""

    def __init__(self, prefix):
        self._bundle = tensor_bundle.BundleReader(prefix)

    def get_tensor(self, tensor_str):
        """The value under the key (NumPy array; a scalar string is bytes)."""
        value = self._bundle.read(_key(tensor_str))
        return value.reshape(()).item() if value.dtype == object and value.ndim == 0 \
            else value

    def has_tensor(self, tensor_str) -> bool:
        return self._bundle.has(_key(tensor_str))

    def _keys_in_tf_order(self) -> list:
        # TF fills a C++ unordered_map in key order and lists that map's iteration order
        return unordered_map_order(sorted(self._bundle.keys()))

    def get_variable_to_shape_map(self) -> dict:
        return {k: list(self._bundle.dtype_and_shape(k)[1]) for k in self._keys_in_tf_order()}

    def get_variable_to_dtype_map(self) -> dict:
        return {k: dtypes.as_dtype(self._bundle.dtype_enum(k)) for k in self._keys_in_tf_order()}

    def debug_string(self) -> bytes:
        return "".join(f"{k} ({dtypes.as_dtype(self._bundle.dtype_enum(k)).name}) "
                       f"{list(self._bundle.dtype_and_shape(k)[1])}\n"
                       for k in self._bundle.keys()).encode()


def _key(name) -> str:
    return name.decode() if isinstance(name, bytes) else str(name)


def checkpoint_prefix(ckpt_dir_or_file) -> str:
    """The checkpoint prefix of a file prefix, or of a directory's latest checkpoint."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = checkpoint_management.latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {path}")
        return latest
    return path


@tf_export("train.load_checkpoint")
def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """A reader of the checkpoint (a prefix, or a directory's latest checkpoint)."""
    return CheckpointReader(checkpoint_prefix(ckpt_dir_or_file))


@tf_export(v1=["train.NewCheckpointReader"])
def NewCheckpointReader(filepattern) -> CheckpointReader:  # noqa: N802 - TF's name
    """A reader for the tensors of a TensorFlow checkpoint.

    Args:
      filepattern: the checkpoint's prefix (e.g. "/tmp/model/ckpt-1"), as a str or path.

    Returns:
      A `CheckpointReader` with `get_tensor(name)`, `has_tensor(name)`,
      `get_variable_to_shape_map()` and `get_variable_to_dtype_map()`.

    Raises:
      NotFoundError: if no checkpoint exists at `filepattern`.

    Example:
      >>> import os, tempfile
      >>> prefix = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).save(
      ...     os.path.join(tempfile.mkdtemp(), "ckpt"))
      >>> reader = tf.compat.v1.train.NewCheckpointReader(prefix)
      >>> reader.get_tensor("v/.ATTRIBUTES/VARIABLE_VALUE")
      array([1., 2.], dtype=float32)
    """
    return CheckpointReader(os.fspath(filepattern))


@tf_export("train.list_variables")
def list_variables(ckpt_dir_or_file) -> list:
    """[(key, shape)] of every tensor in the checkpoint, sorted by key."""
    reader = load_checkpoint(ckpt_dir_or_file)
    shapes = reader.get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


@tf_export("train.load_variable")
def load_variable(ckpt_dir_or_file, name):
    """The value saved under `name` (a trailing ":0" is ignored)."""
    name = _key(name)
    if name.endswith(":0"):
        name = name[:-2]
    reader = load_checkpoint(ckpt_dir_or_file)
    if not reader.has_tensor(name):
        raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint")
    return reader.get_tensor(name)

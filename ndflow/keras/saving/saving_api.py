"""`tf.keras.models.save_model` / `load_model` / `model_from_json` and what `Model.save`,
`save_weights` and `load_weights` call — Keras 3's entry points, their file-name rules and
messages (TensorFlow 2.21's `tf.keras` has no `saving` namespace: `keras.saving` is the
standalone Keras package's). Formats: `.keras` archives and their unzipped directories
(`zipped=False`, keras_archive.py), `.weights.h5` files (weights_h5.py) and sharded
`.weights.json` + shards (`max_shard_size`, sharded_weights.py), and the legacy whole-model
HDF5 format (`.h5`, Keras 2's and 3's: legacy_h5.py)."""

from __future__ import annotations

import json
import os

import h5py

from ndflow.core import logging
from ndflow.core.api_export import keras_export, tf_export
from ndflow.keras.saving import (
    file_io,
    keras_archive,
    legacy_h5,
    sharded_weights,
    weights_h5,
)


def _path(filepath) -> str:
    return os.fspath(filepath)


@keras_export("keras.models.save_model")
@tf_export("keras.saving.save_model", v1=[])
def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Saves a model to one file: its architecture (config), weights and optimizer state.

    The format follows the extension: ".keras" (Keras 3's zip archive, recommended) or
    ".h5"/".hdf5" (the legacy HDF5 format, with a warning).

    Args:
      model: the model (built).
      filepath: the destination path (a string or path-like).
      overwrite: whether to replace an existing file (else ask on the console).
      zipped: False writes the archive's contents to a directory instead (the path must
        not end in ".keras").
      **kwargs: `include_optimizer` (HDF5 only) and Keras 2's `save_format` (deprecated:
        only accepted when it agrees with the extension).

    Raises:
      ValueError: another extension, `zipped=False` with ".keras", a conflicting
        `save_format`, or unknown keyword arguments.

    Example:

    >>> import os, tempfile
    >>> model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.keras")
    >>> tf.keras.models.save_model(model, path)
    >>> tf.keras.models.load_model(path).output_shape
    (None, 2)
    """
    include_optimizer = kwargs.pop("include_optimizer", True)   # the legacy HDF5 format's
    save_format = kwargs.pop("save_format", False)
    if save_format and str(filepath).endswith((".h5", ".hdf5", ".keras")):
        logging.warning("The `save_format` argument is deprecated in Keras 3. We recommend "
                        "removing this argument as it can be inferred from the file path. "
                        f"Received: save_format={save_format}")
    elif save_format:
        raise ValueError("The `save_format` argument is deprecated in Keras 3. Please remove "
                         "this argument and pass a file path with either `.keras` or `.h5` "
                         f"extension.Received: save_format={save_format}")
    if kwargs:
        raise ValueError(f"The following argument(s) are not supported: {list(kwargs.keys())}")
    filepath = _path(filepath)
    if filepath.endswith((".h5", ".hdf5")):
        logging.warning("You are saving your model as an HDF5 file via `model.save()` or "
                        "`keras.saving.save_model(model)`. This file format is considered "
                        "legacy. We recommend using instead the native Keras format, e.g. "
                        "`model.save('my_model.keras')` or "
                        "`keras.saving.save_model(model, 'my_model.keras')`. ")
    if os.path.exists(filepath) and not overwrite:
        if not file_io.ask_to_proceed_with_overwrite(filepath):
            return
    if zipped is False:
        if filepath.endswith(".keras"):
            raise ValueError("When using `zipped=False`, the `filepath` argument should not "
                             f"end in `.keras`. Received: filepath={filepath}")
        return keras_archive.save_model_dir(model, filepath)
    if filepath.endswith(".keras"):
        return keras_archive.save_model(model, filepath)
    if filepath.endswith((".h5", ".hdf5")):
        return legacy_h5.save_model(model, filepath, include_optimizer=include_optimizer)
    raise ValueError("Invalid filepath extension for saving. Please add either a `.keras` "
                     "extension for the native Keras format (recommended) or a `.h5` extension. "
                     "Use `model.export(filepath)` if you want to export a SavedModel for use "
                     f"with TFLite/TFServing/etc. Received: filepath={filepath}.")


@keras_export("keras.models.load_model")
@tf_export("keras.saving.load_model", v1=[])
def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Loads a model saved by `model.save()` / `save_model`: a ".keras" archive (also one
    Keras 3 wrote), a legacy ".h5"/".hdf5" file, or a directory from `zipped=False`.

    Args:
      filepath: the path.
      custom_objects: optional dict of names to user classes and functions the config
        refers to (layers, losses, activations...).
      compile: whether to compile the model again with the saved training config.
      safe_mode: whether to refuse deserializing Python lambdas (arbitrary code).

    Returns:
      The model, with its weights (and optimizer state when compiled).

    Raises:
      ValueError: an unsupported file format (a SavedModel directory included: use
        `tf.saved_model.load` or `keras.layers.TFSMLayer`).
    """
    filepath = _path(filepath)
    if filepath.endswith(".keras"):
        return keras_archive.load_model(filepath, custom_objects=custom_objects,
                                        compile=compile, safe_mode=safe_mode)
    if filepath.endswith((".h5", ".hdf5")):
        return legacy_h5.load_model(filepath, custom_objects=custom_objects, compile=compile,
                                    safe_mode=safe_mode)
    if os.path.isdir(filepath) and os.path.exists(os.path.join(filepath, "config.json")):
        return keras_archive.load_model_dir(filepath, custom_objects=custom_objects,
                                            compile=compile, safe_mode=safe_mode)
    raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only supports "
                     "V3 `.keras` files, legacy H5 format files (`.h5` extension). Note that "
                     "the legacy SavedModel format is not supported by `load_model()` in "
                     "Keras 3. In order to reload a TensorFlow SavedModel as an inference-only "
                     f"layer in Keras 3, use `keras.layers.TFSMLayer({filepath}, "
                     "call_endpoint='serving_default')` (note that your `call_endpoint` might "
                     "have a different name).")


@tf_export("keras.saving.save_weights", v1=[])
def save_weights(model, filepath, overwrite=True, max_shard_size=None, **kwargs):
    """Writes a model's weights to an HDF5 ".weights.h5" file (or, with
    `max_shard_size`, to shards indexed by a ".weights.json" file).

    Args:
      model: a built model.
      filepath: the path, ending in ".weights.h5" (".weights.json" when sharded).
      overwrite: whether to replace an existing file (else ask on the console).
      max_shard_size: optional largest shard size, in GB.
      **kwargs: none are accepted.

    Raises:
      ValueError: a wrong extension, an unbuilt model, or keyword arguments.
    """
    filepath = _path(filepath)
    if kwargs:
        raise ValueError(f"Invalid keyword arguments: {kwargs}")
    if max_shard_size is None and not filepath.endswith(".weights.h5"):
        raise ValueError(f"The filename must end in `.weights.h5`. Received: filepath={filepath}")
    if max_shard_size is not None and not filepath.endswith(("weights.h5", "weights.json")):
        raise ValueError("The filename must end in `.weights.json` when `max_shard_size` is "
                         f"specified. Received: filepath={filepath}")
    if os.path.exists(filepath) and not overwrite:
        if not file_io.ask_to_proceed_with_overwrite(filepath):
            return
    if not model.built:
        raise ValueError("You are saving a model that has not yet been built. Try building the "
                         "model first by calling it on some data or by using `build()`.")
    if max_shard_size is not None:
        sharded_weights.save(model, filepath, max_shard_size)
        return
    with file_io.atomic_path(filepath) as tmp, h5py.File(tmp, "w") as f:
        weights_h5.save_state(model, f)


@tf_export("keras.saving.load_weights", v1=[])
def load_weights(model, filepath, skip_mismatch=False, **kwargs):
    """Loads weights into a model from a ".weights.h5" file (`save_weights`), a sharded
    ".weights.json", a ".keras" archive, or a legacy ".h5"/".hdf5" file.

    Args:
      model: the model, of the same architecture as the saved one.
      filepath: the path.
      skip_mismatch: whether to skip layers whose weight shapes differ (else an error).
      **kwargs: `by_name` (legacy HDF5 files only: match layers by name rather than
        order); `objects_to_skip` is accepted and ignored.

    Raises:
      ValueError: an unsupported format, `by_name` with a Keras 3 format, or other
        keyword arguments.
    """
    filepath = _path(filepath)
    kwargs.pop("objects_to_skip", None)
    by_name = kwargs.pop("by_name", None)
    if kwargs:
        raise ValueError(f"Invalid keyword arguments: {kwargs}")
    is_keras = filepath.endswith(".keras")
    sharded = filepath.endswith(".weights.json")
    if (is_keras or sharded or filepath.endswith(".weights.h5")) and by_name is not None:
        raise ValueError("`by_name` only supports loading legacy '.h5' or '.hdf5' files. "
                         f"Received: {filepath}")
    legacy = filepath.endswith((".h5", ".hdf5")) and not filepath.endswith(".weights.h5")
    if not is_keras and not sharded and not filepath.endswith(".weights.h5") and not legacy:
        raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only "
                         "supports V3 `.keras` files, `.weights.h5` files, legacy H5 format "
                         "files (`.h5` extension), or Orbax checkpoints.")
    if not model.built:
        raise ValueError("You are loading weights into a model that has not yet been built. "
                         "Try building the model first by calling it on some data or by using "
                         "`build()`.")
    if is_keras:
        keras_archive.load_weights(model, filepath, skip_mismatch=skip_mismatch)
        return
    if sharded:
        sharded_weights.load(model, filepath, skip_mismatch=skip_mismatch)
        return
    if legacy:
        with weights_h5.open_h5(filepath) as f:
            group = f
            if "layer_names" not in f.attrs and "model_weights" in f:   # a whole-model file
                group = weights_h5._group(f, "model_weights")
            load = legacy_h5.load_weights_from_group_by_name if by_name else \
                legacy_h5.load_weights_from_group
            load(group, model, skip_mismatch=skip_mismatch)
        return
    with weights_h5.open_h5(filepath) as f:
        weights_h5.load_state(model, f, skip_mismatch=skip_mismatch)


def model_to_json(model, **kwargs) -> str:
    """What `Model.to_json()` returns: its serialized config, as JSON."""
    return keras_archive.model_to_json(model, **kwargs)


@keras_export("keras.models.model_from_json")
def model_from_json(json_string, custom_objects=None):
    """A new model (freshly initialized weights) from the JSON string of its architecture,
    as `model.to_json()` writes it; compiled when the JSON holds a compile config.

    Args:
      json_string: the JSON text.
      custom_objects: optional dict of names to user classes and functions it refers to.

    Returns:
      The model.

    Example:

    >>> model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    >>> tf.keras.models.model_from_json(model.to_json()).output_shape
    (None, 2)
    """
    return keras_archive.deserialize_model(json.loads(json_string), custom_objects)

"""Keras 3's `.keras` archive: a zip (members stored uncompressed) holding `metadata.json`
(the Keras version and the date), `config.json` (the model's serialized config with its
`build_config` and `compile_config`) and `model.weights.h5` (weights_h5.py's format).

Loading rebuilds the model from config.json with ndflow's deserializers only — known layer,
optimizer, loss and metric classes, or the caller's `custom_objects` — so a file never runs
code; a Python lambda saved in a Lambda layer loads only with `safe_mode=False`."""

from __future__ import annotations

import datetime
import io
import json
import os
import warnings
import zipfile

import h5py
import numpy as np

from ndflow.core.dtypes import DType
from ndflow.core.shapes import TensorShape
from ndflow.keras import serialization_lib
from ndflow.keras.layers import layer_serialization
from ndflow.keras.layers.lambda_layer import Lambda
from ndflow.keras.layers.tfsm_layer import TFSMLayer
from ndflow.keras.saving import assets_store, compile_config, file_io, object_tree, weights_h5

KERAS_VERSION = "3.15.1"   # the Keras whose format this is (TensorFlow 2.21's)
CONFIG_FILENAME = "config.json"
METADATA_FILENAME = "metadata.json"
WEIGHTS_FILENAME = "model.weights.h5"
# A member declaring more than 4 GiB and over 100x its stored size is refused (as Keras).
_ZIP_BOMB_FLOOR_BYTES = 1 << 32
_ZIP_MAX_EXPANSION = 100


# -- config.json -----------------------------------------------------------------------------
def _json_default(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, TensorShape):
        return None if value.rank is None else value.as_list()
    if isinstance(value, DType):
        return value.name
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable: "
                    f"{value!r}")


def serialize_model(model) -> dict:
    """The model as Keras 3 writes it at the top of config.json."""
    kind = object_tree.object_kind(model)
    if kind == "Functional":
        out = {"module": "keras.src.models.functional", "class_name": "Functional",
               "config": model.get_config(), "registered_name": "Functional",
               "build_config": {"input_shape": None}}
    elif kind == "Sequential":
        out = {"module": "keras", "class_name": "Sequential", "config": model.get_config(),
               "registered_name": None}
        if model.built and model._functional is not None:
            out["build_config"] = {"input_shape": list(model.inputs[0].shape)}
    else:   # a subclassed model, or a layer saved alone (a FeatureSpace)
        out = layer_serialization.serialize(model)
    out["compile_config"] = compile_config.get_compile_config(model)
    return out


def model_to_json(model, **kwargs) -> str:
    """`Model.to_json()`: the serialized model; `kwargs` go to `json.dumps` (as Keras)."""
    return json.dumps(serialize_model(model), default=_json_default, **kwargs)


class _UnsafeLambda:
    """Stands for `Lambda` in `custom_objects` when the caller passed `safe_mode=False`."""

    @staticmethod
    def from_config(config, custom_objects=None):
        return Lambda.from_config(config, custom_objects=custom_objects, safe_mode=False)


class _UnsafeTFSMLayer:
    """Stands for `TFSMLayer` when the caller passed `safe_mode=False`."""

    @staticmethod
    def from_config(config, custom_objects=None):
        return TFSMLayer.from_config(config, custom_objects=custom_objects, safe_mode=False)


def deserialize_model(config: dict, custom_objects=None, safe_mode: bool = True,
                      compile: bool = True):
    """A model from its config.json dict (Keras 3's deserialize_keras_object on a model)."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret serialized model: {config!r}")
    if serialization_lib.in_safe_mode() is not None:   # as Keras: the global mode wins
        safe_mode = serialization_lib.in_safe_mode()
    # the registered and scoped objects, then the caller's; in scope for activation functions
    custom = {**serialization_lib.active_custom_objects(), **(custom_objects or {})}
    with serialization_lib.CustomObjectScope(custom):
        if safe_mode is False and "Lambda" not in custom:
            custom["Lambda"] = _UnsafeLambda
        if safe_mode is False and "TFSMLayer" not in custom:
            custom["TFSMLayer"] = _UnsafeTFSMLayer
        spec = {k: v for k, v in config.items() if k != "compile_config"}
        model = layer_serialization.deserialize(spec, custom)
        saved_compile = config.get("compile_config")
        if compile and saved_compile:
            compile_config.compile_from_config(model, saved_compile, custom)
    return model


# -- the archive -----------------------------------------------------------------------------
def _metadata_json() -> str:
    return json.dumps({"keras_version": KERAS_VERSION,
                       "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")})


def weights_bytes(model) -> bytes:
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as f:
        weights_h5.save_state(model, f)
    return buffer.getvalue()


def save_model(model, filepath: str) -> None:
    """Writes the `.keras` archive (atomically: a failure leaves no partial file)."""
    if not model.built:
        warnings.warn("You are saving a model that has not yet been built. It might not "
                      "contain any weights yet. Consider building the model first by calling "
                      "it on some data.", stacklevel=4)
    config_json = model_to_json(model)
    weights = weights_bytes(model)
    with file_io.atomic_path(filepath) as tmp, zipfile.ZipFile(tmp, "w") as zf:
        zf.writestr(METADATA_FILENAME, _metadata_json())
        zf.writestr(CONFIG_FILENAME, config_json)
        zf.writestr(WEIGHTS_FILENAME, weights)
        assets_store.write_assets(model, zf)   # vocabularies of lookup layers, as Keras


def save_model_dir(model, dirpath: str) -> None:
    """`zipped=False`: the archive's three members as files of directory `dirpath` (each
    written atomically; the weights last, as the file a reader needs complete)."""
    config_json = model_to_json(model)
    weights = weights_bytes(model)
    os.makedirs(os.path.join(dirpath, "assets"), exist_ok=True)   # as Keras
    assets_store.save_to_dir(model, os.path.join(dirpath, "assets"))
    for name, data in ((METADATA_FILENAME, _metadata_json().encode()),
                       (CONFIG_FILENAME, config_json.encode()), (WEIGHTS_FILENAME, weights)):
        with file_io.atomic_path(os.path.join(dirpath, name)) as tmp, open(tmp, "wb") as f:
            f.write(data)


def load_model_dir(dirpath: str, custom_objects=None, compile: bool = True,
                   safe_mode: bool = True):
    """A model saved with `zipped=False` (Keras 3's unzipped directory)."""
    try:
        with open(os.path.join(dirpath, CONFIG_FILENAME), "rb") as f:
            config = json.loads(f.read())
    except ValueError as e:
        raise ValueError(f"Invalid Keras model directory {dirpath}: config.json is not valid "
                         f"JSON ({e}).") from e
    model = deserialize_model(config, custom_objects, safe_mode, compile)
    weights_path = os.path.join(dirpath, WEIGHTS_FILENAME)
    if not os.path.exists(weights_path):
        raise ValueError(f"Expected a {WEIGHTS_FILENAME} or model.weights.npz file in "
                         f"{dirpath}.")
    with open(weights_path, "rb") as f:
        weights = f.read()
    assets_store.load_from_dir(model, os.path.join(dirpath, "assets"))
    with open_weights(weights, weights_path) as h5:
        weights_h5.load_state(model, h5)
    return model


def _read_member(zf: zipfile.ZipFile, name: str, filepath: str) -> bytes:
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ValueError(f"Invalid `.keras` file: filepath={filepath} has no '{name}' "
                         f"(members: {zf.namelist()}).") from None
    if info.file_size > _ZIP_BOMB_FLOOR_BYTES and \
            info.file_size > _ZIP_MAX_EXPANSION * info.compress_size:
        raise ValueError(f"Not allowed: ZIP member '{name}' declares {info.file_size} bytes but "
                         f"only {info.compress_size} are stored on disk; refusing to load a "
                         "potential decompression bomb.")
    try:
        return zf.read(name)
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise ValueError(f"Invalid `.keras` file: filepath={filepath}: cannot read '{name}' "
                         f"({e}); the file may be truncated or corrupted.") from e


def open_archive(filepath: str) -> zipfile.ZipFile:
    if not os.path.exists(filepath):
        raise ValueError(f"File not found: filepath={filepath}. Please ensure the file is an "
                         "accessible `.keras` zip file.")
    try:
        return zipfile.ZipFile(filepath, "r")
    except (zipfile.BadZipFile, OSError) as e:
        raise ValueError(f"Invalid `.keras` file: filepath={filepath} is not a zip archive "
                         f"({e}); the file may be truncated or corrupted. Please ensure the "
                         "file is an accessible `.keras` zip file.") from e


def open_weights(data: bytes, filepath: str) -> h5py.File:
    try:
        return h5py.File(io.BytesIO(data), "r")
    except OSError as e:
        raise OSError(f"Unable to read the weights in {filepath}: {e} (the file may be "
                      "truncated or corrupted)") from e


def load_model(filepath: str, custom_objects=None, compile: bool = True,
               safe_mode: bool = True):
    with open_archive(filepath) as zf:
        raw = _read_member(zf, CONFIG_FILENAME, filepath)
        try:
            config = json.loads(raw)
        except ValueError as e:
            raise ValueError(f"Invalid `.keras` file: filepath={filepath}: config.json is not "
                             f"valid JSON ({e}).") from e
        model = deserialize_model(config, custom_objects, safe_mode, compile)
        weights = _read_member(zf, WEIGHTS_FILENAME, filepath)
        assets_store.read_assets(model, zf)
    with open_weights(weights, filepath) as f:
        weights_h5.load_state(model, f)
    return model


def load_weights(model, filepath: str, skip_mismatch: bool = False) -> None:
    """The weights of a `.keras` archive into `model`."""
    with open_archive(filepath) as zf:
        weights = _read_member(zf, WEIGHTS_FILENAME, filepath)
    with open_weights(weights, filepath) as f:
        weights_h5.load_state(model, f, skip_mismatch=skip_mismatch)

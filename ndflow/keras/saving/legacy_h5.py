"""Keras' legacy HDF5 format (`model.save("m.h5")`, `load_model("m.h5")`,
`model.load_weights("w.h5", by_name=...)`), as Keras 3.15 writes and reads it — and as Keras 2
(tf.keras before TF 2.16) wrote it, which is how most published `.h5` models come.

The file: attributes `keras_version`, `backend`, `model_config` (JSON of `{"class_name",
"config"}`) and, for a compiled model, `training_config` (the compile arguments with the
optimizer's class and config); a `model_weights` group naming its layers in `layer_names`,
with one group per layer whose `weight_names` attribute lists its datasets (trainable, then
non-trainable weights, as `layer.weights` orders them), plus `top_level_model_weights`; and an
`optimizer_weights` group with the optimizer's variables. Weights load by layer order (or by
layer name with `by_name=True`). Reading instantiates only known classes from the JSON config
(see legacy_config.py) and reads datasets through weights_h5's guarded accessors: no code in
the file is ever run. Writes are atomic.
"""

from __future__ import annotations

import json
import warnings

import h5py
import numpy as np

from ndflow.keras.saving import compile_config, file_io, keras_archive, legacy_config, weights_h5

# An attribute larger than this does not fit an HDF5 object header: Keras splits such lists
# into numbered chunks (`layer_names0`, `layer_names1`, ...).
_HEADER_LIMIT = 64512


def _decode(value):
    return value.decode("utf8") if isinstance(value, bytes) else value


def _save_names(group, name: str, names: list) -> None:
    """Variable-length UTF-8 strings, as Keras' files hold them (an empty list: an empty
    float array, as Keras writes it)."""
    if not names:
        group.attrs[name] = np.asarray([])
        return
    chunks = 1
    while any(sum(len(n.encode("utf8")) for n in c) > _HEADER_LIMIT
              for c in np.array_split(np.asarray(names, dtype=object), chunks)) \
            and chunks < len(names):
        chunks += 1
    parts = np.array_split(np.asarray(names, dtype=object), chunks)
    keys = [name] if chunks == 1 else [f"{name}{i}" for i in range(chunks)]
    for key, part in zip(keys, parts):
        group.attrs.create(key, list(part), dtype=h5py.string_dtype())


def _load_names(group, name: str) -> list:
    if name in group.attrs:
        return [_decode(n) for n in group.attrs[name]]
    names, i = [], 0
    while f"{name}{i}" in group.attrs:
        names.extend(_decode(n) for n in group.attrs[f"{name}{i}"])
        i += 1
    return names


def _variable_name(var) -> str:
    return str(getattr(var, "path", None) or var.name).split(":")[0]


def _save_values(group, variables: list) -> None:
    names = [_variable_name(v) for v in variables]
    _save_names(group, "weight_names", names)
    for name, var in zip(names, variables):
        value = np.asarray(var.numpy())
        group.create_dataset(name, data=value)


def _load_values(group) -> list:
    out = []
    for name in _load_names(group, "weight_names"):
        parts = name.split("/")
        holder = weights_h5._group(group, "/".join(parts[:-1])) if len(parts) > 1 else group
        out.append(np.asarray(weights_h5._dataset(holder, parts[-1])))
    return out


def _layer_weights(layer) -> list:
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def _top_level_weights(model) -> list:
    in_layers = {id(w) for layer in model.layers for w in _layer_weights(layer)}
    return [w for w in _layer_weights(model) if id(w) not in in_layers]


# -- writing ---------------------------------------------------------------------------------
def save_weights_to_group(group, model) -> None:
    _save_names(group, "layer_names", [layer.name for layer in model.layers])
    group.attrs["backend"] = "tensorflow"
    group.attrs["keras_version"] = keras_archive.KERAS_VERSION
    # sorted, so that no group name is a prefix of a later one (as Keras)
    for layer in sorted(model.layers, key=lambda x: x.name):
        _save_values(group.create_group(layer.name), _layer_weights(layer))
    _save_values(group.create_group("top_level_model_weights"), _top_level_weights(model))


def _metadata(model, include_optimizer: bool) -> dict:
    spec = keras_archive.serialize_model(model)
    metadata = {"keras_version": keras_archive.KERAS_VERSION, "backend": "tensorflow",
                "model_config": {"class_name": spec["class_name"], "config": spec["config"]}}
    compiled = compile_config.get_compile_config(model) if include_optimizer else {}
    if compiled:
        training = {k: v for k, v in compiled.items() if k != "optimizer"}
        optimizer = compiled["optimizer"]
        training["optimizer_config"] = {"class_name": optimizer["class_name"],
                                        "config": optimizer["config"]}
        metadata["training_config"] = training
    return metadata


def save_model(model, filepath: str, include_optimizer: bool = True) -> None:
    """Writes `model` to a legacy `.h5` file (atomically)."""
    if not model.built:
        raise ValueError("You are saving a model that has not yet been built. Try building the "
                         "model first by calling it on some data or by using `build()`.")
    metadata = _metadata(model, include_optimizer)
    with file_io.atomic_path(filepath) as tmp, h5py.File(tmp, "w") as f:
        for key, value in metadata.items():
            f.attrs[key] = json.dumps(value, default=keras_archive._json_default) \
                if isinstance(value, dict) else value
        save_weights_to_group(f.create_group("model_weights"), model)
        optimizer = getattr(model, "optimizer", None)
        if include_optimizer and "training_config" in metadata and optimizer is not None:
            variables = [v for v in weights_h5.optimizer_variables(optimizer)
                         if not isinstance(v, weights_h5._Placeholder)]
            if variables:
                _save_values(f.create_group("optimizer_weights"), variables)


# -- reading ---------------------------------------------------------------------------------
def _set_weights(variables: list, values: list, name: str, skip_mismatch: bool) -> None:
    pairs = []
    for var, value in zip(variables, values):
        expected = tuple(var.shape)
        if expected != value.shape:
            message = (f"Shape mismatch in {name} for weight {_variable_name(var)}. Weight "
                       f"expects shape {expected}. Received saved weight with shape "
                       f"{value.shape}")
            if skip_mismatch:
                warnings.warn("Skipping loading weights: " + message, stacklevel=3)
                continue
            raise ValueError(message)
        pairs.append((var, value))
    weights_h5.assign_all([v for v, _ in pairs], [x for _, x in pairs])


def load_weights_from_group(group, model, skip_mismatch: bool = False) -> None:
    """Topological loading: the i-th saved layer with weights into the i-th layer with
    weights (Keras' rule, which ignores the layers' names)."""
    layers = [layer for layer in model.layers if _layer_weights(layer)]
    saved = [n for n in _load_names(group, "layer_names")
             if _load_names(weights_h5._group(group, n), "weight_names")]
    if len(saved) != len(layers):
        raise ValueError("Layer count mismatch when loading weights from file. Model expected "
                         f"{len(layers)} layers, found {len(saved)} saved layers.")
    for k, (name, layer) in enumerate(zip(saved, layers)):
        values = _load_values(weights_h5._group(group, name))
        variables = _layer_weights(layer)
        if len(values) != len(variables):
            raise ValueError(f"Weight count mismatch for layer #{k} (named {layer.name} in the "
                             f"current model, {name} in the save file). Layer expects "
                             f"{len(variables)} weight(s). Received {len(values)} saved "
                             "weight(s)")
        _set_weights(variables, values, f"layer #{k} (named {layer.name})", skip_mismatch)
    _load_top_level(group, model, skip_mismatch)


def load_weights_from_group_by_name(group, model, skip_mismatch: bool = False) -> None:
    """Loading by layer name: saved layers without a namesake in the model are skipped."""
    by_name: dict = {}
    for layer in model.layers:
        by_name.setdefault(layer.name, []).append(layer)
    for k, name in enumerate(_load_names(group, "layer_names")):
        values = _load_values(weights_h5._group(group, name))
        for layer in by_name.get(name, []):
            variables = _layer_weights(layer)
            if len(values) != len(variables):
                message = (f"Weight count mismatch for layer #{k} (named {layer.name}). Layer "
                           f"expects {len(variables)} weight(s). Received {len(values)} saved "
                           "weight(s)")
                if skip_mismatch:
                    warnings.warn("Skipping loading of weights: " + message, stacklevel=2)
                    continue
                raise ValueError(message)
            _set_weights(variables, values, f"layer #{k} (named {layer.name})", skip_mismatch)
    _load_top_level(group, model, skip_mismatch)


def _load_top_level(group, model, skip_mismatch: bool) -> None:
    if "top_level_model_weights" not in group:
        return
    values = _load_values(weights_h5._group(group, "top_level_model_weights"))
    variables = _top_level_weights(model)
    if len(values) != len(variables):
        raise ValueError("Weight count mismatch for top-level weights when loading weights "
                         f"from file. Model expects {len(variables)} top-level weight(s). "
                         f"Received {len(values)} saved top-level weight(s)")
    _set_weights(variables, values, "top-level model", skip_mismatch)


def _json_attr(f, name: str, filepath: str):
    value = f.attrs.get(name)
    if value is None:
        return None
    try:
        return json.loads(_decode(value))
    except ValueError as e:
        raise ValueError(f"Invalid `{name}` in the file at {filepath}: {e}") from None


def load_model(filepath: str, custom_objects=None, compile: bool = True,
               safe_mode: bool = True):
    """A model from a legacy `.h5` file (Keras 2's or 3's): built from its config, its weights
    loaded, and compiled with its training config (the optimizer's state restored when it
    matches) unless `compile=False`."""
    with weights_h5.open_h5(filepath) as f:
        model_config = _json_attr(f, "model_config", filepath)
        if model_config is None:
            raise ValueError(f"No model config found in the file at {filepath}.")
        spec = legacy_config.upgrade_model_config(model_config)
        model = keras_archive.deserialize_model(spec, custom_objects, safe_mode=safe_mode,
                                                compile=False)
        load_weights_from_group(weights_h5._group(f, "model_weights"), model)
        if not compile:
            return model
        training = _json_attr(f, "training_config", filepath)
        if training is None:
            warnings.warn("No training configuration found in the save file, so the model was "
                          "*not* compiled. Compile it manually.", stacklevel=2)
            return model
        try:
            compile_config.compile_from_config(
                model, legacy_config.upgrade_training_config(training), custom_objects)
        except (ValueError, TypeError) as e:
            warnings.warn(f"The model's compile arguments could not be restored ({e}); it is "
                          "returned uncompiled. Compile it manually.", stacklevel=2)
            return model
        if "optimizer_weights" in f:
            _restore_optimizer(model, weights_h5._group(f, "optimizer_weights"))
    return model


def _restore_optimizer(model, group) -> None:
    optimizer = model.optimizer
    if not optimizer.built:
        optimizer.build(model.trainable_variables)
    variables = [v for v in weights_h5.optimizer_variables(optimizer)
                 if not isinstance(v, weights_h5._Placeholder)]
    values = _load_values(group)
    names = _load_names(group, "weight_names")
    learning_rate = getattr(optimizer, "_learning_rate", None)
    if len(values) == len(variables) - 1 and len(variables) > 1 and \
            variables[1] is learning_rate and not any("learning_rate" in n for n in names):
        variables = variables[:1] + variables[2:]   # Keras 2 kept no learning-rate variable
    if len(values) != len(variables) or any(tuple(v.shape) != x.shape
                                            for v, x in zip(variables, values)):
        warnings.warn("Error in loading the saved optimizer state. As a result, your model is "
                      "starting with a freshly initialized optimizer.", stacklevel=3)
        return
    weights_h5.assign_all(variables, values)

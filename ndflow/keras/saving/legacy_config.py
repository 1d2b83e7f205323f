"""Model configs of the legacy HDF5 format brought to the Keras 3 form ndflow deserializes.

Keras 3 writes (and reads) a legacy `.h5` model config that is nearly its own form. Keras 2
(tf.keras before TF 2.16, and `tf_keras`) wrote another: `batch_input_shape` where Keras 3 has
`batch_shape`, a functional model's nodes as `[[layer, node, tensor, kwargs], ...]` lists,
its inputs and outputs as lists of `[layer, node, tensor]`, the class name `Model` for a
functional model, and dtypes as plain strings. Read-only: nothing here runs code from a file.
"""

from __future__ import annotations

import copy

# Keras 2 layers that wrapped raw TensorFlow calls: their configs name TF functions, which a
# Keras 3 (or ndflow) loader cannot rebuild without running code.
_OP_LAMBDAS = ("TFOpLambda", "SlicingOpLambda")


def _keras_tensor(history) -> dict:
    name, node_index, tensor_index = history[:3]
    return {"class_name": "__keras_tensor__",
            "config": {"keras_history": [name, node_index, tensor_index]}}


def _upgrade_node(node) -> dict:
    """A Keras 2 node (a list of `[layer, node, tensor, kwargs]` inbound entries) as Keras 3's
    `{"args": ..., "kwargs": ...}`: one tensor, or a list of them (merge layers)."""
    if isinstance(node, dict):
        return node
    entries = [e for e in node if isinstance(e, (list, tuple))]
    kwargs = {}
    if entries and len(entries[0]) > 3 and isinstance(entries[0][3], dict):
        kwargs = dict(entries[0][3])    # call arguments (training flags and the like)
    tensors = [_keras_tensor(e) for e in entries]
    return {"args": [tensors[0] if len(tensors) == 1 else tensors], "kwargs": kwargs}


def _upgrade_refs(refs):
    """Inputs/outputs of a functional model: one `[layer, node, tensor]`, or a list of them."""
    if isinstance(refs, list) and len(refs) == 1 and isinstance(refs[0], list):
        return list(refs[0])
    return refs


def _upgrade_input_config(config: dict) -> dict:
    config = dict(config)
    if "batch_input_shape" in config and "batch_shape" not in config:
        config["batch_shape"] = config.pop("batch_input_shape")
    return config


def _upgrade_layer_config(class_name: str, config: dict) -> dict:
    config = dict(config)
    axis = config.get("axis")
    if class_name == "BatchNormalization" and isinstance(axis, list) and len(axis) == 1:
        config["axis"] = axis[0]          # Keras 2 kept BatchNormalization's axis as a list
    return config


def _upgrade_object(spec: dict) -> dict:
    """One serialized layer or model (recursively: nested models and wrapped layers)."""
    class_name = spec.get("class_name")
    if class_name in _OP_LAMBDAS:
        raise ValueError(f"Cannot load a `{class_name}` layer ('{spec.get('name') or ''}'): "
                         "Keras 2 recorded a raw TensorFlow call there, which the legacy HDF5 "
                         "format stores as code. Rebuild the model in Python and load its "
                         "weights with `model.load_weights(...)`.")
    out = dict(spec)
    if class_name == "Model":
        out["class_name"] = "Functional"
    config = out.get("config")
    if isinstance(config, dict):
        config = _upgrade_input_config(config) if class_name == "InputLayer" else \
            _upgrade_layer_config(class_name, config)
        if "layers" in config and isinstance(config["layers"], list):   # a nested model
            config["layers"] = [_upgrade_object(layer) for layer in config["layers"]]
            for key in ("input_layers", "output_layers"):
                if key in config:
                    config[key] = _upgrade_refs(config[key])
        if isinstance(config.get("layer"), dict):                        # wrappers
            config["layer"] = _upgrade_object(config["layer"])
        out["config"] = config
    if "inbound_nodes" in out:
        out["inbound_nodes"] = [_upgrade_node(n) for n in out["inbound_nodes"]]
    return out


def upgrade_model_config(model_config: dict) -> dict:
    """The `model_config` attribute of a legacy `.h5` file, written by Keras 2 or 3, in
    Keras 3's form (a Keras 3 config comes back unchanged)."""
    if not isinstance(model_config, dict) or "class_name" not in model_config:
        raise ValueError(f"Could not interpret the model config: {model_config!r}")
    return _upgrade_object(copy.deepcopy(model_config))


def upgrade_training_config(training_config: dict) -> dict:
    """Keras 2's compile arguments in Keras 3's `compile_config` form: metric wrappers of a
    loss function by that function's name, the optimizer under `optimizer`."""
    config = dict(training_config)
    optimizer = config.pop("optimizer_config", None)
    if isinstance(optimizer, dict):
        optimizer = dict(optimizer)
        name = str(optimizer.get("class_name", ""))
        optimizer["class_name"] = name.split(">")[-1]      # tf_keras' "Custom>Adam"
        inner = dict(optimizer.get("config") or {})
        if "lr" in inner and "learning_rate" not in inner:  # Keras 2.0's name
            inner["learning_rate"] = inner.pop("lr")
        for key in ("jit_compile", "is_legacy_optimizer"):
            inner.pop(key, None)
        optimizer["config"] = inner
    config["optimizer"] = optimizer
    config["metrics"] = _upgrade_metrics(config.get("metrics"))
    config["weighted_metrics"] = _upgrade_metrics(config.get("weighted_metrics"))
    return config


def _upgrade_metrics(metrics):
    if isinstance(metrics, list):
        flat = []
        for m in metrics:   # Keras 2 nests one list per output
            flat.extend(_upgrade_metrics(m) if isinstance(m, list) else [_upgrade_metric(m)])
        return flat
    if isinstance(metrics, dict) and "class_name" not in metrics:
        return {k: _upgrade_metrics(v) for k, v in metrics.items()}
    return metrics


def _upgrade_metric(metric):
    if isinstance(metric, dict) and metric.get("class_name") == "MeanMetricWrapper":
        config = metric.get("config") or {}
        return config.get("name") or config.get("fn")
    return metric

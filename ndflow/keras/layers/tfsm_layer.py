"""Keras 3's `TFSMLayer`: a SavedModel (written by `model.export`, `tf.saved_model.save`,
TensorFlow's or ndflow's) reloaded as an inference layer whose call is one of its endpoints.

The loaded variables the endpoint functions use become the layer's weights (trainable ones
first, as Keras lists them). They are the very variables the functions read, so training the
layer inside a model updates what the endpoint computes. Rebuilding one from a config loads a
SavedModel (code of its own), so `from_config` refuses unless safe mode is off, as Keras.
"""

from __future__ import annotations

import os

from ndflow.core.api_export import keras_export
from ndflow.keras import serialization_lib
from ndflow.keras.layers.base_layer import Layer
from ndflow.saved_model.load_api import load


def _endpoint(obj, name: str, what: str):
    """The attribute `name` of the loaded object, else its signature `name`."""
    if hasattr(obj, name):
        return getattr(obj, name)
    signatures = getattr(obj, "signatures", {}) or {}
    if name in signatures:
        return signatures[name]
    select = ("Select another endpoint via the `call_endpoint` argument. "
              if what == "call" else "")
    raise ValueError(f"The endpoint '{name}' is neither an attribute of the reloaded "
                     "SavedModel, nor an entry in the `signatures` field of the reloaded "
                     f"SavedModel. {select}Available endpoints for this SavedModel: "
                     f"{list(signatures.keys())}")


def _variables_used_by(fns) -> tuple[list, list]:
    """(trainable, non-trainable) variables of the endpoints' concrete functions, each once,
    in the functions' order (Keras' _list_variables_used_by_fns)."""
    trainable, others, seen = [], [], set()
    for fn in fns:
        if hasattr(fn, "concrete_functions"):
            concrete = fn.concrete_functions
        elif hasattr(fn, "concrete"):       # a signature function
            concrete = [fn.concrete]
        else:
            concrete = [fn]
        for cf in concrete:
            for v in getattr(cf, "variables", ()):
                if id(v) not in seen:
                    seen.add(id(v))
                    (trainable if v.trainable else others).append(v)
    return trainable, others


@keras_export("keras.layers.TFSMLayer")
class TFSMLayer(Layer):
    """Loads a SavedModel as a layer, for inference (Keras 3 models cannot `load_model` a
    SavedModel): calling it runs the endpoint `call_endpoint`, or `call_training_endpoint`
    when called with `training=True` and one was given. Its variables are the layer's.

    Args:
      filepath: the SavedModel directory.
      call_endpoint: the signature or function to call: "serve" for `model.export`,
        "serving_default" for `tf.saved_model.save`.
      call_training_endpoint: optional endpoint for `training=True`.
      trainable: whether the reloaded variables are trainable.
      name: the layer's name.
      dtype: the layer's dtype.
    """

    # checkpointed as Keras 3 does: the loaded object's variables, under `_reloaded_obj`
    _tracked_attributes = ("_reloaded_obj",)

    def __init__(self, filepath, call_endpoint="serve", call_training_endpoint=None,
                 trainable=True, name=None, dtype=None):
        super().__init__(trainable=trainable, name=name, dtype=dtype)
        self._reloaded_obj = load(os.fspath(filepath))
        self.filepath = filepath
        self.call_endpoint = call_endpoint
        self.call_training_endpoint = call_training_endpoint
        self.call_endpoint_fn = _endpoint(self._reloaded_obj, call_endpoint, "call")
        fns = [self.call_endpoint_fn]
        if call_training_endpoint:
            self.call_training_endpoint_fn = _endpoint(self._reloaded_obj,
                                                       call_training_endpoint, "training")
            fns.append(self.call_training_endpoint_fn)
        trainable_vars, other_vars = _variables_used_by(fns)
        self._trainable_variables = list(trainable_vars)
        self._non_trainable_variables = list(other_vars)
        self.built = True   # Keras builds it at init: the weights exist already

    @Layer.trainable.setter
    def trainable(self, value) -> None:
        # the loaded variables keep their own flags; a frozen layer lists none as trainable
        self._trainable = bool(value)

    def call(self, inputs, training=False, **kwargs):
        if training and self.call_training_endpoint:
            return self.call_training_endpoint_fn(inputs, **kwargs)
        return self.call_endpoint_fn(inputs, **kwargs)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"filepath": self.filepath, "call_endpoint": self.call_endpoint,
                       "call_training_endpoint": self.call_training_endpoint})
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """Refused unless `safe_mode=False` (or unsafe deserialization is on): it loads an
        external SavedModel, whose graph is code."""
        if safe_mode is None:
            safe_mode = serialization_lib.in_safe_mode()
        if safe_mode is not False:
            raise ValueError(
                "Requested the deserialization of a `TFSMLayer`, which loads an external "
                "SavedModel. This carries a potential risk of arbitrary code execution and "
                "thus it is disallowed by default. If you trust the source of the artifact, "
                "you can override this error by passing `safe_mode=False` to the loading "
                "function, or calling `keras.config.enable_unsafe_deserialization().")
        return cls(**config)


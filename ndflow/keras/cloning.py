"""`tf.keras.models.clone_model`: the same architecture with new weights, rebuilt from the
model's config (functional and Sequential models)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.functional import Functional
from ndflow.keras.sequential import Sequential


@keras_export("keras.models.clone_model")
def clone_model(model, input_tensors=None, clone_function=None, call_function=None,
                recursive=False, **kwargs):
    """A new model with the same architecture as `model` and freshly initialized weights
    (rebuilt from `model.get_config()`; copy the weights with
    `clone.set_weights(model.get_weights())`).

    Args:
      model: a functional or Sequential model.
      input_tensors: must be None (not supported by ndflow yet).
      clone_function: must be None (not supported yet).
      call_function: must be None (not supported yet).
      recursive: accepted for Keras' signature.
      **kwargs: accepted for Keras' signature.

    Returns:
      The new model (not compiled).

    Raises:
      NotImplementedError: `input_tensors`, `clone_function` or `call_function` given.
    """
    if input_tensors is not None or clone_function is not None or call_function is not None:
        raise NotImplementedError("clone_model(input_tensors=, clone_function=, "
                                  "call_function=) are not supported by ndflow yet.")
    if not isinstance(model, (Functional, Sequential)):
        raise ValueError("Arguments clone_function and input_tensors are only supported for "
                         "Sequential models or Functional models. Received model of type "
                         f"'{type(model).__name__}'")
    return type(model).from_config(model.get_config(), custom_objects=kwargs.get(
        "custom_objects"))

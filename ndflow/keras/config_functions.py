"""`tf.keras.config`'s switches beyond floatx/epsilon/image_data_format (which live in
backend_functions, shared with tf.keras.backend): the backend name, traceback filtering,
flash attention, Keras' fit caps for debugging and the NNX flag; and the top-level
`keras.version()` and `keras.device(...)`."""

from __future__ import annotations

from ndflow.core import scopes
from ndflow.core.api_export import keras_export
from ndflow.keras import global_config
from ndflow.keras.saving.keras_archive import KERAS_VERSION

_SETTINGS = global_config.SETTINGS
_KERAS_BACKENDS = ("tensorflow", "jax", "torch", "numpy", "openvino")


@keras_export("keras.config.backend")
def backend() -> str:
    """The name of the Keras backend: always "tensorflow" (ndflow is TensorFlow's API).

    Returns:
      The string "tensorflow".
    """
    return "tensorflow"


@keras_export("keras.config.set_backend")
def set_backend(backend) -> None:
    """Selects Keras' backend: "tensorflow" is accepted (it is already active); Keras'
    other backends are not part of ndflow.

    Args:
      backend: a Keras backend name.

    Raises:
      ValueError: any backend other than "tensorflow" (an unknown name says so).
    """
    if backend not in _KERAS_BACKENDS:
        raise ValueError("Available backends are ('tensorflow', 'jax', 'torch', 'numpy' and "
                         f"'openvino'). Received: backend={backend}")
    if backend != "tensorflow":
        raise ValueError(f"ndflow provides Keras' 'tensorflow' backend only; backend={backend} "
                         "is not available")


@keras_export("keras.config.is_nnx_enabled")
def is_nnx_enabled() -> bool:
    """Whether Keras' Flax NNX integration is on: always False (NNX belongs to the JAX
    backend).

    Returns:
      False.
    """
    return False    # NNX is a JAX-backend feature


@keras_export("keras.config.enable_traceback_filtering")
def enable_traceback_filtering() -> None:
    """Turns on Keras' error context (the default): an exception raised inside a layer's
    `call` is re-raised with the layer's name and the arguments it received added to the
    message.
    """
    _SETTINGS["traceback_filtering"] = True


@keras_export("keras.config.disable_traceback_filtering")
def disable_traceback_filtering() -> None:
    """Turns off Keras' error context: exceptions from a layer's `call` propagate as they
    were raised (see `enable_traceback_filtering`).
    """
    _SETTINGS["traceback_filtering"] = False


@keras_export("keras.config.is_traceback_filtering_enabled")
def is_traceback_filtering_enabled() -> bool:
    """Whether Keras' error context for layer calls is on (see
    `enable_traceback_filtering`).

    Returns:
      A bool (True by default).
    """
    return _SETTINGS["traceback_filtering"]


@keras_export("keras.config.enable_flash_attention")
def enable_flash_attention() -> None:
    """Resets the flash-attention setting to its default, None ("use it where the inputs
    allow"), as Keras records it; see `is_flash_attention_enabled`.
    """
    _SETTINGS["flash_attention"] = None


@keras_export("keras.config.disable_flash_attention")
def disable_flash_attention() -> None:
    """Records that flash attention is off (`is_flash_attention_enabled()` then returns
    False). ndflow has no separate flash kernel for Keras' attention to switch.
    """
    _SETTINGS["flash_attention"] = False


@keras_export("keras.config.is_flash_attention_enabled")
def is_flash_attention_enabled():
    """The flash-attention setting: None (the default, or after `enable_flash_attention`:
    used where the inputs allow) or False (after `disable_flash_attention`).

    Returns:
      None or False.
    """
    return _SETTINGS["flash_attention"]


@keras_export("keras.config.max_epochs")
def max_epochs():
    """The cap on `epochs` that every `fit` obeys (None: no cap); set with
    `set_max_epochs`, for quick debugging runs.

    Returns:
      An int or None.
    """
    return _SETTINGS["max_epochs"]


@keras_export("keras.config.set_max_epochs")
def set_max_epochs(max_epochs) -> None:
    """Caps the epochs every `fit` runs, whatever its `epochs` argument (for quick
    debugging runs).

    Args:
      max_epochs: an int, or None for no cap.
    """
    _SETTINGS["max_epochs"] = max_epochs


@keras_export("keras.config.max_steps_per_epoch")
def max_steps_per_epoch():
    """The cap on the steps of each `fit` epoch (None: no cap); set with
    `set_max_steps_per_epoch`.

    Returns:
      An int or None.
    """
    return _SETTINGS["max_steps_per_epoch"]


@keras_export("keras.config.set_max_steps_per_epoch")
def set_max_steps_per_epoch(max_steps_per_epoch) -> None:
    """Caps the steps of every `fit` epoch (for quick debugging runs).

    Args:
      max_steps_per_epoch: an int, or None for no cap.
    """
    _SETTINGS["max_steps_per_epoch"] = max_steps_per_epoch


@keras_export("keras.version")
def version() -> str:
    """The Keras version whose API and file formats ndflow's Keras follows (the one
    TensorFlow 2.21 ships).

    Returns:
      A version string.
    """
    return KERAS_VERSION


@keras_export("keras.device")
def device(device_name):
    """A context manager placing the ops and variables created inside it on a device.

    Args:
      device_name: e.g. "cpu:0" or "gpu:0".

    Returns:
      The `tf.device` scope.

    Example:

    >>> with tf.keras.device("cpu:0"):
    ...     x = tf.keras.ops.ones((2,))
    >>> x.shape
    TensorShape([2])
    """
    return scopes.device(device_name)

"""The execution switches of `tf.config` that programs set at start-up.

- `tf.config.experimental.enable_op_determinism()`: `core/determinism.py`'s flag (random ops
  without any seed raise TensorFlow's RuntimeError, `Generator.from_non_deterministic_state`
  refuses, convolutions stop choosing their memory layout by timing, a parallel
  `Dataset.map` keeps its input order whatever its `deterministic` says) and ATen's
  deterministic mode (`torch.use_deterministic_algorithms(True, warn_only=True)`, cuDNN's
  deterministic algorithms, a fixed cuBLAS workspace): on the CPU, as in TensorFlow, no op
  raises for lack of a deterministic kernel; on a GPU an ATen kernel without one warns.
- `get/set_synchronous_execution`: recorded; ndflow runs every op synchronously.
- `get/set_device_policy`: TensorFlow's policies, recorded; ndflow copies an input to the
  device of the op reading it in every policy (TensorFlow's 'silent').
- `get_device_details(device)`: {} for the CPU; a GPU's name and compute capability.
- `tf.config.experimental_run_functions_eagerly` / `experimental_functions_run_eagerly`:
  TensorFlow's deprecated aliases, with its deprecation warning (once per process).
"""

from __future__ import annotations

import os
import sys

import torch

from ndflow.core import determinism, strict_mode
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.runtime import execution_config_docs, function
from ndflow.runtime.device_config import PhysicalDevice

_synchronous = True
_POLICIES = ("silent", "warn", "explicit", "silent_for_int32")
_device_policy = "silent"
_warned: set = set()


@tf_export("config.experimental.enable_op_determinism", v1=[])
def enable_op_determinism() -> None:
    """`tf.config.experimental.enable_op_determinism`: run ops deterministically from now on
    (see the module's text)."""
    determinism.set_enabled(True)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS's reproducible mode
    # ATen fills uninitialized memory in this mode unless told not to; no kernel of ndflow
    # reads memory it did not write, so the fill would only cost time.
    torch.utils.deterministic.fill_uninitialized_memory = False
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.deterministic = True


def disable_op_determinism() -> None:
    """TensorFlow's (unexported) `config.disable_op_determinism`: undoes the call above."""
    determinism.set_enabled(False)
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.deterministic = False
    torch.utils.deterministic.fill_uninitialized_memory = True


@tf_export("config.experimental.get_synchronous_execution")
def get_synchronous_execution() -> bool:
    """`tf.config.experimental.get_synchronous_execution` (True unless set off)."""
    return _synchronous


@tf_export("config.experimental.set_synchronous_execution")
def set_synchronous_execution(enable) -> None:
    """`tf.config.experimental.set_synchronous_execution`: None restores the default (on)."""
    global _synchronous
    _synchronous = True if enable is None else bool(enable)


@tf_export("config.experimental.get_device_policy")
def get_device_policy() -> str:
    """`tf.config.experimental.get_device_policy`: 'silent' unless set."""
    return _device_policy


@tf_export("config.experimental.set_device_policy")
def set_device_policy(device_policy) -> None:
    """`tf.config.experimental.set_device_policy`: 'silent', 'warn', 'explicit',
    'silent_for_int32' or None (the default, 'silent')."""
    global _device_policy
    if device_policy is None:
        _device_policy = "silent"
    elif isinstance(device_policy, str) and device_policy in _POLICIES:
        _device_policy = device_policy
    else:
        raise ValueError(f"Invalid argument `device_policy`: {device_policy!r}. Please refer to "
                         "https://www.tensorflow.org/api_docs/python/tf/config/experimental/"
                         "set_device_policy for valid `device_policy` arguments.")


@tf_export("config.experimental.get_device_details")
def get_device_details(device) -> dict:
    """`tf.config.experimental.get_device_details`: {} for a CPU; for a GPU its
    'device_name' and 'compute_capability' (major, minor)."""
    if not isinstance(device, PhysicalDevice):
        raise ValueError(f"device must be a tf.config.PhysicalDevice, but got: {device}")
    if device.device_type != "GPU":
        return {}
    index = int(device.name.rsplit(":", 1)[1])
    return {"device_name": torch.cuda.get_device_name(index),
            "compute_capability": tuple(torch.cuda.get_device_capability(index))}


def _deprecated(name: str, instructions: str) -> None:
    """TensorFlow's deprecation warning for `name`, once per process."""
    if name in _warned:
        return
    _warned.add(name)
    caller = sys._getframe(2)
    strict_mode.log_deprecation(f"From {caller.f_code.co_filename}:{caller.f_lineno}: {name} "
                                f"(from {__name__}) is deprecated and will be removed in a "
                                f"future version.\nInstructions for updating:\n{instructions}")


@tf_export("config.experimental_run_functions_eagerly")
def experimental_run_functions_eagerly(run_eagerly) -> None:
    """Deprecated alias of `tf.config.run_functions_eagerly`."""
    _deprecated("experimental_run_functions_eagerly",
                "Use `tf.config.run_functions_eagerly` instead of the experimental version.")
    function.run_functions_eagerly(run_eagerly)


@tf_export("config.experimental_functions_run_eagerly")
def experimental_functions_run_eagerly() -> bool:
    """Deprecated alias of `tf.config.functions_run_eagerly`."""
    _deprecated("experimental_functions_run_eagerly",
                "Use tf.config.functions_run_eagerly instead of the experimental version.")
    return function.functions_run_eagerly()


attach(globals(), execution_config_docs.DOCS)

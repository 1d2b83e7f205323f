"""The docstrings of execution_config.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "enable_op_determinism": """Makes ops run deterministically from now on.

    Ops then give the same results on the same inputs and hardware: deterministic kernels
    are chosen, a parallel `Dataset.map` keeps its input order, and random ops without any
    seed raise RuntimeError (set one, e.g. with `tf.keras.utils.set_random_seed`). On a GPU,
    a kernel without a deterministic version warns.
    """,
    "get_device_details": """Details of a physical device.

    Args:
      device: a `tf.config.PhysicalDevice`.

    Returns:
      A dict: empty for a CPU; for a GPU 'device_name' and 'compute_capability'.

    Example:
      >>> cpu = tf.config.list_physical_devices('CPU')[0]
      >>> tf.config.experimental.get_device_details(cpu)
      {}
    """,
    "get_device_policy": """How ops treat inputs that live on another device.

    Returns:
      'silent' (copy silently, the default), 'warn', 'explicit' or 'silent_for_int32'.

    Example:
      >>> tf.config.experimental.get_device_policy()
      'silent'
    """,
    "set_device_policy": """Sets how ops treat inputs that live on another device.

    ndflow records the policy; inputs are always copied as needed.

    Args:
      device_policy: 'silent', 'warn', 'explicit', 'silent_for_int32', or None for the
        default.

    Raises:
      ValueError: for another value.
    """,
    "get_synchronous_execution": """Whether eager ops run synchronously (True unless turned off).

    Returns:
      A bool.

    Example:
      >>> tf.config.experimental.get_synchronous_execution()
      True
    """,
    "set_synchronous_execution": """Sets whether eager ops run synchronously.

    Recorded: ndflow runs every op synchronously.

    Args:
      enable: a bool, or None to restore the default (True).
    """,
    "experimental_functions_run_eagerly": """Whether `tf.function`s run eagerly (deprecated).

    The deprecated alias of `tf.config.functions_run_eagerly`.

    Returns:
      A bool.

    Example:
      >>> tf.config.experimental_functions_run_eagerly()
      False
    """,
    "experimental_run_functions_eagerly": """Makes `tf.function`s run eagerly or not (deprecated).

    The deprecated alias of `tf.config.run_functions_eagerly`.

    Args:
      run_eagerly: a bool.
    """,
}

"""Whether op determinism is on (`tf.config.experimental.enable_op_determinism`).

The flag lives at layer 0 so that every layer can read it: the op layer's seed rules
(`get_seed` refuses an unseeded random op, as TensorFlow's does), kernels that would
otherwise choose between implementations by timing them (`kernels/autotune.py`), and the
runtime, which sets ATen's own deterministic mode (`runtime/determinism_config.py`).
"""

from __future__ import annotations

_enabled = False

SEED_REQUIRED = ("Random ops require a seed to be set when determinism is enabled. Please set "
                 "a seed before running the op, e.g. by calling tf.random.set_seed(1).")


def enabled() -> bool:
    """TensorFlow's `config.is_op_determinism_enabled()`."""
    return _enabled


def set_enabled(flag: bool) -> None:
    """Sets the flag only; `runtime/determinism_config.py` also switches ATen."""
    global _enabled
    _enabled = bool(flag)

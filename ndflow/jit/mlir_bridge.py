"""`tf.config.experimental.enable_mlir_bridge` / `disable_mlir_bridge`: the MLIR bridge rollout.

TensorFlow keeps the state as ConfigProto's `MlirBridgeRollout` enum, which its eager context
reports (`context().enable_mlir_bridge`): UNSPECIFIED (0) by default, or ENABLED (1) /
DISABLED (2) from TF_XLA_FLAGS' `--tf_mlir_enable_mlir_bridge` until one of these calls sets
it. ndflow keeps the same state (`mlir_bridge_rollout()`); its JIT has one bridge, so the
setting changes which clusters compile in no way.
"""

from __future__ import annotations

import re

from ndflow.core import config
from ndflow.core.api_export import tf_export
from ndflow.jit import flags

MLIR_BRIDGE_ROLLOUT_UNSPECIFIED = 0
MLIR_BRIDGE_ROLLOUT_ENABLED = 1
MLIR_BRIDGE_ROLLOUT_DISABLED = 2

_rollout: int | None = None  # set by enable/disable; None: from TF_XLA_FLAGS


def mlir_bridge_rollout() -> int:
    """TensorFlow's `context().enable_mlir_bridge`: 0 unspecified, 1 enabled, 2 disabled."""
    if _rollout is not None:
        return _rollout
    given = any(re.fullmatch(r"--?tf_mlir_enable_mlir_bridge(=.*)?", t, re.S)
                for t in flags._tokens("TF_XLA_FLAGS", config.get(config.TF_XLA_FLAGS)))
    if not given:
        return MLIR_BRIDGE_ROLLOUT_UNSPECIFIED
    return (MLIR_BRIDGE_ROLLOUT_ENABLED if flags.xla_flags().tf_mlir_enable_mlir_bridge
            else MLIR_BRIDGE_ROLLOUT_DISABLED)


def _set(rollout: int | None) -> None:
    global _rollout
    _rollout = rollout


@tf_export("config.experimental.enable_mlir_bridge")
def enable_mlir_bridge():
    """Enables the MLIR-based TensorFlow compiler bridge (TensorFlow's state; see above)."""
    _set(MLIR_BRIDGE_ROLLOUT_ENABLED)


@tf_export("config.experimental.disable_mlir_bridge")
def disable_mlir_bridge():
    """Disables the MLIR-based TensorFlow compiler bridge."""
    _set(MLIR_BRIDGE_ROLLOUT_DISABLED)

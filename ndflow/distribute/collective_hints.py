"""`tf.distribute.experimental.CollectiveHints`: TensorFlow's deprecated name for collective
options. Constructing one returns a `tf.distribute.experimental.CommunicationOptions` with
the same `bytes_per_pack` and `timeout_seconds` (and logs the deprecation once), as in
TensorFlow 2.21."""

from __future__ import annotations

from ndflow.core import strict_mode
from ndflow.core.api_export import tf_export
from ndflow.distribute.multi_worker_mirrored_strategy import CommunicationOptions


@tf_export("distribute.experimental.CollectiveHints")
class CollectiveHints:
    """Deprecated: use `tf.distribute.experimental.CommunicationOptions`."""

    _warned = False

    def __new__(cls, bytes_per_pack=0, timeout_seconds=None):
        if not CollectiveHints._warned:
            CollectiveHints._warned = True
            strict_mode.log_deprecation(
                "From %s: __new__ (from ndflow.distribute.collective_hints) is deprecated "
                "and will be removed in a future version.\nInstructions for updating:\nuse "
                "distribute.experimental.CommunicationOptions instead", __name__)
        if bytes_per_pack < 0:
            raise ValueError(f"Argument `bytes_per_pack` must be >=0, Received "
                             f"{bytes_per_pack}.")
        return CommunicationOptions(bytes_per_pack=bytes_per_pack,
                                    timeout_seconds=timeout_seconds)

    def __init__(self, bytes_per_pack=0, timeout_seconds=None):
        pass  # never runs: __new__ returns a CommunicationOptions

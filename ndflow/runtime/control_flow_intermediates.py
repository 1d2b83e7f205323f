"""`tf.compat.v1.experimental.output_all_intermediates`: TensorFlow's override of whether v2
control flow ops (If, While) built in a TF1 graph output every intermediate of their bodies.

TensorFlow needs those extra outputs when Keras freezes a forward graph before its gradient is
built: the gradient reads the body's intermediates through them. ndflow's If/While gradients
rematerialize the bodies instead (`copy_function_body`), so the forward ops never need extra
outputs and the setting changes no graph; it is kept, and reported by
`output_all_intermediates_override()`, as TensorFlow keeps it: True, False, or None for the
default behaviour.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export

_override: bool | None = None


@tf_export(v1=["experimental.output_all_intermediates"])
def set_output_all_intermediates(state):
    """Whether v2 control flow outputs all intermediates: True, False, or None (default)."""
    global _override
    _override = state


def output_all_intermediates_override() -> bool | None:
    """The state last passed to `output_all_intermediates` (None: TensorFlow's default)."""
    return _override

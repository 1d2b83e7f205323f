"""Layer 6: Keras (`tf.keras`): optimizers, initializers, mixed precision."""

from ndflow.keras import mixed_precision, optimizers  # noqa: F401 - declares their exports

"""Layer 6: Keras (`tf.keras`): optimizers, initializers, mixed precision."""

from ndflow.keras import initializers, mixed_precision, optimizers  # noqa: F401

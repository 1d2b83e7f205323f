"""Layer 6: Keras (`tf.keras`): optimizers, initializers."""

from ndflow.keras import initializers, optimizers  # noqa: F401

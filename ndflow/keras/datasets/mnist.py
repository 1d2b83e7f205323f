"""`tf.keras.datasets.mnist`: MNIST digits (implemented in _mnist.py)."""

from ndflow.keras.datasets._mnist import load_mnist as load_data  # noqa: F401

"""`tf.keras.datasets.fashion_mnist`: Fashion-MNIST (implemented in _mnist.py)."""

from ndflow.keras.datasets._mnist import load_fashion_mnist as load_data  # noqa: F401

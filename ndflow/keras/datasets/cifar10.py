"""`tf.keras.datasets.cifar10`: CIFAR-10 (implemented in _cifar.py)."""

from ndflow.keras.datasets._cifar import load_cifar10 as load_data  # noqa: F401

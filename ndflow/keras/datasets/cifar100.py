"""`tf.keras.datasets.cifar100`: CIFAR-100 (implemented in _cifar.py)."""

from ndflow.keras.datasets._cifar import load_cifar100 as load_data  # noqa: F401

"""`tf.keras.datasets.california_housing` (implemented in _housing.py)."""

from ndflow.keras.datasets._housing import load_california_housing as load_data  # noqa: F401

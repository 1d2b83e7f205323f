"""`tf.keras.datasets.boston_housing` (implemented in _housing.py)."""

from ndflow.keras.datasets._housing import load_boston_housing as load_data  # noqa: F401

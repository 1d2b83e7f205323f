"""`hvd.callbacks`: Horovod's Keras callbacks (`BroadcastGlobalVariablesCallback`,
`MetricAverageCallback`).

Keras is layer 6 and this package layer 5, so the callbacks are defined in
ndflow/keras/callbacks/horovod_callbacks.py, which registers them here when it is imported;
the first look-up of one imports Keras' callbacks (through the public namespace, as Keras
loads on first use), so `hvd.callbacks.BroadcastGlobalVariablesCallback(0)` and
`hvd.BroadcastGlobalVariablesCallback(0)` work as in `horovod.tensorflow.keras`.
"""

from __future__ import annotations

from ndflow.core import lazy_api

_REGISTERED: dict = {}


def registered() -> dict:
    """Name -> callback class, Keras' callbacks imported first (they register themselves)."""
    if not _REGISTERED:
        lazy_api.public("keras.callbacks.Callback")
    return _REGISTERED


def __getattr__(name: str):
    try:
        return registered()[name]
    except KeyError:
        raise AttributeError(f"module 'hvd.callbacks' has no attribute {name!r}") from None


def register(cls):
    """Makes Keras callback class `cls` available as `hvd.callbacks.<name>`."""
    _REGISTERED[cls.__name__] = cls
    globals()[cls.__name__] = cls
    return cls

"""`hvd.callbacks`: Horovod's Keras callbacks (`BroadcastGlobalVariablesCallback`,
`MetricAverageCallback`).

Keras is layer 6 and this package layer 5, so the callbacks are defined in
ndflow/keras/callbacks/horovod_callbacks.py, which registers them here when it is imported
(`import ndflow` imports Keras): `hvd.callbacks.BroadcastGlobalVariablesCallback(0)` and
`hvd.BroadcastGlobalVariablesCallback(0)` then work as in `horovod.tensorflow.keras`.
"""

from __future__ import annotations

_REGISTERED: dict = {}


def register(cls):
    """Makes Keras callback class `cls` available as `hvd.callbacks.<name>`."""
    _REGISTERED[cls.__name__] = cls
    globals()[cls.__name__] = cls
    return cls

"""`tf.keras.callbacks.RemoteMonitor`: posts each epoch's logs to a server as JSON (in a form
field, or as the request body with `send_as_json=True`), with `requests` as Keras does."""

from __future__ import annotations

import json
import warnings

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.keras.callbacks.callback import Callback


def _requests():
    """`requests`, imported on first use (it costs `import ndflow` time otherwise); None when
    it is not installed, where Keras' callback raises ImportError."""
    try:
        import requests
    except ImportError:
        return None
    return requests


def _scalar(value):
    """A log value as JSON takes it: NumPy arrays and scalars, and eager tensors, unwrapped."""
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        return value.item()
    return value


@keras_export("keras.callbacks.RemoteMonitor")
class RemoteMonitor(Callback):
    """Streams `{"epoch": epoch, **logs}` to `root + path` with an HTTP POST at each epoch's
    end: as the form field `field` holding the JSON text, or as a JSON body.

    Args:
      root: the server's root URL.
      path: the path appended to `root`.
      field: the form field holding the JSON (unless `send_as_json`).
      headers: optional dict of HTTP headers.
      send_as_json: whether to send the JSON as the request body.
    """

    def __init__(self, root="http://localhost:9000", path="/publish/epoch/end/", field="data",
                 headers=None, send_as_json=False):
        super().__init__()
        self.root = root
        self.path = path
        self.field = field
        self.headers = headers
        self.send_as_json = send_as_json

    def on_epoch_end(self, epoch, logs=None):
        requests = _requests()
        if requests is None:
            raise ImportError("RemoteMonitor requires the `requests` library.")
        send = {"epoch": epoch}
        send.update({k: _scalar(v) for k, v in (logs or {}).items()})
        try:
            if self.send_as_json:
                requests.post(self.root + self.path, json=send, headers=self.headers)
            else:
                requests.post(self.root + self.path, {self.field: json.dumps(send)},
                              headers=self.headers)
        except requests.exceptions.RequestException:
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}",
                          stacklevel=2)

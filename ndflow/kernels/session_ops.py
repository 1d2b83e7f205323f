"""Kernels of the session tensor handle ops (ops/session_ops.py).

A Session's runtime context holds a `SessionTensors` store (`session_tensors`, set by the
Session); eagerly and in functions there is none, and the ops fail as TF's do there ("called
on null session state"). Stored values are the ATen tensors (or string arrays) themselves."""

from __future__ import annotations

import itertools
import threading

import numpy as np

from ndflow.core.errors import FailedPreconditionError, InternalError, InvalidArgumentError
from ndflow.core.graph_def import dtype_name
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.ops import session_ops


class SessionTensors:
    """The tensors a Session keeps under handle strings, and its id counter."""

    def __init__(self):
        self.values: dict = {}   # handle -> (value, dtype)
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def add(self, node_name: str, device: str, value, dtype) -> str:
        with self._lock:
            handle = f"{node_name};{next(self._ids)};{device}"
            self.values[handle] = (value, dtype)
        return handle

    def get(self, handle: str):
        with self._lock:
            entry = self.values.get(handle)
        if entry is None:
            raise InvalidArgumentError(None, None, f"The tensor with handle '{handle}' is not "
                                       "in the session store.")
        return entry

    def delete(self, handle: str) -> None:
        with self._lock:
            if self.values.pop(handle, None) is None:
                raise InvalidArgumentError(None, None, f"The tensor with handle '{handle}' is "
                                           "not in the session store.")


def _store(node, op_name: str) -> SessionTensors:
    store = getattr(node.ctx, "session_tensors", None)
    if store is None:
        raise FailedPreconditionError(None, None, f"{op_name} called on null session state")
    return store


def _device_name(node) -> str:
    dev = getattr(node, "device", None)
    kind = "GPU" if getattr(dev, "type", "cpu") == "cuda" else "CPU"
    index = getattr(dev, "index", None) or 0
    return f"/job:localhost/replica:0/task:0/device:{kind}:{index}"


def _handle_of(value) -> str:
    arr = np.asarray(value, dtype=object).reshape(-1)
    h = arr[0] if arr.size else b""
    return h.decode() if isinstance(h, bytes) else str(h)


def _get_handle(op_name: str):
    def factory(node):
        dtype = node.input_dtypes[0]
        device = _device_name(node)

        def run(value):
            store = _store(node, op_name)
            handle = store.add(node.name, device, value, dtype)
            return np.array(handle.encode(), dtype=object)
        return run
    return factory


def _get_tensor(node):
    want = node.attrs["dtype"]

    def run(handle):
        store = _store(node, "GetSessionTensor")
        value, dtype = store.get(_handle_of(handle))
        if dtype is not want:
            raise InternalError(None, None, f"Output 0 of type {dtype_name(dtype)} does not "
                                f"match declared output type {dtype_name(want)} for node "
                                f"{{{{node {node.name}}}}}")
        return value
    return run


def _delete_tensor(node):
    def run(handle):
        _store(node, "DeleteSessionTensor").delete(_handle_of(handle))
    return run


for _op, _factory in ((session_ops.GetSessionHandle, _get_handle("GetSessionHandle")),
                      (session_ops.GetSessionHandleV2, _get_handle("GetSessionHandleV2")),
                      (session_ops.GetSessionTensor, _get_tensor),
                      (session_ops.DeleteSessionTensor, _delete_tensor)):
    kernel(_op)(_factory)
    host_kernel(_op)(_factory)

"""`TensorHandle`: what `Session.run` returns for a fetched GetSessionHandle output — a tensor
kept in the session, named by a handle string. `eval()` reads it back (a GetSessionTensor
subgraph built once per graph and handle device), `delete()` frees it, and a TensorHandle fed
to a placeholder feeds the kept value itself, as in TensorFlow. A handle garbage collected
while still owning its tensor frees it (TF batches these deletions; the effect is the same).
"""

from __future__ import annotations

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph_def import dtype_name
from ndflow.ops.session_ops import HANDLE_OPS, get_session_tensor, handle_device
from ndflow.runtime.session_values import fetch_value


class TensorHandle:
    """A handle for a live tensor in a session ("name;id;device")."""

    def __init__(self, handle, dtype, session):
        self._handle = handle.decode() if isinstance(handle, bytes) else str(handle)
        self._dtype = dtype
        self._session = session
        self._auto_gc_enabled = True

    def __del__(self):
        if getattr(self, "_auto_gc_enabled", False):
            store = getattr(self._session.runtime_context, "session_tensors", None)
            if store is not None:
                store.values.pop(self._handle, None)

    def __str__(self):
        return self._handle

    @property
    def handle(self) -> str:
        """The string representation of this handle."""
        return self._handle

    def eval(self):
        """The value of the tensor this handle names."""
        if not self._auto_gc_enabled:
            raise TypeError(f"Persistent tensor {self.handle} may have already been deleted.")
        graph = self._session.graph
        key = ("reader", self._handle.split(";")[0], handle_device(self._handle), self._dtype)
        readers = graph.__dict__.setdefault("_ndflow_handle_readers", {})
        if key not in readers:
            with graph.as_default():
                readers[key] = get_session_tensor(self._handle, self._dtype)
        holder, reader = readers[key]
        return self._session.run(reader, feed_dict={holder: self._handle})

    def delete(self) -> None:
        """Frees the tensor now."""
        if not self._auto_gc_enabled:
            raise TypeError(f"Persistent tensor {self.handle} may have already been deleted.")
        self._auto_gc_enabled = False
        self._session.runtime_context.session_tensors.delete(self._handle)

    def get_raw_handle(self) -> str:
        """The handle string; the caller now owns the tensor's lifetime (no automatic
        deletion)."""
        self._auto_gc_enabled = False
        return self._handle


def wrap_fetched(session, tensor, value):
    """A fetched value as the user sees it: a TensorHandle for a handle op's output."""
    if tensor.op.type in HANDLE_OPS:
        return TensorHandle(value, tensor.op.inputs[0].dtype, session)
    return value


def fed_value(session, tensor, value):
    """A TensorHandle fed to `tensor` stands for the tensor it keeps."""
    if not isinstance(value, TensorHandle):
        return value
    kept, dtype = session.runtime_context.session_tensors.get(value.handle)
    if dtype is not tensor.dtype:
        raise InvalidArgumentError(None, None, f"Expects arg[0] to be "
                                   f"{dtype_name(tensor.dtype)} but {dtype_name(dtype)} is "
                                   "provided")
    return fetch_value(kept)

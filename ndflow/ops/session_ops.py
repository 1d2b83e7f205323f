"""TF1 session tensor handles: `tf.compat.v1.get_session_handle` keeps a tensor computed by
one `Session.run` in the session (GetSessionHandle / GetSessionHandleV2, whose fetched value
is a `TensorHandle`, runtime/session_handles.py); `get_session_tensor` reads it back in a
later run from its handle string fed to a placeholder (GetSessionTensor);
`delete_session_tensor` frees it (DeleteSessionTensor). A handle reads
"<node name>;<id>;<device>", as TF's. Kernels: kernels/session_ops.py."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.devices import DeviceSpec
from ndflow.core.scopes import device
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import placeholder
from ndflow.ops.op_def import op_def

GetSessionHandle = op_def(
    "GetSessionHandle", inputs=["value: T"], outputs=["handle: string"], attrs=["T: type"],
    shape=lambda ctx: [TensorShape([])], stateful=True, not_differentiable=True,
    doc="Stores the value in the session; its handle string.")
GetSessionHandleV2 = op_def(
    "GetSessionHandleV2", inputs=["value: T"], outputs=["handle: resource"],
    attrs=["T: type"], shape=lambda ctx: [TensorShape([])], stateful=True,
    not_differentiable=True, doc="Stores the value in the session; its handle.")
GetSessionTensor = op_def(
    "GetSessionTensor", inputs=["handle: string"], outputs=["value: dtype"],
    attrs=["dtype: type"], shape=lambda ctx: [TensorShape(None)], stateful=True,
    not_differentiable=True, doc="The value stored in the session under the handle.")
DeleteSessionTensor = op_def(
    "DeleteSessionTensor", inputs=["handle: string"], shape=lambda ctx: [], stateful=True,
    not_differentiable=True, doc="Frees the value stored in the session under the handle.")

HANDLE_OPS = ("GetSessionHandle", "GetSessionHandleV2")


def handle_device(handle) -> str:
    """The canonical device named at the end of a handle string."""
    text = handle.decode() if isinstance(handle, bytes) else str(handle)
    return DeviceSpec.from_string(text.split(";")[-1]).to_string()


@tf_export(v1=["get_session_handle"])
def get_session_handle(data, name=None):
    """A scalar string tensor: the handle of `data` kept in the session when run (fetching it
    gives a `TensorHandle`)."""
    if not isinstance(data, Tensor):
        raise TypeError("`data` must be of type Tensor.")
    with device(data.device or ""):
        return apply_op(GetSessionHandle, [data], name=name).outputs[0]


@tf_export(v1=["get_session_tensor"])
def get_session_tensor(handle, dtype, name=None):
    """(placeholder, tensor): feed a handle string to the placeholder to read its value."""
    with device(handle_device(handle)):
        holder = placeholder(dtypes.string)
        tensor = apply_op(GetSessionTensor, [holder], {"dtype": dtypes.as_dtype(dtype)},
                          name=name).outputs[0]
    return holder, tensor


@tf_export(v1=["delete_session_tensor"])
def delete_session_tensor(handle, name=None):
    """(placeholder, op): feed a handle string to the placeholder and run the op to free it."""
    with device(handle_device(handle)):
        holder = placeholder(dtypes.string)
        deleter = apply_op(DeleteSessionTensor, [holder], name=name)
    return holder, deleter

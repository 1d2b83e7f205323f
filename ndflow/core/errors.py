"""TensorFlow's error classes (`tf.errors.*`), with their canonical codes."""

from __future__ import annotations

from ndflow.core.api_export import tf_export

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


@tf_export("errors.OpError", v1=["OpError", "errors.OpError"])
class OpError(Exception):
    """An error raised while building or running an operation; names the op."""

    error_code = UNKNOWN

    def __init__(self, node_def=None, op=None, message: str = "", error_code=None):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        if error_code is not None:
            self.error_code = error_code

    @property
    def message(self) -> str:
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    def __str__(self):
        return self._message

    def __reduce__(self):
        return (type(self), (None, None, self._message))


def _make(name, code, doc):
    cls = type(name, (OpError,), {"error_code": code, "__doc__": doc})
    return cls


CancelledError = _make("CancelledError", CANCELLED, "The operation was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "Unknown error.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT,
                             "An operation received an invalid argument.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED, "Deadline expired.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "The entity already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED, "Permission denied.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                               "A resource has been exhausted.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION,
                                "The system is not in a state to run the operation.")
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE,
                        "The operation was attempted past the valid range.")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED,
                           "The operation is not implemented.")
InternalError = _make("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _make("UnavailableError", UNAVAILABLE, "The runtime is unavailable.")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED, "Not authenticated.")



class InaccessibleTensorError(ValueError):
    """A tensor or op that may not be used here (e.g. fetching one marked not fetchable)."""


@tf_export("errors.OperatorNotAllowedInGraphError", v1=[])
class OperatorNotAllowedInGraphError(TypeError):
    """A Python operator (`bool(t)`, iterating `t`) that a symbolic tensor cannot support: in a
    graph its value does not exist yet (use tf.cond / tf.while_loop, or AutoGraph)."""


_BY_CODE = {cls.error_code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError,
    AbortedError, OutOfRangeError, UnimplementedError, InternalError, UnavailableError,
    DataLossError, UnauthenticatedError)}


def exception_type_from_error_code(code: int) -> type:
    return _BY_CODE[code]


def node_error(cls, op, message: str) -> OpError:
    """An error of class `cls` naming `op` (an Operation or OpDef-like) the way TF does."""
    if op is not None and getattr(op, "name", None):
        message = f"{message} [Op:{op.type}] name: {op.name}" if getattr(op, "_eager", False) \
            else f"{message}\n\t [[node {op.name} ({op.type})]]"
    return cls(None, op, message)

tf_export("errors.ABORTED")(ABORTED)
tf_export("errors.ALREADY_EXISTS")(ALREADY_EXISTS)
tf_export("errors.AbortedError")(AbortedError)
tf_export("errors.AlreadyExistsError")(AlreadyExistsError)
tf_export("errors.CANCELLED")(CANCELLED)
tf_export("errors.CancelledError")(CancelledError)
tf_export("errors.DATA_LOSS")(DATA_LOSS)
tf_export("errors.DEADLINE_EXCEEDED")(DEADLINE_EXCEEDED)
tf_export("errors.DataLossError")(DataLossError)
tf_export("errors.DeadlineExceededError")(DeadlineExceededError)
tf_export("errors.FAILED_PRECONDITION")(FAILED_PRECONDITION)
tf_export("errors.FailedPreconditionError")(FailedPreconditionError)
tf_export("errors.INTERNAL")(INTERNAL)
tf_export("errors.INVALID_ARGUMENT")(INVALID_ARGUMENT)
tf_export("errors.InternalError")(InternalError)
tf_export("errors.InvalidArgumentError")(InvalidArgumentError)
tf_export("errors.NOT_FOUND")(NOT_FOUND)
tf_export("errors.NotFoundError")(NotFoundError)
tf_export("errors.OK")(OK)
tf_export("errors.OUT_OF_RANGE")(OUT_OF_RANGE)
tf_export("errors.OutOfRangeError")(OutOfRangeError)
tf_export("errors.PERMISSION_DENIED")(PERMISSION_DENIED)
tf_export("errors.PermissionDeniedError")(PermissionDeniedError)
tf_export("errors.RESOURCE_EXHAUSTED")(RESOURCE_EXHAUSTED)
tf_export("errors.ResourceExhaustedError")(ResourceExhaustedError)
tf_export("errors.UNAUTHENTICATED")(UNAUTHENTICATED)
tf_export("errors.UNAVAILABLE")(UNAVAILABLE)
tf_export("errors.UNIMPLEMENTED")(UNIMPLEMENTED)
tf_export("errors.UNKNOWN")(UNKNOWN)
tf_export("errors.UnauthenticatedError")(UnauthenticatedError)
tf_export("errors.UnavailableError")(UnavailableError)
tf_export("errors.UnimplementedError")(UnimplementedError)
tf_export("errors.UnknownError")(UnknownError)

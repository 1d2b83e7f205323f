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
    """The base class of the errors raised while building or running an operation.

    Catch it to handle every `tf.errors.*` class at once; its subclasses
    (InvalidArgumentError, NotFoundError, OutOfRangeError, ...) each carry a canonical code.

    Args:
      node_def: the NodeDef of the failing op, or None.
      op: the failing Operation, or None.
      message: the error text (also `str(error)`).
      error_code: the canonical code (UNKNOWN unless a subclass or this argument sets it).

    Example:
      >>> try:
      ...     tf.reshape([1, 2, 3], [2, 2])
      ... except tf.errors.OpError as e:
      ...     print(type(e).__name__, e.error_code == tf.errors.INVALID_ARGUMENT)
      InvalidArgumentError True
    """

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


_ARGS = """
    Args:
      node_def: the NodeDef of the failing op, or None.
      op: the failing Operation, or None.
      message: the error text (also `str(error)`).
      error_code: optional override of the class's canonical code.

    Attributes:
      message: the error text.
      op: the failing Operation, or None.
      error_code: the canonical code (`tf.errors.{code}`)."""


def _make(name, code, summary, when, example=None):
    """The `tf.errors` class `name` of canonical `code`; its docstring's example raises it
    directly unless `example` is code that does."""
    example = example or f"raise tf.errors.{name}(None, None, 'message')"
    code_name = next(k for k, v in globals().items() if v == code and k.isupper())
    doc = f"""{summary}

    {when}
""" + _ARGS.format(code=code_name) + f"""

    Example:
      >>> try:
      ...     {example}
      ... except tf.errors.{name} as e:
      ...     print(type(e).__name__, e.error_code)
      {name} {code}
    """
    return type(name, (OpError,), {"error_code": code, "__doc__": doc})


CancelledError = _make(
    "CancelledError", CANCELLED, "The operation or step was cancelled.",
    "For example a queue operation cancelled by closing the queue with pending requests.")
UnknownError = _make(
    "UnknownError", UNKNOWN, "An error of no other category.",
    "Raised, for instance, for an error in a Python function run by `tf.py_function`.")
InvalidArgumentError = _make(
    "InvalidArgumentError", INVALID_ARGUMENT, "An operation received an invalid argument.",
    "The most common op error: incompatible shapes, an index out of range, a failed\n"
    "    `tf.debugging` assertion, a value that does not parse.",
    "tf.reshape([1, 2, 3], [2, 2])")
DeadlineExceededError = _make(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "An operation did not finish before its deadline.",
    "Raised when a timeout (e.g. `RunOptions.timeout_in_ms`) expires.")
NotFoundError = _make(
    "NotFoundError", NOT_FOUND, "A requested entity (a file, a checkpoint, a resource) was not "
    "found.", "Raised, for example, by `tf.io.gfile` functions and readers for a missing path.",
    "tf.io.gfile.remove('/nonexistent/file')")
AlreadyExistsError = _make(
    "AlreadyExistsError", ALREADY_EXISTS, "An entity that was to be created already exists.",
    "Raised, for example, by `tf.io.gfile.copy` / `rename` without `overwrite`.")
PermissionDeniedError = _make(
    "PermissionDeniedError", PERMISSION_DENIED, "The caller may not perform the operation.",
    "Raised, for example, for a file the process may not read or write.")
ResourceExhaustedError = _make(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource ran out (often memory).",
    "Raised, for example, when an allocation on a device fails.")
FailedPreconditionError = _make(
    "FailedPreconditionError", FAILED_PRECONDITION, "The system is not in a state to run the "
    "operation.", "Raised, for example, when reading a variable that has not been initialized.")
AbortedError = _make(
    "AbortedError", ABORTED, "The operation was aborted (typically by a concurrent action).",
    "Raised, for example, when a queue is closed while an operation waits on it.")
OutOfRangeError = _make(
    "OutOfRangeError", OUT_OF_RANGE, "An operation went past the valid range.",
    "Raised when an iterator or a queue is exhausted (e.g. `get_next()` at the end of a\n"
    "    dataset).", "next(iter(tf.data.Dataset.range(0))) if False else "
    "tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(0)).get_next()")
UnimplementedError = _make(
    "UnimplementedError", UNIMPLEMENTED, "The operation is not implemented or not supported.",
    "Raised, for example, for an op without a kernel for the given dtype or device, or an\n"
    "    unsupported file system scheme.", "tf.io.gfile.exists('gs://bucket/file')")
InternalError = _make(
    "InternalError", INTERNAL, "An internal invariant of the runtime was broken.",
    "This indicates a bug in ndflow (or a kernel); please report it.")
UnavailableError = _make(
    "UnavailableError", UNAVAILABLE, "The runtime or a remote service is unavailable.",
    "Usually transient (e.g. a worker that cannot be reached); retrying may help.")
DataLossError = _make(
    "DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.",
    "Raised, for example, when a TFRecord or checkpoint file is truncated or corrupt.")
UnauthenticatedError = _make(
    "UnauthenticatedError", UNAUTHENTICATED, "The request lacks valid credentials.",
    "Raised by services that require authentication.")



class InaccessibleTensorError(ValueError):
    """A tensor or op that may not be used here (e.g. fetching one marked not fetchable)."""


@tf_export("errors.OperatorNotAllowedInGraphError", v1=[])
class OperatorNotAllowedInGraphError(TypeError):
    """A Python operator that a symbolic (graph) tensor cannot support.

    `bool(t)`, `if t:` or iterating `t` need the tensor's value, which does not exist while a
    graph is being built: use `tf.cond` / `tf.while_loop`, or let AutoGraph (`tf.function`)
    convert the Python control flow.

    Example:
      >>> @tf.function(autograph=False)
      ... def f(x):
      ...     return 1 if x > 0 else 0
      >>> try:
      ...     f(tf.constant(1))
      ... except tf.errors.OperatorNotAllowedInGraphError:
      ...     print("not allowed")
      not allowed
    """


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

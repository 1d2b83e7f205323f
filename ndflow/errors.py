"""`tf.errors`: TensorFlow's exception classes and error codes."""

from ndflow.core.errors import (  # noqa: F401
    ABORTED, ALREADY_EXISTS, CANCELLED, DATA_LOSS, DEADLINE_EXCEEDED, FAILED_PRECONDITION,
    INTERNAL, INVALID_ARGUMENT, NOT_FOUND, OK, OUT_OF_RANGE, PERMISSION_DENIED,
    RESOURCE_EXHAUSTED, UNAUTHENTICATED, UNAVAILABLE, UNIMPLEMENTED, UNKNOWN, AbortedError,
    AlreadyExistsError, CancelledError, DataLossError, DeadlineExceededError,
    FailedPreconditionError, InternalError, InvalidArgumentError, NotFoundError, OpError,
    OutOfRangeError, PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError,
    UnavailableError, UnimplementedError, UnknownError, exception_type_from_error_code,
)

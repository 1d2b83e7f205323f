"""TF1's helpers between error codes and exception classes (`tf.compat.v1.errors.*`), and
`raise_exception_on_not_ok_status`, the context manager around a status: ndflow has no C API,
so the status is a small object whose `code`/`message` the body sets (TF_SetStatus's role)."""

from __future__ import annotations

import warnings

from ndflow.core import errors
from ndflow.core.api_export import tf_export


@tf_export(v1=["errors.exception_type_from_error_code"])
def exception_type_from_error_code(error_code):
    """The OpError subclass of an error code (KeyError for an unknown one, as TF)."""
    return errors.exception_type_from_error_code(error_code)

_CLASS_TO_CODE = {cls: code for code, cls in errors._BY_CODE.items()}


@tf_export(v1=["errors.error_code_from_exception_type"])
def error_code_from_exception_type(cls):
    """The error code of an OpError subclass; for another class TF warns and returns an
    UnknownError instance (its documented quirk)."""
    try:
        return _CLASS_TO_CODE[cls]
    except (KeyError, TypeError):
        warnings.warn("Unknown class exception", stacklevel=2)
        return errors.UnknownError(None, None, "Unknown class exception", None)


class Status:
    """A TF_Status: `code` (errors.OK by default) and `message`."""

    def __init__(self):
        self.code = errors.OK
        self.message = ""

    def set(self, code: int, message: str) -> None:
        self.code, self.message = int(code), str(message)


@tf_export(v1=["errors.raise_exception_on_not_ok_status"])
class raise_exception_on_not_ok_status:  # noqa: N801 - TF's name
    """Context manager yielding a Status; on exit a code other than OK raises its OpError
    subclass with the status' message (UnknownError, with a warning, for an unknown code)."""

    def __enter__(self):
        self.status = Status()
        return self.status

    def __exit__(self, type_arg, value_arg, traceback_arg):
        try:
            if self.status.code != errors.OK:
                try:
                    cls = exception_type_from_error_code(self.status.code)
                    raise cls(None, None, self.status.message)
                except KeyError:
                    warnings.warn(f"Unknown error code: {self.status.code}", stacklevel=2)
                    raise errors.UnknownError(None, None, self.status.message,
                                              self.status.code) from None
        finally:
            del self.status
        return False

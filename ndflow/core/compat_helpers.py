"""`tf.compat`'s Python helpers: text and bytes (`as_bytes`, `as_text`/`as_str`,
`as_str_any`, `path_to_str`), the numeric type tuples, and the forward-compatibility window
(`forward_compatible`, `forward_compatibility_horizon`) with TF 2.21's horizon date."""

from __future__ import annotations

import codecs
import contextlib
import datetime
import numbers
import os

import numpy as np

from ndflow.core import config
from ndflow.core.api_export import tf_export
from ndflow.core.tf_logging import warning


@tf_export("compat.as_bytes")
def as_bytes(bytes_or_text, encoding="utf-8") -> bytes:
    """`bytes_or_text` as bytes: str encoded with `encoding`, bytes and bytearray as they are."""
    codecs.lookup(encoding)   # an unknown encoding is LookupError, whatever the value
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


@tf_export("compat.as_text", "compat.as_str")
def as_text(bytes_or_text, encoding="utf-8") -> str:
    """`bytes_or_text` as str: bytes decoded with `encoding`, str as it is."""
    codecs.lookup(encoding)
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


@tf_export("compat.as_str_any")
def as_str_any(value, encoding="utf-8") -> str:
    """bytes decoded, anything else `str(value)`."""
    return as_text(value, encoding) if isinstance(value, bytes) else str(value)


@tf_export("compat.path_to_str")
def path_to_str(path):
    """A `os.PathLike` as its str path; anything else as it is."""
    if hasattr(path, "__fspath__"):
        path = as_str_any(os.fspath(path))
    return path


integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)
bytes_or_text_types = (bytes, str)
for _name in ("integral_types", "real_types", "complex_types", "bytes_or_text_types"):
    tf_export(f"compat.{_name}")(globals()[_name])


# -- the forward-compatibility window ----------------------------------------------------------

_HORIZON = datetime.date(2026, 1, 16)   # TF 2.21's
_override: list = []


def _date_number(year: int, month: int, day: int) -> int:
    return (year << 9) | (month << 5) | day


def _horizon() -> datetime.date:
    if _override:
        return _override[-1]
    delta = config.env_int(config.TF_FORWARD_COMPATIBILITY_DELTA_DAYS, 0)
    date = _HORIZON + datetime.timedelta(days=delta)
    if date < _HORIZON:
        warning("Trying to set the forward compatibility date to the past date %s. This will "
                "be ignored by TensorFlow.", date)
        return _HORIZON
    return date


@tf_export("compat.forward_compatible")
def forward_compatible(year, month, day) -> bool:
    """Whether the forward-compatibility window has passed `year-month-day`: the horizon
    (TF 2.21's date, plus TF_FORWARD_COMPATIBILITY_DELTA_DAYS) is later than it."""
    h = _horizon()
    return _date_number(h.year, h.month, h.day) > _date_number(year, month, day)


@tf_export("compat.forward_compatibility_horizon")
@contextlib.contextmanager
def forward_compatibility_horizon(year, month, day):
    """Context manager: `forward_compatible` compares with this date instead (for tests);
    a date before the horizon is ignored with TF's warning."""
    date = datetime.date(year, month, day)
    if date < _HORIZON:
        warning("Trying to set the forward compatibility date to the past date %s. This will "
                "be ignored by TensorFlow.", date)
        date = _horizon()
    _override.append(date)
    try:
        yield
    finally:
        _override.pop()

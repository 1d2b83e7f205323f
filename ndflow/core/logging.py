"""TensorFlow-style log lines on stderr.

    2024-05-01 12:00:00.123456: W ndflow/passes/remapper.py:88] message

`log(severity, msg)` honours TF_CPP_MIN_LOG_LEVEL; `vlog(module, level, msg)` honours
TF_CPP_VMODULE and TF_CPP_MIN_VLOG_LEVEL / TF_CPP_MAX_VLOG_LEVEL (see `ndflow.core.config`).
Variables are read at each call; a malformed one raises ValueError naming it.
"""

from __future__ import annotations

import sys
import time

from ndflow.core import config

INFO = 0
WARNING = 1
ERROR = 2
FATAL = 3

_LETTERS = "IWEF"
_NAMES = {"INFO": INFO, "WARNING": WARNING, "WARN": WARNING, "ERROR": ERROR, "FATAL": FATAL}


def _severity(severity: int | str) -> int:
    if isinstance(severity, str):
        if severity.upper() not in _NAMES:
            raise ValueError(f"Unknown log severity {severity!r}; expected one of "
                             "INFO, WARNING, ERROR, FATAL")
        return _NAMES[severity.upper()]
    if severity not in (INFO, WARNING, ERROR, FATAL):
        raise ValueError(f"Unknown log severity {severity!r}; expected 0..3")
    return severity


def _caller(depth: int) -> str:
    """'path/file.py:line' of the frame `depth` levels above the caller of this function,
    shortened to start at the package directory ('ndflow/...') when it is inside one."""
    frame = sys._getframe(depth + 1)
    path = frame.f_code.co_filename.replace("\\", "/")
    marker = path.rfind("/ndflow/")
    if marker >= 0:
        path = path[marker + 1:]
    return f"{path}:{frame.f_lineno}"


def format_line(severity: int, location: str, msg: str, now: float | None = None) -> str:
    """One log line (with trailing newline) in TensorFlow's C++ format."""
    now = time.time() if now is None else now
    seconds = int(now)
    micros = int(round((now - seconds) * 1e6))
    if micros == 1_000_000:
        seconds, micros = seconds + 1, 0
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))
    return f"{stamp}.{micros:06d}: {_LETTERS[severity]} {location}] {msg}\n"


def _emit(severity: int, msg: str, depth: int) -> None:
    line = format_line(severity, _caller(depth + 1), msg)
    stream = sys.stderr
    stream.write(line)
    stream.flush()


def log_is_on(severity: int | str) -> bool:
    return _severity(severity) >= config.min_log_level()


def log(severity: int | str, msg: str, *, stacklevel: int = 1) -> None:
    """Writes `msg` at `severity` (INFO/WARNING/ERROR/FATAL or 0..3) unless
    TF_CPP_MIN_LOG_LEVEL hides it. FATAL only logs; it does not abort."""
    level = _severity(severity)
    if level >= config.min_log_level():
        _emit(level, msg, stacklevel)


def info(msg: str) -> None:
    log(INFO, msg, stacklevel=2)


def warning(msg: str) -> None:
    log(WARNING, msg, stacklevel=2)


def error(msg: str) -> None:
    log(ERROR, msg, stacklevel=2)


def vlog_is_on(module: str, level: int) -> bool:
    """True when `vlog(module, level, ...)` would print (TensorFlow's VLOG_IS_ON)."""
    return config.vlog_is_on(module, level)


def vlog(module: str, level: int, msg: str, *, stacklevel: int = 1) -> None:
    """Verbose INFO line for `module` (pass `__name__`), shown when `level` is at most the
    module's TF_CPP_VMODULE level or the global TF_CPP_MIN_VLOG_LEVEL. Like TensorFlow, VLOG
    lines are INFO lines, so TF_CPP_MIN_LOG_LEVEL >= 1 hides them too."""
    if config.vlog_is_on(module, level) and INFO >= config.min_log_level():
        _emit(INFO, msg, stacklevel)

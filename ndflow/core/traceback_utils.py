"""Tracebacks that show the user's code, as TensorFlow 2 shows them.

Two things, both on by default:

- Filtering: an uncaught exception whose traceback passes through ndflow is printed without
  ndflow's own frames (and the generated plan code), so the user sees their lines and the
  error message. TensorFlow filters inside a decorator on every public function; ndflow
  filters in `sys.excepthook` instead, which costs nothing on the hot path (an eager op call
  stays one Python call). `tf.debugging.disable_traceback_filtering()` prints everything.
- Where an op was made: every graph op records the user's frames that created it
  (`Operation.traceback`), and an error while running a graph says so in TensorFlow's
  words — "Graph execution error: ... Detected at node GatherV2 defined at (most recent
  call last): File "train.py", line 6, in f" — naming the innermost failing node, also
  inside If/While bodies.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import traceback
import types

from ndflow.core.api_export import tf_export

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB_DIRS = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                      for k in ("stdlib", "platstdlib")})
_MAX_FRAMES = 12  # the innermost user frames an op keeps
_TF_TAG_NAME = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.\-/]*")  # TF's error_interpolation
_enabled = True
_previous_hook = None


def is_internal(filename: str) -> bool:
    """ndflow's own source, or code it generated (plans are compiled as "<plan ...>")."""
    return filename.startswith(_PACKAGE_DIR) or filename.startswith("<plan")


@tf_export("debugging.enable_traceback_filtering")
def enable_traceback_filtering() -> None:
    """Hides ndflow's internal frames in the tracebacks of uncaught errors (the default)."""
    global _enabled
    _enabled = True


@tf_export("debugging.disable_traceback_filtering")
def disable_traceback_filtering() -> None:
    """Shows every frame, ndflow's included, in the tracebacks of uncaught errors."""
    global _enabled
    _enabled = False


@tf_export("debugging.is_traceback_filtering_enabled")
def is_traceback_filtering_enabled() -> bool:
    """Whether tracebacks of errors raised by ndflow hide its internal frames.

    Returns:
      A bool (True by default); see `tf.debugging.disable_traceback_filtering`.

    Example:
      >>> tf.debugging.is_traceback_filtering_enabled()
      True
    """
    return _enabled


def user_frames(skip: int = 2) -> tuple:
    """The caller's stack without ndflow's frames, outermost first, as (filename, lineno,
    function name) — what an op keeps of where it was made. Cheap: no source lines read."""
    frames = []
    f = sys._getframe(skip)
    while f is not None and len(frames) < _MAX_FRAMES:
        code = f.f_code
        if not is_internal(code.co_filename):
            frames.append((code.co_filename, f.f_lineno, code.co_name))
        f = f.f_back
    frames.reverse()
    return tuple(frames)


def format_frames(frames, indent: str = "  ", blank_lines: bool = True) -> str:
    end = "\n\n" if blank_lines else "\n"
    return "".join(f'{indent}File "{file}", line {line}, in {name}{end}'
                   for file, line, name in frames)


def as_stack_summary(frames) -> traceback.StackSummary:
    return traceback.StackSummary.from_list(
        [traceback.FrameSummary(file, line, name, lookup_line=False)
         for file, line, name in frames])


def graph_execution_message(node_name: str, frames, message: str,
                            function_name: str | None = None) -> str:
    """TensorFlow's text for an error raised while a graph ran (a tf.function call): the
    kernel's message ends with `[Op:<function_name>]` (`__inference_f_12`), and is prefixed
    with "Graph execution error:" and where the node was made, unless TF's parser of
    `{{function_node <name>}}` tags cannot read the name (a lambda's `__inference_<lambda>_3`):
    then the message keeps that tag."""
    if function_name is None:
        suffix = ""
    else:
        suffix = f" [Op:{function_name}]"
        if not _TF_TAG_NAME.fullmatch(function_name):
            return f"{{{{function_node {function_name}}}}} {message}{suffix}"
    where = (f"Detected at node {node_name} defined at (most recent call last):\n"
             f"{format_frames(frames)}" if frames else "")
    return f"Graph execution error:\n\n{where}{message}{suffix}"


def filter_traceback(tb):
    """`tb` without ndflow's frames; unchanged when that would leave no user frame (an error
    in ndflow's own entry points, e.g. `python -m ndflow.models...`)."""
    kept = []
    t = tb
    while t is not None:
        if not is_internal(t.tb_frame.f_code.co_filename):
            kept.append(t)
        t = t.tb_next
    if len(kept) == _count(tb) or not any(
            not k.tb_frame.f_code.co_filename.startswith(_STDLIB_DIRS) for k in kept):
        return tb
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def _count(tb) -> int:
    n = 0
    while tb is not None:
        n, tb = n + 1, tb.tb_next
    return n


def _excepthook(exc_type, exc, tb):
    if _enabled and tb is not None:
        tb = filter_traceback(tb)
        seen, e = set(), exc
        while e is not None and id(e) not in seen:  # the printer reads each error's own
            seen.add(id(e))                          # __traceback__, chained ones too
            if e.__traceback__ is not None:
                e.__traceback__ = tb if e is exc else filter_traceback(e.__traceback__)
            e = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
    (_previous_hook or sys.__excepthook__)(exc_type, exc, tb)


def install_excepthook() -> None:
    """Chains ndflow's filter in front of the current `sys.excepthook` (once)."""
    global _previous_hook
    if sys.excepthook is not _excepthook:
        _previous_hook = sys.excepthook
        sys.excepthook = _excepthook

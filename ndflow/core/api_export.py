"""Public names declared where they are defined, in TensorFlow's style (`tf_export`).

    @tf_export("nn.relu")                          # tf.nn.relu and tf.compat.v1.nn.relu
    def relu(features, name=None): ...

    @tf_export("nn.softmax", "math.softmax", v1=[])  # TF2 only
    def softmax(logits, axis=None, name=None): ...

    @tf_export(v1=["nn.softmax", "math.softmax"])    # tf.compat.v1 only
    def softmax_v1(logits, axis=None, name=None, dim=None): ...

    tf_export("float32", "dtypes.float32")(float32)  # constants and aliases: call it

A path is relative to `tf` (v2 paths) or to `tf.compat.v1` (v1 paths); `v1` defaults to the
v2 paths, as in TensorFlow. `keras_export("keras.optimizers.SGD")` is the same for tf.keras
(Keras 3 is one API under both). Declaring records the object, its paths and the module
whose import declared it, nothing more. `import ndflow` imports none of the declaring modules
outside the execution base: the namespaces serve a name from the generated index of the
declarations (ndflow/core/api_index.json, written by `python -m ndflow.tools.gen_api_index`),
importing the declaring module on first use (ndflow/core/lazy_api.py).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ndflow.core.proto_docs import PROTO_DOCS

_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


@dataclass(frozen=True)
class Export:
    """One declaration: `obj` is public at `v2` paths under tf and `v1` under tf.compat.v1."""

    obj: object
    v2: tuple[str, ...]
    v1: tuple[str, ...]
    module: str = ""    # the module whose import made the declaration

    def replaced(self, obj) -> Export:
        """This declaration for `obj` instead (a dispatching wrapper of the declared API)."""
        return Export(obj, self.v2, self.v1, self.module)


EXPORTS: list[Export] = []
# Given each declaration, made before or after it was added: a dispatching wrapper to serve
# instead of the declared object, or None (ops/ragged_dispatch.py, ops/sparse_dispatch.py).
# Families declare on their first use, so wrapping happens as each declaration is made.
_DISPATCHERS: list[Callable[[Export], object]] = []


def add_dispatcher(wrap: Callable[[Export], object]) -> None:
    """Serves `wrap(e)` (when not None) instead of the object of each declaration `e`."""
    _DISPATCHERS.append(wrap)
    for i, e in enumerate(EXPORTS):
        EXPORTS[i] = _dispatched(e, (wrap,))


def _dispatched(e: Export, dispatchers) -> Export:
    for wrap in dispatchers:
        w = wrap(e)
        if w is not None:
            e = e.replaced(w)
    return e


def _check(paths: Sequence[str]) -> tuple[str, ...]:
    if isinstance(paths, str):
        raise TypeError(f"Export paths must be a list of strings, got the string {paths!r}")
    for p in paths:
        if not isinstance(p, str) or not _PATH.match(p):
            raise ValueError(f"Invalid API export path {p!r}: expected dotted identifiers "
                             "such as 'nn.relu'")
    return tuple(paths)


def _importing_module() -> str:
    """The module whose body is running (the declaration's caller may be a helper elsewhere)."""
    frame = sys._getframe(2)
    caller = frame.f_globals.get("__name__", "")
    while frame is not None:
        if frame.f_code.co_name == "<module>":
            return frame.f_globals.get("__name__", caller)
        frame = frame.f_back
    return caller


def tf_export(*v2: str, v1: Sequence[str] | None = None) -> Callable:
    """Declares the decorated object (or the object it is called with) as public at the v2
    paths `v2` and the v1 paths `v1` (default: the same as `v2`)."""
    v2_paths = _check(v2)
    v1_paths = v2_paths if v1 is None else _check(v1)
    if not v2_paths and not v1_paths:
        raise ValueError("tf_export needs at least one v2 or v1 path")

    def declare(obj):
        EXPORTS.append(_dispatched(Export(obj, v2_paths, v1_paths, _importing_module()),
                                   _DISPATCHERS))
        _document_proto(obj)
        return obj
    return declare


def _document_proto(obj) -> None:
    """A protocol-buffer message class (generated, without a docstring) gets its entry of
    core/proto_docs.py."""
    descriptor = getattr(obj, "DESCRIPTOR", None)
    if isinstance(obj, type) and descriptor is not None and not (obj.__doc__ or "").strip():
        doc = PROTO_DOCS.get(getattr(descriptor, "name", ""))
        if doc is not None:
            obj.__doc__ = doc


def keras_export(*paths: str) -> Callable:
    """`tf_export` for tf.keras names (the same object under tf and tf.compat.v1)."""
    for p in paths:
        if not p.startswith("keras."):
            raise ValueError(f"keras_export paths start with 'keras.', got {p!r}")
    return tf_export(*paths)

"""Keras 3's note on errors raised inside a layer's `call` (with traceback filtering on, its
default): the exception is raised again, of the same class, its message wrapped in
"Exception encountered when calling Dense.call()." and the arguments the call received
(tensors by shape and dtype). Only the innermost failing call adds it."""

from __future__ import annotations

import inspect

from ndflow.core import dtypes
from ndflow.core.errors import OpError
from ndflow.core.nest import map_structure
from ndflow.core.tensor import Tensor
from ndflow.keras import global_config


def _shown(value) -> str:
    if isinstance(value, Tensor):
        return f"tf.Tensor(shape={value.shape}, dtype={dtypes.as_dtype(value.dtype).name})"
    return repr(value)


def _arguments(fn, args, kwargs):
    """The `  • name=value` lines of the call, or None when the arguments do not bind."""
    try:
        signature = inspect.signature(fn)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    lines = []
    for param in signature.parameters.values():
        if param.name in bound.arguments:
            value = map_structure(_shown, bound.arguments[param.name])
        else:
            value = param.default
        lines.append(f"  • {param.name}={value}")
    return "\n".join(lines) or None


def call_with_context(layer, args, kwargs, call=None):
    """`layer.call(*args, **kwargs)` (or `call`, the layer's call as run: rematerialized),
    an exception from it carrying Keras' context."""
    call = call or layer.call
    if not global_config.SETTINGS["traceback_filtering"]:
        return call(*args, **kwargs)
    try:
        return call(*args, **kwargs)
    except Exception as e:
        if getattr(e, "_keras_call_info_injected", False):
            raise
        context = _arguments(layer.call, args, kwargs)
        if context is None:
            raise
        message = e.message if isinstance(e, OpError) else (e.args[0] if e.args else "")
        name = f"{type(layer).__name__}.call()"
        message = (f"Exception encountered when calling {name}.\n\n\x1b[1m{message}\x1b[0m\n\n"
                   f"Arguments received by {name}:\n{context}")
        if isinstance(e, OpError):
            new = type(e)(e.node_def, e.op, message, e.error_code)
        else:
            try:
                new = type(e)(message)
            except TypeError:   # an exception class with another constructor
                new = RuntimeError(message)
        new._keras_call_info_injected = True
        raise new.with_traceback(e.__traceback__) from None

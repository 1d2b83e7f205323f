"""Keras layers' names: automatic ones ("conv2d", "conv2d_1", ...), the name a layer's
Module scope takes, and the name scope of its ops."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict

from ndflow.core.scopes import get_name_scope

_UIDS: dict = defaultdict(itertools.count)


def to_snake_case(name: str) -> str:
    """Keras' automatic layer names: "Conv2D" -> "conv2d", "BatchNormalization" ->
    "batch_normalization", "SpatialDropout1D" -> "spatial_dropout1d"."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def reset_names() -> None:
    """Automatic names start again from `base` (`tf.keras.backend.clear_session`)."""
    _UIDS.clear()


def unique_name(base: str) -> str:
    """Keras' per-process names: `base`, then `base_1`, `base_2`, ..."""
    n = next(_UIDS[base])
    return base if n == 0 else f"{base}_{n}"


def op_scope(name: str) -> str:
    """The name scope of a layer's ops: its name, less leading underscores at the root scope,
    where an op name may not start with one (Keras 3 builds a `Dense(name="_d")` model
    symbolically without graph ops; here its ops would be "_d/MatMul"). Nested ("sequential/_d")
    the name stays, as TensorFlow's graph scopes keep it."""
    if name.startswith("_") and not get_name_scope():
        return name.lstrip("_") or "layer"
    return name


def scope_name(name: str) -> str:
    """The layer name as a Module scope name (a Python identifier)."""
    if name.isidentifier():
        return name
    safe = re.sub(r"\W", "_", name)
    return safe if safe.isidentifier() else f"_{safe}"

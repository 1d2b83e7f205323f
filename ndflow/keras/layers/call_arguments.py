"""What `Layer.__call__` does with its arguments before `call`: Keras 3's rule for positional
arguments, the shapes `build` receives, and the Keras mask a tensor carries."""

from __future__ import annotations

from ndflow.core.nest import flatten
from ndflow.core.tensor import Tensor


def shape_tuple(x):
    """A tensor's shape as a tuple (None for an unknown rank or a Python value: Keras builds
    from tensors only, `lookup("[START]")`)."""
    shape = getattr(x, "shape", None)
    if shape is None:
        return None
    if isinstance(shape, tuple):
        return shape
    return None if shape.rank is None else tuple(shape.as_list())


def check_positional_tensors(args) -> None:
    """Keras 3's rule: every positional argument leaf is a tensor, an array (converted) or
    None; anything else belongs in a keyword argument."""
    for arg in flatten(args):
        if arg is None or isinstance(arg, Tensor) or hasattr(arg, "__array__"):
            continue
        raise ValueError("Only input tensors may be passed as positional arguments. The "
                         f"following argument value should be passed as a keyword argument: "
                         f"{arg} (of type {type(arg)})")


def set_mask(tensor, mask) -> None:
    try:
        tensor._keras_mask = mask
    except AttributeError:  # a Python value or a composite: it carries no mask
        pass

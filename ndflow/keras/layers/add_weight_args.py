"""Keras 3's positional arguments of `Layer.add_weight`: `(shape, initializer, dtype)` at
most, kept for the Keras 2 call style, with Keras' errors for a positional name (Keras 2's
`add_weight("kernel", shape=...)`), too many positionals or one given twice."""

from __future__ import annotations


def resolve_positional(args, shape, initializer, dtype):
    """`(shape, initializer, dtype)` from `add_weight(*args, shape=, initializer=, dtype=)`."""
    if not args:
        return shape, initializer, dtype
    if len(args) > 3:
        raise TypeError(f"add_weight() takes at most 3 positional arguments but {len(args)} "
                        "were given.")
    if isinstance(args[0], str):
        raise ValueError("`name` must be passed as a keyword argument. Received: "
                         f"add_weight('{args[0]}', ...). Use: add_weight(shape=..., "
                         f"name='{args[0]}').")
    given = [shape, initializer, dtype]
    for i, (label, value) in enumerate(zip(("shape", "initializer", "dtype"), args)):
        if given[i] is not None:
            raise ValueError(f"`{label}` was passed both positionally and as a keyword "
                             "argument.")
        given[i] = value
    return tuple(given)

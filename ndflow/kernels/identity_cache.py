"""A value a kernel derived from some tensors, kept while it sees those very tensor objects.

An update applied in place leaves each variable's value the same tensor step after step, and
a tensor object keeps its shape, dtype, device and buffer for life (ndflow never resizes or
re-points a variable's value: assignments and out-of-place updates make new tensors). So what
a kernel checked and computed from its variables' values last step — their checks, their
addresses in a launch's table — still holds when they are the same objects. The grouped
optimizer updates (Adam's dense and sparse, momentum's, RMSprop's) keep their launch's table
so: a small variable's update was mostly that setup (~3-8 us a variable of Python: a 31-layer
MLP's 62 momentum updates 472 -> 186 us a step).

The tensors are held by weak references: a strong one would make each buffer look shared to
`exclusive_values` (kernels/state.py), and the updates would stop running in place."""

from __future__ import annotations

import weakref


class IdentityCache:
    """One value and the tensors it was derived from."""

    __slots__ = ("_entry",)

    def __init__(self):
        self._entry = None   # (weak references to the tensors, the value), replaced whole

    def get(self, tensors: list):
        """The value put with these very tensor objects (in order), else None."""
        entry = self._entry
        if entry is None:
            return None
        refs, value = entry
        if len(refs) != len(tensors):
            return None
        for ref, t in zip(refs, tensors):
            if ref() is not t:
                return None
        return value

    def put(self, tensors: list, value) -> None:
        self._entry = ([weakref.ref(t) for t in tensors], value)

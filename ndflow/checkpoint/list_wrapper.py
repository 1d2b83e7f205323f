"""TensorFlow's ListWrapper: what a list assigned to a `tf.train.Checkpoint` attribute
becomes. A list still, it tells its checkpoint when it grows, so that a value a restore
found missing (`ckpt.listed.append(v)` after `ckpt.restore(path)`) is restored then."""

from __future__ import annotations

import weakref

from ndflow.checkpoint import restore


class ListWrapper(list):
    """A list tracked by a Checkpoint: appending, extending, inserting or setting items
    restores the checkpointed values waiting for them."""

    __slots__ = ("_owner",)

    def __init__(self, values=(), owner=None):
        super().__init__(values)
        self._owner = None if owner is None else weakref.ref(owner)

    def _changed(self) -> None:
        owner = None if self._owner is None else self._owner()
        if owner is not None:
            restore.restore_deferred(owner)

    def append(self, value):
        super().append(value)
        self._changed()

    def extend(self, values):
        super().extend(values)
        self._changed()

    def insert(self, index, value):
        super().insert(index, value)
        self._changed()

    def __setitem__(self, index, value):
        super().__setitem__(index, value)
        self._changed()

    def __iadd__(self, values):
        super().__iadd__(values)
        self._changed()
        return self

    def __repr__(self):
        return f"ListWrapper({list.__repr__(self)})"

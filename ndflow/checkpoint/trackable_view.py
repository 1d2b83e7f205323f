"""`tf.train.TrackableView`: the object graph of live trackables, as a checkpoint sees it
(the children object_graph.py finds: attributes, list/dict items, registered children)."""

from __future__ import annotations

import collections
import weakref

from ndflow.checkpoint import object_graph
from ndflow.core.api_export import tf_export

_SAVE_TYPES = ("checkpoint", "savedmodel")


@tf_export("train.TrackableView", v1=[])
class TrackableView:
    """Gathers a trackable's view: `children(obj)` by name, `descendants()` breadth first."""

    def __init__(self, root):
        try:
            self._root_ref = root if isinstance(root, weakref.ref) else weakref.ref(root)
        except TypeError:  # a list or dict root (TF wraps those in a weak-referenceable type)
            self._root_ref = root

    @classmethod
    def children(cls, obj, save_type="checkpoint", **kwargs):
        """{local name: child} of `obj`, in the order checkpoints number them."""
        save_type = getattr(save_type, "value", save_type)
        if save_type not in _SAVE_TYPES:
            raise ValueError(f"Unexpected save_type {save_type!r}: expected one of "
                             f"{list(_SAVE_TYPES)}")
        return {name: child for name, child in object_graph.trackable_children(obj)
                if child is not None}

    @property
    def root(self):
        if isinstance(self._root_ref, weakref.ref):
            derefed = self._root_ref()
            if derefed is None:
                raise ValueError("The TrackableView's root object no longer exists")
            return derefed
        return self._root_ref

    def descendants(self) -> list:
        """All objects reachable from the root, breadth first, each once."""
        return self._descendants_with_paths()[0]

    def _descendants_with_paths(self):
        root = self.root
        order, paths = [], {id(root): ()}
        to_visit = collections.deque([root])
        while to_visit:
            current = to_visit.popleft()
            order.append(current)
            for name, child in self.children(current).items():
                if id(child) not in paths:
                    paths[id(child)] = paths[id(current)] + (name,)
                    to_visit.append(child)
        return order, {id(o): paths[id(o)] for o in order}

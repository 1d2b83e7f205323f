"""A graph's collections (TF1's `tf.add_to_collection` / `tf.get_collection`): named lists
of Python objects (variables, queue runners, summaries...) kept beside the ops. `Graph`
inherits them; the dict itself, `_collections`, is made by `Graph.__init__`."""

from __future__ import annotations

import re


class GraphCollections:
    """The collection methods of `tf.Graph`."""

    _collections: dict

    def add_to_collection(self, name: str, value) -> None:
        """Appends `value` to the collection `name` (TF1's `tf.add_to_collection`)."""
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value) -> None:
        """Appends `value` to each collection of `names` (one name or a list)."""
        for n in ([names] if isinstance(names, str) else names):
            self.add_to_collection(n, value)

    def get_collection(self, name: str, scope: str | None = None) -> list:
        """A copy of the collection `name`; with `scope`, only the items whose `name`
        matches that regular expression from its start."""
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pat = re.compile(scope)
        return [i for i in items if pat.match(getattr(i, "name", "") or "")]

    def get_collection_ref(self, name: str) -> list:
        """The collection `name` itself (made empty if missing): changes to the list change
        the collection."""
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self) -> list:
        """The names of the collections that hold anything."""
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name: str) -> None:
        """Removes the collection `name` and what it holds."""
        self._collections.pop(name, None)

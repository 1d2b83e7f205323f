"""A loaded SavedModel's `signatures`: TF's `_SignatureMap`, a mapping from signature keys to
concrete functions, printed as TF prints it (`_SignatureMap({...})`)."""

from __future__ import annotations


class LoadedSignatureMap(dict):
    """The signature functions of a loaded object, by key (a dict, TF's repr)."""

    def __repr__(self):
        return f"_SignatureMap({dict.__repr__(self)})"

    __str__ = __repr__

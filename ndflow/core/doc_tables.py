"""Docstrings kept in tables beside the code they describe (issue 55): a module whose
functions would grow past a readable length with their docstrings keeps them in a
`*_docs.py` table (name -> docstring) and calls `attach(globals(), DOCS)` at its end (keras
modules too, through ndflow/keras/docstrings.py). The examples run as doctests
(tests/test_api_docstrings.py, tests/keras/test_keras_docstrings.py)."""

from __future__ import annotations


def attach(namespace: dict, docs: dict) -> None:
    """Sets `docs[name]` as the docstring of `namespace[name]` and of the function it wraps
    (a missing name is a KeyError: a table naming a function the module lost fails at
    import)."""
    for name, doc in docs.items():
        obj = namespace[name]
        obj.__doc__ = doc
        inner = getattr(obj, "__wrapped__", None)
        if inner is not None:
            inner.__doc__ = doc

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


# The Example section most family templates end with (`template = """...""" + EXAMPLE`).
EXAMPLE = """
    Example:
      >>> {example}
      {out}
    """


def family(template: str, members: dict[str, dict[str, str]], **shared: str) -> dict[str, str]:
    """Docstrings for a family of sibling functions that share their prose (reduce_sum,
    reduce_mean, ...): `template` formatted (str.format: a literal brace is doubled) with
    `shared`, then each member's own words, and `name` (a `{note}` field left unset is ""), so
    the Args/Returns text is written once.

    Example:
      >>> family("The {what} of `x`{end}", {"f": {"what": "sum"}, "g": {"what": "mean"}},
      ...        end=".")
      {'f': 'The sum of `x`.', 'g': 'The mean of `x`.'}
    """
    return {name: template.format(**{"note": "", **shared, **words, "name": name})
            for name, words in members.items()}


def note(text: str) -> str:
    """A paragraph for the `{note}` field of a `family` template: one placed as
    `{title}\n{note}\n    Args:` gives the paragraph its blank lines, and none when unset."""
    return f"\n    {text}\n"


def with_args(title: str, args: list, sections: str = "", example: str = "", *,
              described: dict) -> str:
    """A docstring of `title`, the Args lines of `args` (each a name whose description is in
    `described`, the arguments several functions share, or "name: description"), then
    `sections` and `example` (each text beginning with its blank line)."""
    lines = "\n      ".join(a if ":" in a else f"{a}: {described[a]}" for a in args)
    return f"""{title}

    Args:
      {lines}{sections}{example}
    """


def docs_with_args(described: dict, table: dict) -> dict:
    """`with_args` for each entry of `table`: name -> (title, args, sections[, example]), the
    Args lines' shared descriptions being `described`."""
    return {name: with_args(*entry, described=described) for name, entry in table.items()}

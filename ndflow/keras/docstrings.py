"""Docstrings kept in tables beside the code they describe (issue 55): a module whose functions
would grow past a readable length with their docstrings keeps them in a `*_docs.py` table
(name -> docstring) and calls `attach(globals(), DOCS)` (ndflow/core/doc_tables.py) at its end.
The text lands on the exported object and on the plain function it wraps (`keras_op`'s
`functools.wraps`), so `help(tf.keras.ops.add)` and `inspect.getdoc` see it. The examples run
as doctests (tests/keras/test_keras_docstrings.py). This module holds the templates of
families of keras docstrings.
"""

from __future__ import annotations

from ndflow.core.doc_tables import attach  # noqa: F401 - the keras tables' attach


def sections(doc: str, raises: str = "", example: str = "") -> str:
    """`doc` with a Raises section (`raises`: its line) and an Example section (`example`: its
    `>>>` lines and output), each where given."""
    if raises:
        doc += f"\n    Raises:\n      {raises}\n    "
    if example:
        doc += f"\n    Example:\n\n    {example}\n    "
    return doc


def unary(summary: str, domain: str = "", example: str = "", int64: str = "floatx") -> str:
    """The docstring of a one-argument elementwise keras op computed in floating point
    (`int64`: the dtype int64 inputs compute in)."""
    ints = "Bools and ints are computed in `keras.config.floatx()`" + (
        "" if int64 == "floatx" else f" (int64 in {int64})")
    doc = f"""{summary}

    Args:
      x: a tensor or array-like. {ints};
        float16, bfloat16 and float64 keep their dtype.{domain}

    Returns:
      A floating-point tensor of `x`'s shape.
    """
    return sections(doc, example=example)


def activation(summary: str, formula: str, args: str = "", example: str = "",
               float_only: bool = False) -> str:
    """The docstring of an elementwise activation `summary: formula` (`args`: more Args
    lines; `float_only`: it raises TypeError for non-float tensors)."""
    raises = """
    Raises:
      TypeError: `x` is not a float tensor.
    """ if float_only else ""
    doc = f"""{summary}: {formula}.

    Args:
      x: a float tensor or array-like (a Python float list is float32).{args}

    Returns:
      A tensor of `x`'s shape and dtype.
    {raises}"""
    return sections(doc, example=example)

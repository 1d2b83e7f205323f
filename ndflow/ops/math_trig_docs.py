"""The docstrings of math_trig.py's unary functions (attached at its end; see
core/doc_tables.py): one template, the hyperbolic titles read from the names."""

from __future__ import annotations

from ndflow.core.doc_tables import family

_UNARY = """Elementwise {what}.

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.{domain}

    Example:
      >>> tf.math.{name}(tf.constant([{x}])).numpy()
      array([{y}], dtype=float32)
    """

_CIRCULAR = {  # name: (what it computes, the example's x, its result)
    "sin": ("sine of `x` (radians)", "0.0, np.pi / 2", "0., 1."),
    "cos": ("cosine of `x` (radians)", "0.0, np.pi", " 1., -1."),
    "tan": ("tangent of `x` (radians)", "0.0, np.pi / 4", "0., 1."),
    "asin": ("inverse sine, in radians in [-pi/2, pi/2]", "0.0, 1.0", "0.       , 1.5707964"),
    "acos": ("inverse cosine, in radians in [0, pi]", "1.0, 0.0", "0.       , 1.5707964"),
    "atan": ("inverse tangent, in radians in (-pi/2, pi/2)", "0.0, 1.0", "0.       , 0.7853982"),
}
_HYPERBOLIC = {  # name: the example's x and result ("sinh": hyperbolic sine, "a...": inverse)
    "sinh": ("0.0, 1.0", "0.       , 1.1752012"), "cosh": ("0.0, 1.0", "1.       , 1.5430806"),
    "asinh": ("0.0, 1.0", "0.       , 0.8813736"), "acosh": ("1.0, 2.0", "0.      , 1.316958"),
    "atanh": ("0.0, 0.5", "0.        , 0.54930615"),
}
_FUNCTION = {"sin": "sine", "cos": "cosine", "tan": "tangent"}
_DOMAIN = {"asin": " NaN outside [-1, 1].", "acos": " NaN outside [-1, 1].",
           "acosh": " NaN below 1.", "atanh": " +-inf at +-1, NaN outside [-1, 1]."}


def _hyperbolic(name: str) -> str:
    inverse = "inverse " if name.startswith("a") else ""
    return f"{inverse}hyperbolic {_FUNCTION[name.removeprefix('a')[:3]]}"


DOCS = family(_UNARY, {
    name: dict(what=what, x=x, y=y, domain=_DOMAIN.get(name, ""))
    for name, (what, x, y) in _CIRCULAR.items()
} | {
    name: dict(what=_hyperbolic(name), x=x, y=y, domain=_DOMAIN.get(name, ""))
    for name, (x, y) in _HYPERBOLIC.items()
})

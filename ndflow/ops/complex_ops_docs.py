"""The docstrings of complex_ops.py's public functions (attached at its end; see
core/doc_tables.py): the parts of a complex tensor from one template."""

from __future__ import annotations

from ndflow.core.doc_tables import family, note

_PART = """The {what} of each element ({real_input}).
{note}
    Args:
      {arg}: a {dtype} tensor.
      name: optional name for the operation.

    Returns:
      A tensor of {arg}'s shape {result}.

    Example:
      >>> tf.math.{name}({x}).numpy()
      {out}
    """

DOCS = {
    "complex": """Makes complex numbers from real and imaginary parts: real + imag * 1j.

    Args:
      real: a float32 or float64 tensor.
      imag: a tensor of real's dtype, broadcastable against it.
      name: optional name for the operation.

    Returns:
      complex64 for float32 parts, complex128 for float64.

    Example:
      >>> tf.complex([1.0], [2.0]).numpy()
      array([1.+2.j], dtype=complex64)
    """,
} | family(_PART, {
    "real": dict(what="real part", real_input="a real tensor is its own real part",
                 out="array([1.])"),
    "imag": dict(what="imaginary part", real_input="zeros for a real tensor",
                 out="array([2.])"),
    "conj": dict(what="complex conjugate", real_input="a real tensor is returned as it is",
                 arg="x", result="and dtype", out="array([1.-2.j])"),
    "angle": dict(what="argument (phase)", real_input="atan2(imag, real)", dtype="float or complex",
                  note=note("For a real tensor: 0, or pi where it is negative."),
                  x="[1j, -1 + 0j]", out="array([1.57079633, 3.14159265])"),
}, arg="input", dtype="numeric or complex", result="in the real dtype", x="[1 + 2j]")

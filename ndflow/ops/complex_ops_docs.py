"""The docstrings of complex_ops.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

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
    "real": """The real part of each element (a real tensor is its own real part).

    Args:
      input: a numeric or complex tensor.
      name: optional name for the operation.

    Returns:
      A tensor of input's shape in the real dtype.

    Example:
      >>> tf.math.real([1 + 2j]).numpy()
      array([1.])
    """,
    "imag": """The imaginary part of each element (zeros for a real tensor).

    Args:
      input: a numeric or complex tensor.
      name: optional name for the operation.

    Returns:
      A tensor of input's shape in the real dtype.

    Example:
      >>> tf.math.imag([1 + 2j]).numpy()
      array([2.])
    """,
    "conj": """The complex conjugate of each element (a real tensor is returned as it is).

    Args:
      x: a numeric or complex tensor.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.conj([1 + 2j]).numpy()
      array([1.-2.j])
    """,
    "angle": """The argument (phase) of each element, atan2(imag, real).

    For a real tensor: 0, or pi where it is negative.

    Args:
      input: a float or complex tensor.
      name: optional name for the operation.

    Returns:
      A tensor of input's shape in the real dtype.

    Example:
      >>> tf.math.angle([1j, -1 + 0j]).numpy()
      array([1.57079633, 3.14159265])
    """,
    "to_complex64": """Casts a tensor to complex64.

    Args:
      x: a numeric tensor.
      name: optional name for the operation.

    Returns:
      A complex64 tensor of x's shape.

    Example:
      >>> tf.compat.v1.to_complex64([1.0]).dtype
      tf.complex64
    """,
    "to_complex128": """Casts a tensor to complex128.

    Args:
      x: a numeric tensor.
      name: optional name for the operation.

    Returns:
      A complex128 tensor of x's shape.

    Example:
      >>> tf.compat.v1.to_complex128([1.0]).dtype
      tf.complex128
    """,
}

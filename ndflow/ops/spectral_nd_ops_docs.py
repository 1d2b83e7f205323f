"""The docstrings of spectral_nd_ops.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "fftnd": """The N-D discrete Fourier transform of a complex tensor.

    The transform runs over `axes` (every axis by default).

    Args:
      input_tensor: a complex64 or complex128 tensor.
      fft_length: optional lengths per axis (inputs are cut or zero-padded).
      axes: the axes to transform; None transforms every axis (the op supports inner axes).
      norm: None or "backward" (the only normalization TensorFlow's op supports).
      name: optional name for the operation.

    Returns:
      A complex tensor.

    Example:
      >>> tf.signal.fftnd(tf.ones([2, 2], tf.complex64)).numpy()
      array([[4.+0.j, 0.+0.j],
             [0.+0.j, 0.+0.j]], dtype=complex64)
    """,
    "ifftnd": """The N-D inverse discrete Fourier transform of a complex tensor.

    The transform runs over `axes` (every axis by default).

    Args:
      input_tensor: a complex64 or complex128 tensor.
      fft_length: optional lengths per axis.
      axes: the axes to transform; None transforms every axis (the op supports inner axes).
      norm: None or "backward" (the only normalization TensorFlow's op supports).
      name: optional name for the operation.

    Returns:
      A complex tensor.

    Example:
      >>> tf.signal.ifftnd(tf.ones([2, 2], tf.complex64)).shape
      TensorShape([2, 2])
    """,
    "rfftnd": """The N-D discrete Fourier transform of a real tensor (half spectrum).

    The transform runs over `axes` (every axis by default).

    Args:
      input_tensor: a float32 or float64 tensor.
      fft_length: optional lengths per axis; the last axis keeps fft_length // 2 + 1 terms.
      axes: the axes to transform; None transforms every axis (the op supports inner axes).
      norm: None or "backward" (the only normalization TensorFlow's op supports).
      name: optional name for the operation.

    Returns:
      A complex tensor.

    Example:
      >>> tf.signal.rfftnd(tf.ones([2, 4])).shape
      TensorShape([2, 3])
    """,
    "irfftnd": """The N-D inverse of rfftnd: a real signal from a half spectrum.

    The transform runs over `axes` (every axis by default).

    Args:
      input_tensor: a complex64 or complex128 tensor.
      fft_length: optional output lengths per axis (by default 2 * (n - 1) on the last).
      axes: the axes to transform; None transforms every axis (the op supports inner axes).
      norm: None or "backward" (the only normalization TensorFlow's op supports).
      name: optional name for the operation.

    Returns:
      A real tensor.

    Example:
      >>> tf.signal.irfftnd(tf.ones([2, 3], tf.complex64)).shape
      TensorShape([2, 4])
    """,
    "gen_fftnd": """The raw FFTND op over `axes`.

    Args:
      input: a complex tensor.
      fft_length: an int32 vector of transform lengths, one per axis.
      axes: an int32 vector of the axes to transform.
      name: optional name for the operation.

    Returns:
      A complex tensor.

    Example:
      >>> tf.fftnd(tf.ones([2, 2], tf.complex64), [2, 2], [0, 1]).shape
      TensorShape([2, 2])
    """,
    "gen_ifftnd": """The raw IFFTND op over `axes`.

    Args:
      input: a complex tensor.
      fft_length: an int32 vector of transform lengths, one per axis.
      axes: an int32 vector of the axes to transform.
      name: optional name for the operation.

    Returns:
      A complex tensor.

    Example:
      >>> tf.ifftnd(tf.ones([2, 2], tf.complex64), [2, 2], [0, 1]).shape
      TensorShape([2, 2])
    """,
    "gen_rfftnd": """The raw RFFTND op over `axes`.

    Args:
      input: a float tensor.
      fft_length: an int32 vector of transform lengths, one per axis.
      axes: an int32 vector of the axes to transform.
      Tcomplex: the output dtype, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A complex tensor (half spectrum on the last axis).

    Example:
      >>> tf.rfftnd(tf.ones([2, 4]), [2, 4], [0, 1]).shape
      TensorShape([2, 3])
    """,
    "gen_irfftnd": """The raw IRFFTND op over `axes`.

    Args:
      input: a complex tensor (half spectrum).
      fft_length: an int32 vector of transform lengths, one per axis.
      axes: an int32 vector of the axes to transform.
      Treal: the output dtype, float32 or float64.
      name: optional name for the operation.

    Returns:
      A real tensor.

    Example:
      >>> tf.irfftnd(tf.ones([2, 3], tf.complex64), [2, 4], [0, 1]).shape
      TensorShape([2, 4])
    """,
}

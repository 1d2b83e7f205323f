"""The docstrings of spectral_ops.py's FFT functions (made in loops there) and of the shifts."""

from __future__ import annotations

_DIMS = {1: "innermost dimension", 2: "2 innermost dimensions", 3: "3 innermost dimensions"}
_COMPLEX_EXAMPLES = {
    "fft": ("tf.signal.fft(tf.constant([1, 1, 1, 1], tf.complex64)).numpy()",
            "array([4.+0.j, 0.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)"),
    "ifft": ("tf.signal.ifft(tf.constant([4, 0, 0, 0], tf.complex64)).numpy()",
             "array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)"),
    "fft2d": ("tf.signal.fft2d(tf.ones([2, 2], tf.complex64)).shape", "TensorShape([2, 2])"),
    "ifft2d": ("tf.signal.ifft2d(tf.ones([2, 2], tf.complex64)).shape", "TensorShape([2, 2])"),
    "fft3d": ("tf.signal.fft3d(tf.ones([2, 2, 2], tf.complex64)).shape",
              "TensorShape([2, 2, 2])"),
    "ifft3d": ("tf.signal.ifft3d(tf.ones([2, 2, 2], tf.complex64)).shape",
               "TensorShape([2, 2, 2])"),
}
_REAL_EXAMPLES = {
    "rfft": ("tf.signal.rfft([1.0, 1.0, 1.0, 1.0]).numpy()",
             "array([4.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)"),
    "irfft": ("tf.signal.irfft(tf.constant([4, 0, 0], tf.complex64)).numpy()",
              "array([1., 1., 1., 1.], dtype=float32)"),
    "rfft2d": ("tf.signal.rfft2d(tf.ones([4, 4])).shape", "TensorShape([4, 3])"),
    "irfft2d": ("tf.signal.irfft2d(tf.ones([4, 3], tf.complex64)).shape",
                "TensorShape([4, 4])"),
    "rfft3d": ("tf.signal.rfft3d(tf.ones([2, 2, 4])).shape", "TensorShape([2, 2, 3])"),
    "irfft3d": ("tf.signal.irfft3d(tf.ones([2, 2, 3], tf.complex64)).shape",
                "TensorShape([2, 2, 4])"),
}


def complex_doc(name: str, rank: int) -> str:
    """The docstring of the complex transform `name` over `rank` dimensions."""
    inverse = name.startswith("i")
    what = "inverse discrete Fourier transform" if inverse else "discrete Fourier transform"
    call, result = _COMPLEX_EXAMPLES[name]
    scale = " (scaled by 1/N)" if inverse else ""
    return f"""The {what}{scale} over the {_DIMS[rank]} of a complex tensor.

    Args:
      input: a complex64 or complex128 tensor of rank >= {rank} (real values are converted).
      name: optional name for the operation.

    Returns:
      A tensor of input's shape and dtype.

    Example:
      >>> {call}
      {result}
    """


def real_doc(name: str, rank: int) -> str:
    """The docstring of the real transform `name` over `rank` dimensions."""
    if name.startswith("i"):
        return f"""The inverse of `rfft{name[5:]}`: a real signal from the non-negative frequencies.

    Transforms the {_DIMS[rank]} of a complex tensor holding the fft_length // 2 + 1
    non-negative frequency terms of a real signal (longer inputs are cut, shorter ones
    zero-padded).

    Args:
      input_tensor: a complex64 or complex128 tensor of rank >= {rank}.
      fft_length: an int32 tensor of {rank} lengths of the output signal; by default the
        input's inner dimensions, the innermost as 2 * (n - 1).
      name: optional name for the operation.

    Returns:
      A float32 (complex64 input) or float64 tensor whose inner dimensions are `fft_length`.

    Raises:
      ValueError: for a float tensor input or a rank below {rank}.

    Example:
      >>> {_REAL_EXAMPLES[name][0]}
      {_REAL_EXAMPLES[name][1]}
    """
    return f"""The discrete Fourier transform over the {_DIMS[rank]} of a real tensor.

    Only the fft_length // 2 + 1 non-negative frequency terms of the innermost dimension are
    returned (the others are their complex conjugates).

    Args:
      input_tensor: a float32 or float64 tensor of rank >= {rank}.
      fft_length: an int32 tensor of {rank} transform lengths; by default the input's inner
        dimensions. Inputs are cut or zero-padded to it.
      name: optional name for the operation.

    Returns:
      A complex64 (float32 input) or complex128 tensor; its innermost dimension is
      fft_length[-1] // 2 + 1.

    Raises:
      ValueError: for a complex or integer tensor input or a rank below {rank}.

    Example:
      >>> {_REAL_EXAMPLES[name][0]}
      {_REAL_EXAMPLES[name][1]}
    """


DOCS = {
    "fftshift": """Moves the zero-frequency term to the center of the spectrum (NumPy's fftshift).

    Args:
      x: a tensor (typically an FFT's output).
      axes: an int or list of ints: the axes to shift; None shifts every axis.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype, rolled by half the size along each axis.

    Example:
      >>> tf.signal.fftshift([0, 1, 2, 3]).numpy()
      array([2, 3, 0, 1], dtype=int32)
    """,
    "ifftshift": """The inverse of `fftshift` (they differ for odd sizes).

    Args:
      x: a tensor.
      axes: an int or list of ints: the axes to shift; None shifts every axis.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.signal.ifftshift([2, 3, 0, 1]).numpy()
      array([0, 1, 2, 3], dtype=int32)
    """,
}

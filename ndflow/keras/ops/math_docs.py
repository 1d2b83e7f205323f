"""Docstrings of keras.ops' math module: segment reductions, top-k, logsumexp, framing,
distances, error functions, FFTs and STFTs (math_functions.py). Attached by
`ndflow.keras.docstrings.attach`; the examples run as doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import sections

_PAIR = """x: a tuple (real, imag) of two float tensors of one shape: complex values as
        their parts."""
_PAIR_RAISES = """Raises:
      ValueError: `x` is not a pair of same-shaped float tensors."""


def _segment(what: str, empty: str, example: str = "") -> str:
    doc = f"""The {what} of `data`'s rows per segment: row i goes to segment
    `segment_ids[i]`.

    Args:
      data: a tensor whose first axis is segmented.
      segment_ids: an int tensor of shape (len(data),), the segment of each row.
      num_segments: the number of segments (default: computed from the ids); segments
        without rows give {empty}.
      sorted: whether `segment_ids` is sorted ascending (then `num_segments` must be
        None).

    Returns:
      A tensor of shape `(num_segments,) + data.shape[1:]`.

    Raises:
      ValueError: `sorted=True` together with `num_segments`.
    """
    return sections(doc, example=example)


def _erf(summary: str, example: str = "") -> str:
    doc = f"""{summary}

    Args:
      x: a float tensor or array-like.

    Returns:
      A tensor of `x`'s shape and dtype.
    """
    return sections(doc, example=example)


DOCS = {
    "segment_sum": _segment("sum", "0 (when unsorted, the default count is the number of "
                            "distinct ids)",
                            ">>> tf.keras.ops.segment_sum([1, 2, 3], [0, 0, 1]).numpy()\n"
                            "    array([3, 3], dtype=int32)"),
    "segment_max": _segment("maximum", "the dtype's lowest value (default count `max(ids) "
                            "+ 1`)"),
    "segment_min": _segment("minimum", "the dtype's highest value (default count `max(ids) "
                            "+ 1`)"),
    "segment_prod": _segment("product", "1 (default count `max(ids) + 1`)"),
    "top_k": """The `k` largest values along the last axis and their indices.

    Args:
      x: a tensor of rank 1 or more.
      k: how many values to take (at most the last axis' size).
      sorted: whether the values come largest first.

    Returns:
      A tuple (values, indices), each of shape `x.shape[:-1] + (k,)`; indices are int32.

    Example:

    >>> values, indices = tf.keras.ops.top_k([1, 5, 3], 2)
    >>> values.numpy(), indices.numpy()
    (array([5, 3], dtype=int32), array([1, 2], dtype=int32))
    """,
    "in_top_k": """Whether each target class is among the `k` largest predictions of its
    row.

    Args:
      targets: an int tensor of shape (batch,), class indices.
      predictions: a float tensor of shape (batch, classes).
      k: the number of top predictions to look at (ties at the k-th value count as in).

    Returns:
      A bool tensor of shape (batch,).

    Example:

    >>> tf.keras.ops.in_top_k([0, 1], [[0.9, 0.1], [0.9, 0.1]], 1).numpy()
    array([ True, False])
    """,
    "logsumexp": """`log(sum(exp(x)))` over `axis`, computed without overflow.

    Args:
      x: a float tensor or array-like.
      axis: an int or tuple of ints; None reduces every axis.
      keepdims: whether the reduced axes stay, with size 1.

    Returns:
      A tensor of `x`'s shape without (or with size 1 on) the reduced axes.

    Example:

    >>> round(float(tf.keras.ops.logsumexp([0.0, 0.0])), 4)
    0.6931
    """,
    "extract_sequences": """Frames of `sequence_length` consecutive values of `x`'s last
    axis, every `sequence_stride` values (frames past the end are dropped).

    Args:
      x: a tensor of rank 1 or more.
      sequence_length: the frame length.
      sequence_stride: the step between frame starts.

    Returns:
      A tensor of shape `x.shape[:-1] + (num_frames, sequence_length)`.

    Example:

    >>> tf.keras.ops.extract_sequences([1, 2, 3, 4, 5], 2, 2).numpy()
    array([[1, 2],
           [3, 4]], dtype=int32)
    """,
    "cdist": """Euclidean distances between every row of `x` and every row of `y`.

    Args:
      x: a tensor of shape (..., n, d).
      y: a tensor of shape (..., m, d).

    Returns:
      A tensor of shape (..., n, m).

    Raises:
      ValueError: a rank below 2, or different last dimensions.

    Example:

    >>> tf.keras.ops.cdist([[0.0, 0.0]], [[3.0, 4.0], [0.0, 1.0]]).numpy()
    array([[5., 1.]], dtype=float32)
    """,
    "erf": _erf("Elementwise Gauss error function `2/sqrt(pi) * integral_0^x exp(-t**2) dt`.",
                ">>> tf.keras.ops.erf([0.0]).numpy()\n    array([0.], dtype=float32)"),
    "erfc": _erf("Elementwise complementary error function `1 - erf(x)`, accurate for "
                 "large `x`."),
    "erfinv": _erf("Elementwise inverse error function: `erfinv(erf(x)) == x`; +-1 give "
                   "+-inf and values outside [-1, 1] NaN (float16/bfloat16 computed in "
                   "float32)."),
    "logdet": """The natural log of the determinant of each positive-definite (Hermitian)
    matrix in `x`, through its Cholesky factor.

    Args:
      x: a float tensor of shape (..., n, n).

    Returns:
      A tensor of shape `x.shape[:-2]`.
    """,
    "fft": f"""The 1-D discrete Fourier transform over the last axis.

    Args:
      {_PAIR}

    Returns:
      A tuple (real, imag) of the transform, of `x`'s shape.

    {_PAIR_RAISES}

    Example:

    >>> real, imag = tf.keras.ops.fft(([1.0, 1.0], [0.0, 0.0]))
    >>> real.numpy(), imag.numpy()
    (array([2., 0.], dtype=float32), array([0., 0.], dtype=float32))
    """,
    "fft2": f"""The 2-D discrete Fourier transform over the last two axes.

    Args:
      {_PAIR}

    Returns:
      A tuple (real, imag) of the transform, of `x`'s shape.

    {_PAIR_RAISES}
    """,
    "ifft2": """The inverse 2-D discrete Fourier transform over the last two axes (divided
    by the number of points, so `ifft2(fft2(x))` is `x`).

    Args:
      x: a tuple (real, imag) of two float tensors of one shape.

    Returns:
      A tuple (real, imag) of `x`'s shape.
    """,
    "rfft": """The 1-D Fourier transform of a real signal over its last axis (the
    non-negative frequencies only).

    Args:
      x: a real tensor (computed in float32 unless float64).
      fft_length: the number of points (default the last axis' size); the signal is
        cropped or zero-padded to it.

    Returns:
      A tuple (real, imag), each with `fft_length // 2 + 1` values on the last axis.

    Example:

    >>> real, imag = tf.keras.ops.rfft([1.0, 1.0, 1.0, 1.0])
    >>> real.numpy()
    array([4., 0., 0.], dtype=float32)
    """,
    "irfft": f"""The inverse of `rfft`: a real signal from its non-negative frequencies.

    Args:
      {_PAIR}
      fft_length: the output length (default `2 * (n - 1)` for n frequencies).

    Returns:
      A real tensor with `fft_length` values on the last axis.

    {_PAIR_RAISES}
    """,
    "stft": """The short-time Fourier transform of real signals over their last axis.

    Args:
      x: a float32 or float64 tensor of signals, shape (..., samples).
      sequence_length: the window length (at most `fft_length`; the window is centered
        in each `fft_length` frame).
      sequence_stride: the step between frames.
      fft_length: the frame length and number of FFT points.
      window: "hann", "hamming", a 1-D tensor of `sequence_length` values, or None (no
        window).
      center: whether to reflect-pad the signal by `fft_length // 2` on both sides so
        frames are centered on their time.

    Returns:
      A tuple (real, imag), each of shape (..., frames, fft_length // 2 + 1).

    Raises:
      TypeError: `x` is not float32 or float64.
      ValueError: `fft_length < sequence_length`, or an unknown or ill-shaped `window`.

    Example:

    >>> real, imag = tf.keras.ops.stft(tf.zeros((1, 64)), 16, 8, 16)
    >>> real.shape
    TensorShape([1, 9, 9])
    """,
    "istft": """The inverse short-time Fourier transform: signals from `stft` output
    (overlap-add with the window).

    Args:
      x: a tuple (real, imag), each of shape (..., frames, fft_length // 2 + 1).
      sequence_length: the window length used by `stft`.
      sequence_stride: the step between frames.
      fft_length: the frame length.
      length: optional output length (the signal is cropped to it).
      window: the window `stft` used ("hann", "hamming", a 1-D tensor or None).
      center: whether `stft` padded the signal (the padding is then removed).

    Returns:
      A float tensor of signals, shape (..., samples).

    Raises:
      ValueError: `x` is not a pair of same-shaped float tensors, or a bad `window`.
    """,
}

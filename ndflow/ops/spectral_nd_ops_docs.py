"""The docstrings of spectral_nd_ops.py's public functions (attached at its end; see
core/doc_tables.py): one template for the tf.signal N-D transforms and one for the raw ops,
with each transform's words and example."""

from __future__ import annotations

from ndflow.core.doc_tables import family

_SIGNAL = """The N-D {what}.

    The transform runs over `axes` (every axis by default).

    Args:
      input_tensor: a {dtypes} tensor.
      fft_length: optional {lengths}.
      axes: the axes to transform; None transforms every axis (the op supports inner axes).
      norm: None or "backward" (the only normalization TensorFlow's op supports).
      name: optional name for the operation.

    Returns:
      A {result} tensor.

    Example:
      >>> tf.signal.{name}({call}
      {out}
    """

_RAW = """The raw {op} op over `axes`.

    Args:
      input: a {input}.
      fft_length: an int32 vector of transform lengths, one per axis.
      axes: an int32 vector of the axes to transform.{dtype}
      name: optional name for the operation.

    Returns:
      A {result}.

    Example:
      >>> tf.{op_name}(tf.ones({shape}), {lengths}, [0, 1]).shape
      TensorShape({out})
    """

_COMPLEX = "complex64 or complex128"

DOCS = family(_SIGNAL, {
    "fftnd": dict(what="discrete Fourier transform of a complex tensor",
                  lengths="lengths per axis (inputs are cut or zero-padded)",
                  call="tf.ones([2, 2], tf.complex64)).numpy()",
                  out="array([[4.+0.j, 0.+0.j],\n             [0.+0.j, 0.+0.j]], dtype=complex64)"),
    "ifftnd": dict(what="inverse discrete Fourier transform of a complex tensor",
                   lengths="lengths per axis", call="tf.ones([2, 2], tf.complex64)).shape",
                   out="TensorShape([2, 2])"),
    "rfftnd": dict(what="discrete Fourier transform of a real tensor (half spectrum)",
                   dtypes="float32 or float64", call="tf.ones([2, 4])).shape",
                   lengths="lengths per axis; the last axis keeps fft_length // 2 + 1 terms",
                   out="TensorShape([2, 3])"),
    "irfftnd": dict(what="inverse of rfftnd: a real signal from a half spectrum", result="real",
                    lengths="output lengths per axis (by default 2 * (n - 1) on the last)",
                    call="tf.ones([2, 3], tf.complex64)).shape", out="TensorShape([2, 4])"),
}, dtypes=_COMPLEX, result="complex") | {
    name: _RAW.format(op=name[4:].upper(), op_name=name[4:], **words)
    for name, words in {
        "gen_fftnd": dict(input="complex tensor", dtype="", result="complex tensor",
                          shape="[2, 2], tf.complex64", lengths="[2, 2]", out="[2, 2]"),
        "gen_ifftnd": dict(input="complex tensor", dtype="", result="complex tensor",
                           shape="[2, 2], tf.complex64", lengths="[2, 2]", out="[2, 2]"),
        "gen_rfftnd": dict(input="float tensor", shape="[2, 4]", lengths="[2, 4]", out="[2, 3]",
                           dtype=f"\n      Tcomplex: the output dtype, {_COMPLEX}.",
                           result="complex tensor (half spectrum on the last axis)"),
        "gen_irfftnd": dict(input="complex tensor (half spectrum)", result="real tensor",
                            dtype="\n      Treal: the output dtype, float32 or float64.",
                            shape="[2, 3], tf.complex64", lengths="[2, 4]", out="[2, 4]"),
    }.items()
}

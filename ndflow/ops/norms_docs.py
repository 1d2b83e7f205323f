"""The docstrings of norms.py's public functions (attached at its end; see
core/doc_tables.py); the moment reductions' from one template."""

from __future__ import annotations

from ndflow.core.doc_tables import family

DOCS = {
    "l2_normalize": """Scales a tensor along `axis` to unit L2 norm.

    Computes x * rsqrt(max(sum(x ** 2, axis), epsilon)).

    Args:
      x: a float tensor.
      axis: the dimension(s) to normalize; None normalizes the whole tensor.
      epsilon: the lower bound of the squared norm (avoids division by 0).
      name: optional name for the operation.
      dim: deprecated alias of `axis`.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.l2_normalize([3.0, 4.0]).numpy()
      array([0.6, 0.8], dtype=float32)
    """,
    "log_sigmoid": """Elementwise log(sigmoid(x)), computed stably as -softplus(-x).

    Args:
      x: a float tensor.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.log_sigmoid([0.0]).numpy()
      array([-0.6931472], dtype=float32)
    """,
    "norm": """A vector or matrix norm of a tensor.

    Args:
      tensor: a float or complex tensor.
      ord: 'euclidean' (2 for vectors, Frobenius for matrices), 'fro', 1, 2, np.inf, or any p
        > 0 for vector norms.
      axis: None (the whole tensor as a vector), an int (vector norms along it) or a pair of
        ints (matrix norms).
      keepdims: if True, the reduced dimensions stay as size 1.
      name: optional name for the operation.
      keep_dims: deprecated alias of `keepdims`.

    Returns:
      A tensor of the norms (real dtype).

    Raises:
      ValueError: for an unsupported ord/axis combination.

    Example:
      >>> float(tf.norm([3.0, 4.0]))
      5.0
    """,
    "normalize": """Divides a tensor by its norm, returning both.

    Args:
      tensor: a float tensor.
      ord: the norm order (see `tf.norm`).
      axis: the axis or axes of the norm (see `tf.norm`).
      name: optional name for the operation.

    Returns:
      A tuple `(normalized, norm)`; the norm keeps the reduced dimensions as size 1.

    Example:
      >>> tf.linalg.normalize([3.0, 4.0])[0].numpy()
      array([0.6, 0.8], dtype=float32)
    """,
} | family("""The {what} over the given axes.

    Args:
      input_tensor: a {dtype} tensor.
      axis: an int or list of ints; None reduces every axis.
      keepdims: if True, the reduced dimensions stay as size 1.
      name: optional name for the operation.

    Returns:
      A tensor of the reduced shape{real}.

    Example:
      >>> float(tf.math.{name}({x}))
      {out}
    """, {
    "reduce_euclidean_norm": dict(what="Euclidean norm, sqrt(sum(x ** 2)),", dtype="numeric",
                                  x="[3.0, 4.0]", out="5.0"),
    "reduce_variance": dict(what="variance (mean squared deviation from the mean)",
                            real=" (real dtype for complex input)", x="[1.0, 2.0, 3.0, 4.0]",
                            out="1.25"),
    "reduce_std": dict(what="standard deviation (square root of the variance)",
                       x="[1.0, 3.0]", out="1.0"),
}, dtype="float or complex", real="")

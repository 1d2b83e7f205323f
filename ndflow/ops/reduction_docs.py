"""The docstrings of reduction.py's public functions (attached at its end; see
core/doc_tables.py): one template for the reductions, one for their TF1 spellings and one for
argmax/argmin (both spellings), with each function's words and example."""

from __future__ import annotations

from ndflow.core.doc_tables import family, note

_REDUCE = """The {what} of the elements over the given axes.
{note}
    Args:
      input_tensor: a {kind} tensor.
      axis: an int or list of ints (negative counts from the end), or an int tensor; None reduces
        every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.
      name: optional name for the operation.

    Returns:
      A tensor of input_tensor's dtype, its shape without the reduced axes (or with them as 1).

    Raises:
      InvalidArgumentError: if an axis is out of range.

    Example:
      >>> {example}
    """

_REDUCE_V1 = """The {what} of the elements over the given axes (TF1 signature).

    The arguments and result are those of `tf.math.{v2}`, plus two deprecated aliases:
    `reduction_indices` for `axis` and `keep_dims` for `keepdims`.

    Example:
      >>> x = {x}
      >>> tf.compat.v1.{v2}(x, reduction_indices=1, keep_dims=True).shape
      TensorShape([2, 1])
    """

_ARG = """The index of the {which} value along an axis (the first one on ties).

    Args:
      input: a numeric tensor.
      axis: the axis to search (an int or scalar int tensor); None means 0.{args}

    Returns:
      A tensor of `output_type`: input's shape without `axis`.

    Raises:
      ValueError: if `axis` is out of range for a known rank.

    Example:
      >>> tf.{module}.{public}([[1, 5], [7, 2]], axis=1).numpy()
      {out}
    """

_X = "x = tf.constant([[1, 2], [3, 4]])\n      >>> "
_WHAT = {"sum": "sum", "mean": "mean", "max": "maximum", "min": "minimum", "prod": "product",
         "all": "logical and", "any": "logical or"}
_EXAMPLES = {  # each reduction's example: its `>>>` lines and output
    "sum": f"{_X}tf.reduce_sum(x, axis=0).numpy()\n      array([4, 6], dtype=int32)",
    "mean": "float(tf.reduce_mean([1.0, 2.0, 4.0]))\n      2.3333332538604736",
    "max": f"{_X}tf.reduce_max(x, axis=1, keepdims=True).numpy()\n"
           "      array([[2],\n             [4]], dtype=int32)",
    "min": f"{_X}tf.reduce_min(x, axis=1).numpy()\n      array([1, 3], dtype=int32)",
    "prod": f"{_X}int(tf.reduce_prod(x))\n      24",
    "all": "tf.reduce_all([[True, False], [True, True]], axis=1).numpy()\n"
           "      array([False,  True])",
    "any": "tf.reduce_any([[True, False], [False, False]], axis=1).numpy()\n"
           "      array([ True, False])",
}
_MEAN = note("For integer input the mean is computed in the integer dtype, so it is truncated.")
_BOOL = ("all", "any")

_ARG_V2 = """
      output_type: the index dtype, int32 or int64.
      name: optional name for the operation."""
_ARG_V1 = """
      name: optional name for the operation.
      dimension: deprecated alias of `axis`.
      output_type: the index dtype, int32 or int64."""

DOCS = family(_REDUCE, {
    f"reduce_{op}": dict(what=_WHAT[op], example=example, note=_MEAN if op == "mean" else "",
                         kind="boolean" if op in _BOOL else "numeric")
    for op, example in _EXAMPLES.items()
}) | family(_REDUCE_V1, {
    f"reduce_{op}_v1": dict(what=_WHAT[op], v2=f"reduce_{op}",
                            x="[[True, False], [True, True]]" if op in _BOOL else
                            "[[1, 2], [3, 4]]")
    for op in _WHAT
}) | family(_ARG, {
    f"{public}{suffix}": dict(public=public, which=which, out=out, module=module, args=args)
    for public, which, out in (("argmax", "largest", "array([1, 0])"),
                               ("argmin", "smallest", "array([0, 1])"))
    for suffix, module, args in (("", "math", _ARG_V2), ("_v1", "compat.v1", _ARG_V1))
})

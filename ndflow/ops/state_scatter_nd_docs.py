"""The docstrings of state_scatter_nd.py's public functions (attached at its end; see
core/doc_tables.py): one template for the row scatters and one for the N-D ones, with each
op's words and example."""

from __future__ import annotations

from ndflow.core.doc_tables import family

_TAIL = """
      use_locking: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      The variable's new value (in a graph, the op's output).

    Raises:
      InvalidArgumentError: for an index out of range.

    Example:
      >>> v = tf.Variable([1.0, 2.0, 3.0])
      >>> tf.compat.v1.{name}(v, {call}).numpy()
      {out}
    """

_ROWS = """{what} rows `indices` of the variable `ref`.

    {duplicates}

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor of row indices into ref's first dimension.
      updates: a tensor of shape indices.shape + ref.shape[1:] (or a scalar).""" + _TAIL

_ND = """{what} the slices of the variable `ref` at N-D `indices`.

    Args:
      ref: a `tf.Variable`.
      indices: an int tensor [..., k] of index tuples into ref's first k dimensions.
      updates: a tensor of shape indices.shape[:-1] + ref.shape[k:].""" + _TAIL

_ALL = "Updates at duplicate indices all apply."
_WHAT = {"update": "Assigns `updates` to", "add": "Adds `updates` to",
         "sub": "Subtracts `updates` from", "mul": "Multiplies by `updates`",
         "div": "Divides by `updates`", "max": "Keeps the maximum with `updates` in",
         "min": "Keeps the minimum with `updates` in"}
_ROW_EXAMPLES = {  # op: the example's indices and updates, and the variable's new value
    "update": ("[0, 2], [10.0, 30.0]", "[10.,  2., 30.]"),
    "add": ("[0, 0], [1.0, 1.0]", "[3., 2., 3.]"),
    "sub": ("[1], [2.0]", "[1., 0., 3.]"), "mul": ("[2], [2.0]", "[1., 2., 6.]"),
    "div": ("[1], [2.0]", "[1., 1., 3.]"), "max": ("[0], [5.0]", "[5., 2., 3.]"),
    "min": ("[2], [0.0]", "[1., 2., 0.]"),
}
_ND_EXAMPLES = {"update": ("[[0], [2]], [10.0, 30.0]", "[10.,  2., 30.]"),
                "add": ("[[1]], [5.0]", "[1., 7., 3.]"), "sub": ("[[1]], [1.0]", "[1., 1., 3.]")}

DOCS = family(_ROWS, {
    f"scatter_{op}": dict(what=_WHAT[op], call=call, out=f"array({out}, dtype=float32)",
                          duplicates=_ALL if op != "update" else
                          "With duplicate indices one of their updates is kept.")
    for op, (call, out) in _ROW_EXAMPLES.items()
}) | family(_ND, {
    f"scatter_nd_{op}": dict(what=_WHAT[op], call=call, out=f"array({out}, dtype=float32)")
    for op, (call, out) in _ND_EXAMPLES.items()
})

"""Docstrings of keras.ops' joining, splitting, tiling, padding and selection functions
(numpy_array.py). Attached by `ndflow.keras.docstrings.attach`; the examples run as
doctests."""

from __future__ import annotations

_PROMOTED = "The inputs are promoted to their common dtype first."


def _split(what: str, axis: str) -> str:
    return f"""Splits `x` into pieces along {what} (`split` with axis={axis}).

    Args:
      x: a tensor or array-like.
      indices_or_sections: an int N (N equal pieces; the axis' size must divide by N) or
        a list of the indices where the pieces start.

    Returns:
      A list of tensors.

    Raises:
      ValueError: an int N that does not divide the axis' size.
    """


def _stack(what: str, example: str) -> str:
    return f"""Joins a sequence of tensors {what}.

    Args:
      xs: a list or tuple of tensors or array-likes. {_PROMOTED}

    Returns:
      The joined tensor.

    Example:

    {example}
    """


def _flip(axis: str) -> str:
    return f"""`x` with the order of its elements reversed along axis {axis}.

    Args:
      x: a tensor or array-like of rank {int(axis) + 1} or more.

    Returns:
      A tensor of `x`'s shape.
    """


DOCS = {
    "concatenate": f"""Joins a sequence of tensors along an existing axis.

    Args:
      xs: a list or tuple of tensors or array-likes, equal in every axis but `axis`.
        {_PROMOTED}
      axis: the axis to join along; None flattens every input first.

    Returns:
      The joined tensor.

    Example:

    >>> tf.keras.ops.concatenate([[1, 2], [3]]).numpy()
    array([1, 2, 3], dtype=int32)
    """,
    "append": """`x2` appended after `x1` along `axis`.

    Args:
      x1: a tensor or array-like.
      x2: a tensor or array-like, equal to `x1` in every axis but `axis`.
      axis: the axis to join along; None (the default) flattens both first.

    Returns:
      The joined tensor, in the two inputs' common dtype.
    """,
    "stack": f"""Joins a sequence of same-shaped tensors along a new axis.

    Args:
      x: a list or tuple of tensors or array-likes of one shape. {_PROMOTED}
      axis: the position of the new axis in the result.

    Returns:
      A tensor one rank higher than the inputs.

    Example:

    >>> tf.keras.ops.stack([[1, 2], [3, 4]], axis=1).numpy()
    array([[1, 3],
           [2, 4]], dtype=int32)
    """,
    "vstack": _stack("row-wise: along axis 0, 1-D inputs taken as rows (1, n)",
                     ">>> tf.keras.ops.vstack([[1, 2], [3, 4]]).numpy()\n"
                     "    array([[1, 2],\n           [3, 4]], dtype=int32)"),
    "hstack": _stack("column-wise: along axis 1 (axis 0 for 1-D inputs)",
                     ">>> tf.keras.ops.hstack([[1, 2], [3]]).numpy()\n"
                     "    array([1, 2, 3], dtype=int32)"),
    "dstack": _stack("depth-wise: along axis 2, 1-D inputs taken as (1, n, 1) and 2-D ones "
                     "as (m, n, 1)",
                     ">>> tf.keras.ops.dstack([[1, 2], [3, 4]]).shape\n"
                     "    TensorShape([1, 2, 2])"),
    "split": """Splits `x` into pieces along `axis`.

    Args:
      x: a tensor or array-like.
      indices_or_sections: an int N (N equal pieces; the axis' size must divide by N) or
        a list of the indices where the pieces start (`[2, 5]` gives `x[:2]`, `x[2:5]`,
        `x[5:]`).
      axis: the axis to split.

    Returns:
      A list of tensors.

    Raises:
      ValueError: an int N that does not divide the axis' size.

    Example:

    >>> [p.numpy().tolist() for p in tf.keras.ops.split([1, 2, 3, 4, 5], [2, 3])]
    [[1, 2], [3], [4, 5]]
    """,
    "array_split": """Splits `x` into pieces along `axis`, allowing unequal pieces.

    Args:
      x: a tensor or array-like.
      indices_or_sections: an int N (N pieces; the first `size % N` are one longer) or a
        list of the indices where the pieces start.
      axis: the axis to split.

    Returns:
      A list of tensors.

    Example:

    >>> [p.numpy().tolist() for p in tf.keras.ops.array_split([1, 2, 3, 4, 5], 2)]
    [[1, 2, 3], [4, 5]]
    """,
    "vsplit": _split("the first axis (rows)", "0"),
    "hsplit": _split("the second axis (columns; the first for 1-D `x`)", "1"),
    "dsplit": _split("the third axis (depth)", "2"),
    "tile": """`x` repeated as a whole `repeats` times along each axis.

    Args:
      x: a tensor or array-like.
      repeats: an int or a list of ints; shorter than `x`'s rank, it is padded with
        leading 1s; longer, `x` gets leading axes of size 1.

    Returns:
      The tiled tensor.

    Example:

    >>> tf.keras.ops.tile([1, 2], 2).numpy()
    array([1, 2, 1, 2], dtype=int32)
    """,
    "repeat": """Each element (or slice along `axis`) of `x` repeated in place.

    Args:
      x: a tensor or array-like.
      repeats: an int, or a 1-D list/tensor with a count per element along `axis`.
      axis: the axis to repeat along; None flattens `x` first.

    Returns:
      A tensor with `axis` (or the flattened axis) lengthened.

    Example:

    >>> tf.keras.ops.repeat([1, 2], 2).numpy()
    array([1, 1, 2, 2], dtype=int32)
    """,
    "pad": """`x` padded at the start and end of each axis.

    Args:
      x: a tensor or array-like.
      pad_width: `((before, after), ...)` per axis, one pair for every axis, a single
        `(before, after)` pair or an int for all axes.
      mode: "constant" (pad with `constant_values`), "reflect" (mirror without the edge
        value) or "symmetric" (mirror with it).
      constant_values: the padding value for mode "constant" (default 0).

    Returns:
      The padded tensor, in `x`'s dtype.

    Raises:
      ValueError: another `mode`, `constant_values` with a mode other than "constant",
        or a `pad_width` whose length is not `x`'s rank.

    Example:

    >>> tf.keras.ops.pad([1, 2], (1, 2)).numpy()
    array([0, 1, 2, 0, 0], dtype=int32)
    """,
    "take": """Elements of `x` picked by `indices` along `axis`.

    Args:
      x: a tensor or array-like.
      indices: an int tensor or array-like of any shape; negative indices count from the
        end of the axis (float indices are cast to int32).
      axis: the axis to pick along; None flattens `x` first.

    Returns:
      A tensor of shape `x.shape[:axis] + indices.shape + x.shape[axis + 1:]`.

    Example:

    >>> tf.keras.ops.take([10, 20, 30], [2, -1, 0]).numpy()
    array([30, 30, 10], dtype=int32)
    """,
    "take_along_axis": """Elements of `x` picked along `axis` by an index tensor of `x`'s rank
    (the inverse of `argsort`-like results: `take_along_axis(x, argsort(x), -1)` sorts).

    Args:
      x: a tensor or array-like.
      indices: an int tensor of `x`'s rank, broadcastable with `x` except along `axis`;
        negative indices count from the end.
      axis: the axis to pick along; None flattens `x` (then `indices` must be 1-D).

    Returns:
      A tensor of the broadcast shape with `indices`' length along `axis`.

    Raises:
      ValueError: `axis` is None and `indices` is not 1-D.

    Example:

    >>> tf.keras.ops.take_along_axis([[3, 1, 2]], [[1, 2, 0]], axis=1).numpy()
    array([[1, 2, 3]], dtype=int32)
    """,
    "get_item": """`x[key]`: NumPy-style indexing of `x` (ints, slices, None, Ellipsis).

    Args:
      x: a tensor or array-like.
      key: an index, a slice or a tuple of them.

    Returns:
      The selected tensor.
    """,
    "where": """Elementwise choice between `x1` (where `condition`) and `x2` (elsewhere);
    with only `condition`, the indices of its true elements (as `nonzero`).

    Args:
      condition: a bool tensor or array-like (other dtypes: nonzero is True).
      x1: values where `condition` holds, broadcastable with it.
      x2: values elsewhere. `x1` and `x2` are promoted to a common dtype.

    Returns:
      A tensor of the broadcast shape, or a tuple of index tensors.

    Raises:
      ValueError: exactly one of `x1` and `x2` is given.

    Example:

    >>> tf.keras.ops.where([True, False], [1, 2], [9, 9]).numpy()
    array([1, 9], dtype=int32)
    """,
    "nonzero": """The indices of `x`'s nonzero (or true) elements.

    Args:
      x: a tensor or array-like.

    Returns:
      A tuple of `ndim(x)` int32 tensors, the indices along each axis.

    Example:

    >>> [i.numpy().tolist() for i in tf.keras.ops.nonzero([[0, 5], [7, 0]])]
    [[0, 1], [1, 0]]
    """,
    "clip": """`x` with every value limited to the interval [x_min, x_max].

    Args:
      x: a tensor or array-like (bools are clipped as int32).
      x_min: the lower bound, a scalar or tensor broadcastable with `x`.
      x_max: the upper bound, likewise; both are cast to `x`'s dtype.

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    >>> tf.keras.ops.clip([-2, 0, 5], -1, 3).numpy()
    array([-1,  0,  3], dtype=int32)
    """,
    "flip": """`x` with the order of its elements reversed along `axis`.

    Args:
      x: a tensor or array-like.
      axis: an int or tuple of ints; None flips every axis.

    Returns:
      A tensor of `x`'s shape.
    """,
    "fliplr": _flip("1"),
    "flipud": _flip("0"),
    "roll": """`x` with its elements shifted cyclically by `shift` along `axis`.

    Args:
      x: a tensor or array-like.
      shift: an int (or tuple of ints, one per axis in `axis`); positive moves elements
        toward higher indices.
      axis: an int or tuple of ints; None rolls the flattened `x` and restores its shape.

    Returns:
      A tensor of `x`'s shape.

    Example:

    >>> tf.keras.ops.roll([1, 2, 3], 1).numpy()
    array([3, 1, 2], dtype=int32)
    """,
    "rot90": """`array` rotated by 90 degrees `k` times in the plane of `axes` (from the first
    axis toward the second).

    Args:
      array: a tensor or array-like of rank 2 or more.
      k: the number of quarter turns (negative turns the other way).
      axes: two different axes defining the plane.

    Returns:
      The rotated tensor.

    Raises:
      ValueError: `axes` is not two different axes.

    Example:

    >>> tf.keras.ops.rot90([[1, 2], [3, 4]]).numpy()
    array([[2, 4],
           [1, 3]], dtype=int32)
    """,
    "unravel_index": """Converts flat indices into per-axis indices for an array of `shape`.

    Args:
      indices: an int tensor or array-like of flat (row-major) indices.
      shape: the shape the flat indices index into.

    Returns:
      A tuple of `len(shape)` tensors, each of `indices`' shape.

    Example:

    >>> [i.numpy().tolist() for i in tf.keras.ops.unravel_index([5], (2, 3))]
    [[1], [2]]
    """,
    "meshgrid": """Coordinate grids from 1-D coordinate vectors.

    Args:
      *x: 1-D tensors or array-likes, the coordinates along each axis.
      indexing: "xy" (Cartesian: the first two outputs' axes swapped, as for images) or
        "ij" (matrix indexing: output axis i follows input i).

    Returns:
      A list of N-D tensors, one per input.

    Example:

    >>> xs, ys = tf.keras.ops.meshgrid([1, 2, 3], [4, 5])
    >>> xs.shape
    TensorShape([2, 3])
    """,
    "select": """Elementwise choice among several values by the first condition that holds.

    Args:
      condlist: a list of bool tensors (broadcastable together).
      choicelist: a list of as many tensors; where `condlist[i]` is the first true
        condition, the result takes `choicelist[i]`. Promoted to a common dtype.
      default: the value where no condition holds.

    Returns:
      A tensor of the broadcast shape.

    Raises:
      ValueError: the two lists differ in length.

    Example:

    >>> x = tf.constant([1, 5, 9])
    >>> tf.keras.ops.select([x < 3, x < 6], [x, -x], default=0).numpy()
    array([ 1, -5,  0], dtype=int32)
    """,
}

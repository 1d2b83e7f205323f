"""Docstrings of keras.ops' core functions: conversions, introspection, slicing and
scattering, control flow (core_functions.py). Attached by `ndflow.keras.docstrings.attach`;
the examples run as doctests."""

from __future__ import annotations

DOCS = {
    "cast": """`x` converted to `dtype` (floats to ints truncate toward zero; out-of-range
    values wrap or are undefined, see `saturate_cast`).

    Args:
      x: a tensor or array-like.
      dtype: the target dtype, a name such as "float16" or a `tf.DType`.

    Returns:
      A tensor of `x`'s shape in `dtype`.

    Example:

    >>> tf.keras.ops.cast([1.7, -1.7], "int32").numpy()
    array([ 1, -1], dtype=int32)
    """,
    "convert_to_tensor": """`x` as a tensor (TensorFlow's conversion: Python ints are int32,
    floats float32).

    Args:
      x: a tensor, NumPy array, list or scalar.
      dtype: optional dtype to convert (or cast) to.
      sparse: accepted for Keras' signature (dense tensors are returned).
      ragged: accepted for Keras' signature.

    Returns:
      A tensor.
    """,
    "convert_to_numpy": """`x` as a NumPy array (a tensor's value is read; in a `tf.function`
    graph, where there is none, this fails).

    Args:
      x: a tensor, variable, NumPy array or array-like.

    Returns:
      A NumPy array.

    Example:

    >>> tf.keras.ops.convert_to_numpy(tf.constant([1, 2]))
    array([1, 2], dtype=int32)
    """,
    "is_tensor": """Whether `x` is a tensor (`tf.Tensor`; NumPy arrays and lists are not).

    Args:
      x: any value.

    Returns:
      A bool.
    """,
    "shape": """The shape of `x` as a tuple: the known dimensions as ints, the ones known
    only at run time (inside a `tf.function`) as scalar int32 tensors.

    Args:
      x: a tensor, array-like, NumPy array or KerasTensor.

    Returns:
      A tuple.

    Example:

    >>> tf.keras.ops.shape(tf.zeros((2, 3)))
    (2, 3)
    """,
    "dtype": """The name of `x`'s dtype as Keras spells it, e.g. "float32".

    Args:
      x: a tensor, variable, NumPy array or array-like.

    Returns:
      A string.

    Example:

    >>> tf.keras.ops.dtype(tf.zeros(2))
    'float32'
    """,
    "size": """The number of elements of `x`.

    Args:
      x: a tensor or array-like.

    Returns:
      A scalar int32 tensor.
    """,
    "ndim": """The number of axes of `x`, a Python int.

    Args:
      x: a tensor, array-like or NumPy array.

    Returns:
      An int (None for a tensor of unknown rank).
    """,
    "stop_gradient": """`variable`'s value, with gradients blocked: differentiation treats it
    as a constant.

    Args:
      variable: a tensor, variable or array-like.

    Returns:
      A tensor equal to `variable`.
    """,
    "saturate_cast": """`x` cast to `dtype`, with values outside the target's range clamped
    to its limits first (no wrap-around).

    Args:
      x: a tensor or array-like.
      dtype: the target dtype.

    Returns:
      A tensor of `x`'s shape in `dtype`.

    Example:

    >>> tf.keras.ops.saturate_cast([-5, 300], "uint8").numpy()
    array([  0, 255], dtype=uint8)
    """,
    "unstack": """Splits `x` along `axis` into a list of tensors one rank lower.

    Args:
      x: a tensor or array-like.
      num: the size of `axis` (needed only when it is not known statically).
      axis: the axis to unstack.

    Returns:
      A list of `x.shape[axis]` tensors.
    """,
    "slice": """The block of `inputs` starting at `start_indices` with extent `shape`.

    Args:
      inputs: a tensor or array-like.
      start_indices: one start index per axis (a list or 1-D tensor).
      shape: the block's size along each axis (-1: to the end).

    Returns:
      A tensor of shape `shape`.

    Example:

    >>> tf.keras.ops.slice([[1, 2, 3], [4, 5, 6]], (0, 1), (2, 2)).numpy()
    array([[2, 3],
           [5, 6]], dtype=int32)
    """,
    "slice_update": """`inputs` with the block starting at `start_indices` replaced by
    `updates` (a new tensor; `inputs` is unchanged).

    Args:
      inputs: a tensor or array-like.
      start_indices: one start index per axis.
      updates: the new block, of a static shape, cast to `inputs`' dtype.

    Returns:
      A tensor of `inputs`' shape and dtype.

    Raises:
      ValueError: `updates` has a dimension unknown before run time.

    Example:

    >>> tf.keras.ops.slice_update(tf.zeros((2, 3)), (1, 1), tf.ones((1, 2))).numpy()
    array([[0., 0., 0.],
           [0., 1., 1.]], dtype=float32)
    """,
    "scatter": """A zero tensor of `shape` with `values` placed at `indices` (values at a
    repeated index are summed).

    Args:
      indices: an int tensor of shape (n, k), each row the index of an element (k =
        rank) or of a slice (k < rank).
      values: the n values (or slices) to place.
      shape: the result's shape.

    Returns:
      A tensor of `shape` in `values`' dtype.

    Example:

    >>> tf.keras.ops.scatter([[0], [2]], [5, 7], (4,)).numpy()
    array([5, 0, 7, 0], dtype=int32)
    """,
    "scatter_update": """`inputs` with the elements (or slices) at `indices` replaced by, or
    combined with, `updates`.

    Args:
      inputs: a tensor or array-like.
      indices: an int tensor of shape (n, k), each row an index into `inputs`.
      updates: n values (or slices), cast to `inputs`' dtype.
      reduction: None (replace), "add", "mul", "max" or "min" (combine with the
        current value).

    Returns:
      A tensor of `inputs`' shape and dtype.

    Raises:
      ValueError: an unknown `reduction`.

    Example:

    >>> tf.keras.ops.scatter_update([1, 1, 1], [[1]], [5]).numpy()
    array([1, 5, 1], dtype=int32)
    """,
    "cond": """Calls `true_fn()` if `pred` is true, else `false_fn()` (in a `tf.function`
    graph, a conditional op whose branch is chosen at run time).

    Args:
      pred: a scalar bool tensor or Python bool.
      true_fn: a callable without arguments.
      false_fn: a callable without arguments, returning the same structure and dtypes.

    Returns:
      What the chosen function returns.

    Example:

    >>> int(tf.keras.ops.cond(tf.constant(True), lambda: 1, lambda: 2))
    1
    """,
    "while_loop": """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` is true.

    Args:
      cond: a callable taking the loop variables, returning a scalar bool.
      body: a callable taking the loop variables, returning new ones of the same
        structure, shapes and dtypes.
      loop_vars: a tensor, or a tuple/list of them.
      maximum_iterations: optional cap on the number of iterations.

    Returns:
      The final loop variables (a tuple for a tuple or list, else one value).

    Example:

    >>> int(tf.keras.ops.while_loop(lambda i: i < 10, lambda i: i * 2, 1))
    16
    """,
    "fori_loop": """Runs `val = body_fun(i, val)` for `i` from `lower` to `upper - 1`.

    Args:
      lower: the first index (an int or scalar tensor).
      upper: the end, excluded.
      body_fun: a callable `(i, val) -> val` keeping `val`'s structure and dtypes.
      init_val: the initial value.

    Returns:
      The final value.

    Example:

    >>> int(tf.keras.ops.fori_loop(0, 4, lambda i, acc: acc + i, 0))
    6
    """,
    "switch": """Calls `branches[index](*operands)` (the index is clipped into range).

    Args:
      index: an int or scalar int tensor; below 0 picks the first branch, past the end
        the last.
      branches: a list of callables taking `*operands`, with matching results.
      *operands: the arguments passed to the chosen branch.

    Returns:
      What the chosen branch returns.

    Example:

    >>> int(tf.keras.ops.switch(1, [lambda x: x + 1, lambda x: x * 10], 3))
    30
    """,
    "map": """Applies `f` to each slice of `xs` along its first axis and stacks the
    results.

    Args:
      f: a callable taking one slice (or a nest of slices, for nested `xs`).
      xs: a tensor or nest of tensors sharing their first dimension.

    Returns:
      The stacked results, of `f`'s output structure.

    Example:

    >>> tf.keras.ops.map(lambda v: v * 2, tf.constant([1, 2, 3])).numpy()
    array([2, 4, 6], dtype=int32)
    """,
    "vectorized_map": """Applies `function` to each slice of `elements` along its first axis,
    computing all slices at once where the ops allow (as `tf.vectorized_map`).

    Args:
      function: a callable taking one slice (or a nest of slices).
      elements: a tensor or nest of tensors sharing their first dimension.

    Returns:
      The stacked results.
    """,
    "custom_gradient": """Decorator for a function with its own gradient.

    The decorated `f(*args)` returns `(result, grad_fn)`, where `grad_fn(upstream)` returns
    the gradients with respect to `args` (one per argument); callers see only `result`.

    Args:
      f: the function to decorate.

    Returns:
      The decorated function.
    """,
    "scan": """Loops `f` over the leading axis of `xs`, carrying a state: for each slice x,
    `carry, y = f(carry, x)`; the ys are stacked (as `jax.lax.scan`).

    Args:
      f: a callable `(carry, x) -> (new_carry, y)`; the carry keeps its structure and
        dtypes.
      init: the initial carry (a tensor or nest).
      xs: a tensor or nest of tensors to scan over their first axis; None to run
        `length` steps with x None.
      length: the number of steps when `xs` is None.
      reverse: whether to scan from the last slice to the first (the ys keep the
        slices' order).
      unroll: accepted for Keras' signature.

    Returns:
      A tuple (final carry, stacked ys).

    Raises:
      TypeError: `f` is not callable.
      ValueError: neither `xs` nor `length` given.

    Example:

    >>> carry, ys = tf.keras.ops.scan(lambda c, x: (c + x, c * x), 0, tf.constant([1, 2, 3]))
    >>> int(carry), ys.numpy().tolist()
    (6, [0, 2, 9])
    """,
    "associative_scan": """The inclusive scan of an associative function along `axis`: the
    i-th output combines elements 0..i (i..n-1 with `reverse`), e.g. a cumulative sum for
    addition (as `jax.lax.associative_scan`).

    Args:
      f: an associative callable `(a, b) -> c` on slices (or nests of slices).
      elems: a tensor or nest of tensors of one length along `axis` (static).
      reverse: whether to scan from the end.
      axis: the axis to scan.

    Returns:
      A tensor (or nest) of `elems`' shape.

    Raises:
      TypeError: `f` is not callable.
      ValueError: the length along `axis` is not known statically.

    Example:

    >>> tf.keras.ops.associative_scan(lambda a, b: a + b, tf.constant([1, 2, 3])).numpy()
    array([1, 3, 6], dtype=int32)
    """,
}

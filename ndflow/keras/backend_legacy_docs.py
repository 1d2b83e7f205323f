"""Docstrings of `tf.keras.backend`'s Keras 1/2 tensor functions (backend_legacy.py).
Attached by `ndflow.keras.docstrings.attach`; the examples run as doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import sections


def reduce_doc(what: str, extra: str = "", example: str = "") -> str:
    doc = f"""The {what} of `x`'s elements along `axis`.

    Args:
      x: a tensor or array-like.{extra}
      axis: an int or list of ints, the axes to reduce (negative ones count from the end);
        None reduces every axis.
      keepdims: whether the reduced axes stay, with size 1.

    Returns:
      A tensor of `x`'s shape without (or with size 1 on) the reduced axes.
    """
    return sections(doc, example=example)


def _arg(which: str) -> str:
    return f"""The index of the {which} value along `axis` (the first one on ties).

    Args:
      x: a tensor or array-like.
      axis: the axis to search (default the last).

    Returns:
      An int64 tensor of `x`'s shape without `axis`.
    """


def _cumulative(what: str, example: str) -> str:
    return f"""The cumulative {what} of `x` along `axis`.

    Args:
      x: a tensor or array-like.
      axis: the axis to accumulate along (default 0, the first).

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    {example}
    """


def _update(what: str, arg: str) -> str:
    return f"""{what}

    Args:
      x: a `tf.Variable`.
      {arg}

    Returns:
      The variable, updated (what its `assign*` method returns).
    """


def _filled(value: str) -> str:
    return f"""A new `tf.Variable` of shape `shape` filled with {value}.

    Args:
      shape: a tuple or list of ints.
      dtype: the variable's dtype (default `keras.backend.floatx()`).
      name: optional name for the variable.

    Returns:
      A `tf.Variable`.
    """


def _filled_like(value: str) -> str:
    return f"""A tensor of `x`'s shape filled with {value}.

    Args:
      x: a tensor or array-like.
      dtype: the result's dtype (default `x`'s).
      name: optional name for the operation.

    Returns:
      A tensor (not a variable, unlike `zeros` and `ones`).
    """


_RANDOM_TAIL = """dtype: the result's dtype (default `keras.backend.floatx()`).
      seed: an int for a reproducible draw; None draws a fresh seed from NumPy's global
        generator on each call.

    Returns:
      A tensor of shape `shape`.
    """

DOCS = {
    "sum": reduce_doc("sum", example=">>> tf.keras.backend.sum([[1, 2], [3, 4]], axis=1).numpy()\n"
                                  "    array([3, 7], dtype=int32)"),
    "prod": reduce_doc("product"),
    "max": reduce_doc("maximum"),
    "min": reduce_doc("minimum"),
    "std": reduce_doc("standard deviation (population, no Bessel correction)",
                   " Bools count as floatx 0/1."),
    "var": reduce_doc("variance (population, no Bessel correction)", " Bools count as floatx 0/1."),
    "all": reduce_doc("logical AND", " Cast to bool first (nonzero is True); the result is bool."),
    "any": reduce_doc("logical OR", " Cast to bool first (nonzero is True); the result is bool.",
                   ">>> tf.keras.backend.any([[0, 0], [0, 3]], axis=1).numpy()\n"
                   "    array([False,  True])"),
    "argmax": _arg("largest"),
    "argmin": _arg("smallest"),
    "cumsum": _cumulative("sum", ">>> tf.keras.backend.cumsum([1, 2, 3]).numpy()\n"
                                 "    array([1, 3, 6], dtype=int32)"),
    "cumprod": _cumulative("product", ">>> tf.keras.backend.cumprod([1, 2, 3]).numpy()\n"
                                      "    array([1, 2, 6], dtype=int32)"),
    "pow": """Elementwise `x ** a`.

    Args:
      x: a tensor.
      a: the exponent: a scalar or a tensor broadcastable with `x`, of `x`'s dtype.

    Returns:
      A tensor of the broadcast shape.
    """,
    "l2_normalize": """`x` divided by its L2 norm along `axis` (`x / sqrt(max(sum(x**2), 1e-12))`).

    Args:
      x: a float tensor or array-like.
      axis: the axis or axes the norm is taken over; None normalizes by the norm of all of
        `x`.

    Returns:
      A tensor of `x`'s shape and dtype.
    """,
    "in_top_k": """Whether each target class is among the `k` largest predictions of its row.

    Args:
      predictions: a float tensor of shape (batch, classes).
      targets: an int tensor of shape (batch,), class indices.
      k: the number of top predictions to look at.

    Returns:
      A bool tensor of shape (batch,).
    """,
    "shape": """The shape of `x` as a 1-D int32 tensor (known at run time, unlike
    `x.shape`).

    Args:
      x: a tensor or variable.

    Returns:
      An int32 tensor of `ndim(x)` elements.
    """,
    "ndim": """The number of axes of `x`, a Python int (None when a tensor's rank is unknown).

    Args:
      x: a tensor, variable or NumPy array.

    Returns:
      An int.
    """,
    "dtype": """The name of `x`'s dtype, e.g. "float32".

    Args:
      x: a tensor, variable or NumPy array.

    Returns:
      A string.
    """,
    "reshape": """`x` with a new shape holding the same elements in the same order.

    Args:
      x: a tensor or array-like.
      shape: the new shape (a list, tuple or 1-D int tensor); one entry may be -1 (inferred).

    Returns:
      A tensor of shape `shape`.

    Raises:
      InvalidArgumentError: the element counts differ.
    """,
    "flatten": """`x` as a 1-D tensor of all its elements (batch axis included).

    Args:
      x: a tensor or array-like.

    Returns:
      A 1-D tensor.
    """,
    "expand_dims": """`x` with a new axis of size 1 inserted at `axis`.

    Args:
      x: a tensor or array-like.
      axis: where the new axis goes (default -1, last).

    Returns:
      A tensor of rank `ndim(x) + 1`.
    """,
    "squeeze": """`x` without its axis `axis`, which must have size 1.

    Args:
      x: a tensor or array-like.
      axis: an int, the axis to remove.

    Returns:
      A tensor of rank `ndim(x) - 1`.

    Raises:
      InvalidArgumentError: that axis does not have size 1.
    """,
    "stack": """The tensors of the list `x` stacked along a new axis `axis`.

    Args:
      x: a list of tensors of the same shape and dtype.
      axis: where the new axis goes (default 0).

    Returns:
      A tensor one rank higher than each input.
    """,
    "permute_dimensions": """`x` with its axes reordered as `pattern` says.

    Args:
      x: a tensor or array-like.
      pattern: a tuple or list with a permutation of `range(ndim(x))`, e.g. (0, 2, 1).

    Returns:
      A tensor whose axis i is `x`'s axis `pattern[i]`.
    """,
    "transpose": """`x` with the order of all its axes reversed (a matrix transpose for 2-D).

    Args:
      x: a tensor or array-like.

    Returns:
      A tensor of the reversed shape.
    """,
    "reverse": """`x` with the order of its elements reversed along `axes`.

    Args:
      x: a tensor or array-like.
      axes: an int or a list of ints.

    Returns:
      A tensor of `x`'s shape.
    """,
    "tile": """`x` repeated `n` times along each axis.

    Args:
      x: a tensor or array-like.
      n: an int (for a 1-D `x`) or a list with one count per axis of `x`.

    Returns:
      A tensor of shape `x.shape * n`.
    """,
    "repeat_elements": """Each slice of `x` along `axis` repeated `rep` times in place
    (`[a, b]` -> `[a, a, b, b]`; compare `tile`, which repeats the whole).

    Args:
      x: a tensor or array-like.
      rep: an int, the number of repeats.
      axis: the axis to repeat along.

    Returns:
      A tensor with `axis` `rep` times longer.
    """,
    "gather": """The slices of `reference` along its first axis picked by `indices`.

    Args:
      reference: a tensor.
      indices: an int tensor of indices into `reference`'s first axis.

    Returns:
      A tensor of shape `indices.shape + reference.shape[1:]`.
    """,
    "one_hot": """One-hot encoding of integer class indices, on a new last axis.

    Args:
      indices: an int tensor of shape (batch, ...).
      num_classes: the number of classes (the new axis' size).

    Returns:
      A float32 tensor of shape `indices.shape + (num_classes,)`.

    Example:

    >>> tf.keras.backend.one_hot([0, 2], 3).numpy()
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """,
    "constant": """A constant tensor of `value`.

    Args:
      value: a Python value, list or NumPy array.
      dtype: the tensor's dtype (default `keras.backend.floatx()`, even for ints).
      shape: optional shape; a scalar `value` is broadcast to it.
      name: optional name for the operation.

    Returns:
      A tensor.
    """,
    "arange": """A 1-D tensor of evenly spaced values from `start` up to (not including) `stop`.

    With one argument, `arange(n)` counts from 0 to n - 1 (a negative `n` gives an empty
    tensor).

    Args:
      start: the first value (or the stop, when `stop` is None).
      stop: the end, excluded.
      step: the spacing.
      dtype: the result's dtype (default int32).

    Returns:
      A 1-D tensor.

    Example:

    >>> tf.keras.backend.arange(1, 7, 2).numpy()
    array([1, 3, 5], dtype=int32)
    """,
    "zeros": _filled("zeros"),
    "ones": _filled("ones"),
    "eye": """A new `tf.Variable` holding a `size` x `size` identity matrix.

    Args:
      size: an int, the number of rows and columns.
      dtype: the variable's dtype (default `keras.backend.floatx()`).
      name: optional name for the variable.

    Returns:
      A `tf.Variable`.
    """,
    "zeros_like": _filled_like("zeros"),
    "ones_like": _filled_like("ones"),
    "cast": """`x` converted to `dtype` (floats to ints truncate toward zero).

    Args:
      x: a tensor, variable or array-like.
      dtype: the target dtype (a name such as "float16" or a `tf.DType`).

    Returns:
      A tensor of `x`'s shape in `dtype`.
    """,
    "to_dense": """A `tf.SparseTensor` as a dense tensor; anything else unchanged.

    Args:
      tensor: a tensor or `tf.SparseTensor`.

    Returns:
      A dense tensor (zeros where the sparse one has no value).
    """,
    "is_sparse": """Whether `tensor` is a `tf.SparseTensor`.

    Args:
      tensor: any value.

    Returns:
      A bool.
    """,
    "stop_gradient": """`variables` with gradients blocked: they are treated as constants by
    `tf.GradientTape`.

    Args:
      variables: a tensor or a list/tuple of tensors.

    Returns:
      The same value(s) (a list for a list or tuple).
    """,
    "eval": """The value of `x` as a NumPy array (sparse tensors densified).

    Args:
      x: a tensor, variable or `tf.SparseTensor`.

    Returns:
      A NumPy array.
    """,
    "batch_get_value": """The values of several tensors or variables as NumPy arrays.

    Args:
      tensors: a list of tensors or variables.

    Returns:
      A list of NumPy arrays, in order.
    """,
    "batch_set_value": """Assigns new values to several variables.

    Args:
      tuples: a list of `(variable, value)` pairs; each value (array-like of the
        variable's shape) is converted to the variable's dtype.

    Returns:
      None.
    """,
    "update": _update("Assigns `new_x` to the variable `x`.",
                      "new_x: the new value, of `x`'s shape."),
    "update_add": _update("Adds `increment` to the variable `x` in place.",
                          "increment: a value of `x`'s shape."),
    "update_sub": _update("Subtracts `decrement` from the variable `x` in place.",
                          "decrement: a value of `x`'s shape."),
    "name_scope": """A context manager that prefixes the names of the ops made inside it.

    Args:
      name: the scope's name.

    Returns:
      The `tf.name_scope` context manager.
    """,
    "backend": """The name of the backend: always "tensorflow" (ndflow is TensorFlow's API).

    Returns:
      The string "tensorflow".
    """,
    "is_float_dtype": """Whether `dtype` is a floating-point dtype.

    Args:
      dtype: a dtype name or `tf.DType`.

    Returns:
      A bool.
    """,
    "is_int_dtype": """Whether `dtype` is an integer dtype (signed or unsigned).

    Args:
      dtype: a dtype name or `tf.DType`.

    Returns:
      A bool.
    """,
    "random_normal": """Samples from a normal distribution.

    Args:
      shape: the result's shape.
      mean: the distribution's mean.
      stddev: its standard deviation.
      """ + _RANDOM_TAIL,
    "random_uniform": """Samples from a uniform distribution on [minval, maxval).

    Args:
      shape: the result's shape.
      minval: the lower bound (included).
      maxval: the upper bound (excluded).
      """ + _RANDOM_TAIL,
    "truncated_normal": """Samples from a normal distribution, redrawing any sample further
    than two standard deviations from the mean.

    Args:
      shape: the result's shape.
      mean: the distribution's mean.
      stddev: its standard deviation (before truncation).
      """ + _RANDOM_TAIL,
    "random_bernoulli": """Samples of 1 (with probability `p`) or 0.

    Args:
      shape: the result's shape.
      p: the probability of a 1.
      """ + _RANDOM_TAIL,
    "random_normal_variable": """A new `tf.Variable` initialized with normal samples.

    Args:
      shape: the variable's shape.
      mean: the distribution's mean.
      scale: its standard deviation.
      dtype: the variable's dtype (default `keras.backend.floatx()`).
      name: optional name for the variable.
      seed: an int for a reproducible draw (None: a fresh one).

    Returns:
      A `tf.Variable`.
    """,
    "random_uniform_variable": """A new `tf.Variable` initialized with uniform samples.

    Args:
      shape: the variable's shape.
      low: the lower bound (included).
      high: the upper bound (excluded).
      dtype: the variable's dtype (default `keras.backend.floatx()`).
      name: optional name for the variable.
      seed: an int for a reproducible draw (None: a fresh one).

    Returns:
      A `tf.Variable`.
    """,
    "cast_to_floatx": """`x` converted to `keras.backend.floatx()`.

    Args:
      x: a tensor, variable or `tf.SparseTensor` (cast), or anything NumPy can convert.

    Returns:
      A tensor for tensor inputs, else a NumPy array of dtype floatx.
    """,
    "variable": """A new `tf.Variable` holding `value` (a `tf.SparseTensor` is returned as it
    is).

    Args:
      value: the initial value (array-like or tensor).
      dtype: the variable's dtype (default `keras.backend.floatx()`).
      name: optional name.
      constraint: optional projection applied after optimizer updates.

    Returns:
      A `tf.Variable`.
    """,
    "moving_average_update": """Updates the variable `x` to a moving average:
    `x = x * momentum + value * (1 - momentum)`.

    Args:
      x: a `tf.Variable`.
      value: the new observation, of `x`'s shape.
      momentum: the decay, in [0, 1] (closer to 1: slower to change).

    Returns:
      The updated variable.
    """,
    "get_uid": """A counter per prefix: 1 on the first call with `prefix`, then 2, 3, ... (Keras
    uses it for unique layer names).

    Args:
      prefix: the counter's name.

    Returns:
      An int.
    """,
}

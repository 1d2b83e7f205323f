"""The docstrings of functional_ops.py's public functions (attached at its end; see
core/doc_tables.py); foldl, foldr and scan from one template."""

from __future__ import annotations

DOCS = {
    "map_fn": """Applies `fn` to each element of `elems` and stacks the results.

    The elements are the slices of `elems` along its first dimension.

    Args:
      fn: a function of one element (a slice of elems, or a nest of slices).
      elems: a tensor or nest of tensors with a common first dimension.
      dtype: deprecated: the output dtype(s) when they differ from elems'; use
        fn_output_signature.
      parallel_iterations: accepted for compatibility.
      back_prop: whether gradients flow through the loop.
      swap_memory: accepted for compatibility.
      infer_shape: whether to check that all results have one shape.
      name: optional name scope.
      fn_output_signature: the dtype, TensorSpec or nest of them that fn returns, when it
        differs from elems'.

    Returns:
      The stacked results: a tensor (or nest) whose first dimension is elems'.

    Example:
      >>> tf.map_fn(lambda x: x * 2, tf.constant([1, 2, 3])).numpy()
      array([2, 4, 6], dtype=int32)
    """,
    **{name: f"""{title}

    Args:
      fn: a function `(accumulator, element) -> accumulator`.
      elems: a tensor (or nest of tensors) unpacked along its first dimension.
      initializer: the first accumulator; None uses the first element (then `elems` must be
        non-empty).
      parallel_iterations: accepted for compatibility.
      back_prop: whether gradients flow through the loop.
      swap_memory: accepted for compatibility.{args}
      name: optional name scope.

    Returns:
      {returns}

    Example:
      >>> {example}
    """ for name, title, args, returns, example in (
        ("foldl", "Reduces `elems` left to right with `fn`, starting from `initializer`.", "",
         "The final accumulator.", "int(tf.foldl(lambda a, x: a + x, tf.constant([1, 2, 3])))"
         "\n      6"),
        ("foldr", "Reduces `elems` right to left with `fn`, starting from `initializer`.", "",
         "The final accumulator.",
         "int(tf.foldr(lambda a, x: a * 10 + x, tf.constant([1, 2, 3])))\n      321"),
        ("scan", "The successive accumulators of `a = fn(a, x)` over the elements of `elems`.",
         "\n      infer_shape: whether to check that all accumulators have one shape."
         "\n      reverse: whether to scan from the last element.",
         "The stacked accumulators: a tensor (or nest) with one entry per element.",
         "tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3])).numpy()\n"
         "      array([1, 3, 6], dtype=int32)"))},
    "case": """Runs the function of the first predicate that is true (else `default`).

    Args:
      pred_fn_pairs: a list of (boolean scalar, callable) pairs.
      default: a callable run when no predicate holds (None: the last pair's function).
      exclusive: if True, check at run time that at most one predicate is true.
      strict: whether to keep single-element lists as lists.
      name: optional name scope.

    Returns:
      What the chosen function returns.

    Raises:
      InvalidArgumentError: with `exclusive`, if more than one predicate is true (checked when
        a graph runs; not when executing eagerly, as in TensorFlow).

    Example:
      >>> x = tf.constant(3)
      >>> pairs = [(x < 0, lambda: tf.constant(-1)), (x > 0, lambda: tf.constant(1))]
      >>> int(tf.case(pairs, default=lambda: tf.constant(0)))
      1
    """,
    "case_v1": """Runs the function of the first predicate that is true (TF1 form, dicts allowed).

    A dict of pairs is taken in insertion order.

    Args:
      pred_fn_pairs: a list or dict of (boolean scalar, callable) pairs.
      default: a callable run when no predicate holds.
      exclusive: if True, check that at most one predicate is true.
      strict: whether to keep single-element lists as lists.
      name: optional name scope.

    Returns:
      What the chosen function returns.

    Example:
      >>> x = tf.constant(-2)
      >>> int(tf.compat.v1.case([(x < 0, lambda: tf.constant(-1))], default=lambda: tf.constant(0)))
      -1
    """,
    "tuple_v2": """Groups tensors: the outputs are available only once all the inputs are computed.

    Args:
      tensors: a list of tensors (None entries pass through).
      control_inputs: optional extra ops that must also run first.
      name: optional name scope.

    Returns:
      In a graph, identities of `tensors` depending on all of them; eagerly, `tensors` as a
      list.

    Example:
      >>> [int(t) for t in tf.tuple([tf.constant(1), tf.constant(2)])]
      [1, 2]
    """,
    "vectorized_map": """Applies `fn` to each element of `elems` and stacks the results.

    TensorFlow vectorizes `fn` with pfor; ndflow runs it as `tf.map_fn`, with the same
    results.

    Args:
      fn: a function of one element.
      elems: a tensor or nest of tensors with a common first dimension.
      fallback_to_while_loop: accepted for compatibility.
      warn: accepted for compatibility.

    Returns:
      The stacked results.

    Example:
      >>> tf.vectorized_map(lambda r: tf.reduce_sum(r), tf.constant([[1, 2], [3, 4]])).numpy()
      array([3, 7], dtype=int32)
    """,
}

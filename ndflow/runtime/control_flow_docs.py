"""The docstrings of control_flow.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "cond": """Returns `true_fn()` if `pred` is true, else `false_fn()`.

    Executing eagerly only the chosen function runs; in a graph (or tf.function) both are
    traced into a conditional op, so they must return the same structure of tensors with
    compatible dtypes and shapes.

    Args:
      pred: a scalar boolean tensor (or Python bool).
      true_fn: a callable run when pred is true.
      false_fn: a callable run when pred is false.
      name: optional name scope.

    Returns:
      What the chosen function returns.

    Raises:
      TypeError or ValueError: in a graph, if the branches return different structures or
        dtypes.

    Example:
      >>> x = tf.constant(3)
      >>> int(tf.cond(x > 0, lambda: x * 2, lambda: -x))
      6
    """,
    "switch_case": """Runs the branch function selected by an integer index.

    Args:
      branch_index: a scalar int32 tensor.
      branch_fns: a list of callables, a dict from int to callable, or a list of (int,
        callable) pairs.
      default: the callable run for an index with no branch (None: the last branch).
      name: optional name scope.

    Returns:
      What the chosen branch returns (all branches must return the same structure).

    Example:
      >>> fns = [lambda: tf.constant(10), lambda: tf.constant(20)]
      >>> int(tf.switch_case(tf.constant(1), fns))
      20
    """,
    "while_loop": """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` is true.

    In a graph (or tf.function) this builds a loop op; each iteration's loop variables must
    keep their structure and dtypes (and shapes, unless shape_invariants relax them).

    Args:
      cond: a callable of the loop variables returning a scalar boolean.
      body: a callable of the loop variables returning their new values (same structure).
      loop_vars: a tensor, or a list/tuple/nest of tensors, the initial values.
      shape_invariants: optional TensorShapes (a nest like loop_vars) the variables may change
        within.
      parallel_iterations: accepted for compatibility.
      back_prop: whether gradients flow through the loop.
      swap_memory: accepted for compatibility.
      maximum_iterations: optional bound on the number of iterations.
      name: optional name scope.

    Returns:
      The loop variables after the last iteration (same structure as loop_vars).

    Raises:
      ValueError: if the body changes the structure, dtypes or (without invariants) shapes.

    Example:
      >>> [int(v) for v in tf.while_loop(lambda i: i < 10, lambda i: i * 2, [tf.constant(1)])]
      [16]
    """,
}

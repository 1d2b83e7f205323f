"""`tf.debugging.Assert`: the stateful Assert op (fails the run with `assertion failed: [...]`
when its condition is false) and, eagerly, TensorFlow's immediate check."""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def _assert_shape(ctx):
    if ctx.shapes[0].rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {ctx.shapes[0].rank}")
    return []


AssertOp = op_def("Assert", inputs=["condition: bool", "data: T"], outputs=[],
                attrs=["T: list(type)", "summarize: int = 3"], shape=_assert_shape,
                not_differentiable=True, stateful=True)


def _eager_summary(item, summarize: int) -> str:
    """TF's eager Assert message of one data item: a scalar as its NumPy value (strings as
    bytes), anything else as its first `summarize` elements joined by ', '."""
    if isinstance(item, str):
        return str(item.encode())
    value = np.asarray(item.numpy() if isinstance(item, Tensor) else item)
    if value.ndim == 0:
        return str(value.item() if value.dtype != object else value.item())
    return ", ".join(str(v) for v in value.reshape(-1)[:summarize])


@tf_export("debugging.Assert", "Assert", v1=["Assert", "debugging.Assert"])
def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's name
    """Asserts that `condition` holds; otherwise raises an error listing `data`.

    Executing eagerly the check happens at once; in a graph it happens when the returned op
    runs (make other ops depend on it with `tf.control_dependencies`).

    Args:
      condition: a scalar boolean tensor (or Python bool).
      data: a list of tensors (or values) printed in the error message.
      summarize: how many entries of each tensor to print.
      name: optional name for the operation.

    Returns:
      None when executing eagerly; in a graph, the Assert op.

    Raises:
      InvalidArgumentError: if the condition is false (eagerly, or when the op runs).

    Example:
      >>> tf.debugging.Assert(tf.constant(True), ["never printed"])
    """
    if context.executing_eagerly():
        cond = convert_to_tensor(condition, dtypes.bool)
        if not bool(np.all(cond.numpy())):
            limit = 3 if summarize is None else int(summarize)
            data_str = "\n".join(_eager_summary(d, limit) for d in data)
            raise InvalidArgumentError(
                None, None, f"Expected '{cond!s}' to be true. Summarized data: {data_str}")
        return None
    attrs = {"summarize": 3 if summarize is None else int(summarize)}
    with name_scope(name, "Assert"):  # TF's node: <scope>/Assert/Assert
        return apply_op(AssertOp, [condition, list(data)], attrs, name="Assert")


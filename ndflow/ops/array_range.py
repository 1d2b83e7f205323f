"""Range (`tf.range`): [start, limit) in steps of delta, with TensorFlow's size rule.

Low in the array family because transposes of unknown rank and gradients build ranges.
"""

from __future__ import annotations

import builtins
import contextlib

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import static_value
from ndflow.ops.cast import cast
from ndflow.ops.op_def import op_def


def _scalar_check(s: TensorShape):
    if s.rank is not None and s.rank != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {s.rank}")


_INT64_MAX = 2**63 - 1


def range_size(start, limit, delta, integer: bool) -> int:
    """TF's Range size rule, with its error messages."""
    if delta == 0:
        raise ValueError(f"Requires delta != 0: {delta:g}")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start:g}/{limit:g}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start:g}/{limit:g}")
    if integer:
        size = (abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta))
    else:
        size = np.ceil(abs((limit - start) / delta))
    if size > _INT64_MAX:
        raise ValueError(f"Requires ((limit - start) / delta) <= {_INT64_MAX}")
    return int(size)


def _range_shape(ctx):
    for s in ctx.shapes:
        _scalar_check(s)
    vals = [static_value(ctx, i) for i in builtins.range(3)]
    if any(v is None for v in vals):
        return [TensorShape([None])]
    a, b, d = (np.asarray(v).item() for v in vals)
    if d == 0:
        raise ValueError("Requires delta != 0")
    return [TensorShape([range_size(a, b, d, ctx.dtypes[0].is_integer)])]


Range = op_def("Range", inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"],
               outputs=["output: Tidx"],
               attrs=["Tidx: {bfloat16, half, float, double, int8, int16, int32, int64} "
                      "= DT_INT32"], shape=_range_shape, not_differentiable=True)

_RANGE_TYPES = [dtypes.int32, dtypes.int64, dtypes.float16, dtypes.bfloat16, dtypes.float32,
                dtypes.float64]


@tf_export("range")
def range(start, limit=None, delta=1, dtype=None, name: str = "range") -> Tensor:  # noqa: A001
    """`tf.range`: [start, limit) in steps of `delta`; dtype inferred as TF does."""
    if limit is None:
        start, limit = 0, start
    graph = None if context.executing_eagerly() else context.get_default_graph()
    scope = graph.unique_name(name, mark_as_used=False) if graph else None
    args = [start, limit, delta]
    with graph.name_scope(scope + "/") if graph else contextlib.nullcontext():
        args = [a if isinstance(a, Tensor) else convert_to_tensor(a, dtype=dtype, name=n)
                for a, n in zip(args, ("start", "limit", "delta"))]
        want = dtypes.as_dtype(dtype) if dtype is not None else \
            max((a.dtype for a in args), key=_RANGE_TYPES.index)
        args = [cast(a, want) for a in args]
    return apply_op(Range, args, name=name).outputs[0]

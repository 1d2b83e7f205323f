"""Custom ops without touching ndflow's source: `from ndflow import custom_op`.

    import torch
    import ndflow as tf
    from ndflow import custom_op

    @custom_op.register_op('''
        REGISTER_OP("ZeroOut")
            .Attr("T: {int32, float}")
            .Input("to_zero: T")
            .Output("zeroed: T")
            .SetShapeFn(::tensorflow::shape_inference::UnchangedShape);''')
    def zero_out(to_zero):                     # the kernel: ATen tensors in and out
        out = torch.zeros_like(to_zero)
        out.view(-1)[:1] = to_zero.view(-1)[:1]
        return out

    zero_out(tf.constant([[1, 2], [3, 4]]))     # the op: eager, tf.function, Sessions

`register_op(spec, kernel=None, *, shape_fn=..., gradient=None, not_differentiable=False)`:

- `spec`: TensorFlow's `REGISTER_OP("Name").Attr(...).Input(...).Output(...)` chain as text
  (`.SetShapeFn(...)` naming UnchangedShape/ScalarShape/UnknownShape, `.SetIsStateful()`,
  `.SetIsCommutative()`, `.Doc(...)` are understood), so a TensorFlow op's declaration is
  copied as is.
- `kernel`: `fn(*inputs, **attrs) -> tensor | tuple` on ATen tensors (a list input arrives
  as a list; it receives the attrs its signature names, type attrs as torch dtypes), or a
  dict of them per device type (`{"CPU": fn, "GPU": fn_cuda}`). Used as a decorator when
  omitted. Outputs are checked against the declaration on every call (InvalidArgumentError
  naming the op, the output, the expected and the actual dtype and shape).
- `shape_fn(ctx) -> [TensorShape per output]` (`ctx.shapes`, `ctx.dtypes`, `ctx.attrs`,
  `ctx.value(i)`): overrides the spec's; without either, output shapes are unknown.
- `gradient(op, *output_grads) -> [grad per input]` built from ndflow ops (TensorFlow's
  `@tf.RegisterGradient("Name")` works as well).

It returns the op function: inputs positional, attrs that are not inferred from the inputs as
keywords, `name=`; `.op_def` is the registered OpDef. The op then runs eagerly, in
`tf.function` and in Sessions, is written to and read from GraphDefs by its name, shows in
the profiler like any op, and meets the mixed-precision rewrite as TensorFlow's custom ops
do: unlisted (kept in float32, casts at its boundaries) unless
`TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_ADD=Name` (or INFERLIST / CLEARLIST /
DENYLIST, `_ADD` / `_REMOVE`) puts it on a list — the type attrs its spec allows must then
include half / bfloat16 for it to be converted.

Why here and not at `tf.experimental.register_op`: ndflow's `tf.*` namespaces hold exactly
TensorFlow 2.21's names (tests/test_api_namespaces.py), and TensorFlow has no Python op
registration; this module is ndflow's own API. `tf.load_op_library` (TensorFlow's name) loads
compiled libraries: see ndflow/kernels/op_library.py and examples/custom_op/.
"""

from __future__ import annotations

from ndflow.kernels.custom_op import register_op
from ndflow.kernels.op_library import load_op_library
from ndflow.ops.op_def import InferenceContext
from ndflow.ops.register_op_text import (
    OpSpec,
    parse_register_ops,
    scalar_shape,
    snake_case,
    unchanged_shape,
    unknown_shape,
)

__all__ = ["InferenceContext", "OpSpec", "load_op_library", "parse_register_ops",
           "register_op", "scalar_shape", "snake_case", "unchanged_shape", "unknown_shape"]

"""Shape, ShapeN, Size and Rank of tensors whose shapes a cluster's signature fixes, as
Consts in the specialized cluster (`executable.specialize_graph`): XLA sees only static shapes
(tf2xla lowers these ops to constants), so they cost nothing at run time and the Reshapes and
Tiles reading them get static operands. MNIST's training step lost its ShapeN step (38 us on a
2-core Xeon: a Python call right after a convolution pays for cold caches).

tf2xla's other lowerings were measured and are not made here (the same step): BiasAddGrad as a
Sum fused with the ReluGrad producing its input took 290 us against the two library calls'
210 (a column sum over 3136 rows chunked over its 64 columns), and L2Loss of the 3136x512
weight as `Sum(x * x) * 0.5` 480 us against ATen's `dot`, 260 (both read the weight from
memory at the same rate; the dot needs no second kernel)."""

from __future__ import annotations

import numpy as np

from ndflow.core.shapes import TensorShape
from ndflow.ops.constant_op import Const

_SHAPE_OPS = ("Shape", "ShapeN", "Size", "Rank")


def as_consts(g, op, shapes: dict, live: set):
    """Consts of `g` standing for the outputs of shape op `op` (a Const keeps `op`'s name when
    it is the only one), or None when `op` is copied as it is: not a shape op, a shape not
    fixed, or an output the cluster returns (it stays a computed tensor, so that no caller
    ever writes into a constant the executable keeps). `shapes`: the specialized shape of
    each tensor of `op`'s graph."""
    if op.type not in _SHAPE_OPS or any(t in live for t in op.outputs):
        return None
    in_shapes = [shapes.get(t, t.shape) for t in op.inputs]
    if not all(s.rank is not None for s in in_shapes):
        return None
    if op.type != "Rank" and not all(s.is_fully_defined() for s in in_shapes):
        return None
    out = []
    for i, (t, s) in enumerate(zip(op.outputs, in_shapes)):
        if op.type in ("Shape", "ShapeN"):
            value = s.as_list()
        else:
            value = s.rank if op.type == "Rank" else s.num_elements()
        name = op.name if len(op.outputs) == 1 else _fresh(g, f"{op.name}/shape_{i}")
        out.append(_const(g, np.array(value, dtype=t.dtype.np_dtype), t.dtype, name,
                          op.device))
    return out


def _const(g, value, dtype, name: str, device):
    return g.create_op(Const, [], {"value": value, "dtype": dtype},
                       [(dtype, TensorShape(value.shape))], name, [], device).outputs[0]


def _fresh(g, base: str) -> str:
    """A node name based on `base` that no op of `g` has nor will get (the specialized graph
    reserves every name of the cluster's graph up front)."""
    while True:
        name = g.unique_name(base)
        try:
            g.get_operation_by_name(name)
        except KeyError:
            return name

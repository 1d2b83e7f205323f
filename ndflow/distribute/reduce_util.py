"""`tf.distribute.ReduceOp`: how values from the replicas combine (SUM or MEAN)."""

from __future__ import annotations

import enum

from ndflow.core.api_export import tf_export
from ndflow.ops.variable_enums import VariableAggregation, VariableAggregationV2


@tf_export("distribute.ReduceOp")
class ReduceOp(enum.Enum):
    """SUM adds the replicas' values; MEAN divides that sum by the number of replicas."""

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation) -> ReduceOp:
        name = getattr(aggregation, "name", None)
        if name in ("SUM", "MEAN"):
            return ReduceOp[name]
        raise ValueError(f"Could not convert from `tf.VariableAggregation` {aggregation} to "
                         "`tf.distribute.ReduceOp` type")


def as_reduce_op(reduce_op) -> ReduceOp:
    """Accepts a ReduceOp, its name ("SUM", "MEAN") or a SUM/MEAN VariableAggregation."""
    if isinstance(reduce_op, ReduceOp):
        return reduce_op
    if isinstance(reduce_op, str) and reduce_op.upper() in ("SUM", "MEAN"):
        return ReduceOp[reduce_op.upper()]
    if isinstance(reduce_op, (VariableAggregation, VariableAggregationV2)):
        return ReduceOp.from_variable_aggregation(reduce_op)
    raise ValueError(f"Unknown reduce op {reduce_op!r}: expected tf.distribute.ReduceOp.SUM "
                     "or MEAN")

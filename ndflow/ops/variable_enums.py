"""`tf.VariableSynchronization` and `tf.VariableAggregation`: how a variable is synchronized
and aggregated across replicas (accepted by tf.Variable; meaningful under distribution
strategies)."""

from __future__ import annotations

import enum

from ndflow.core.api_export import tf_export


@tf_export("VariableSynchronization", v1=["VariableSynchronization"])
class VariableSynchronization(enum.Enum):
    """When a distributed variable's replicas are brought into agreement.

    Members:
      AUTO: let the distribution strategy choose (ON_WRITE for most strategies).
      NONE: one copy, no synchronization.
      ON_WRITE: every write is applied to all replicas at once.
      ON_READ: replicas are updated independently and combined (with the variable's
        `VariableAggregation`) when read across replicas, as for metric counters.

    Example:
      >>> v = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ,
      ...                 aggregation=tf.VariableAggregation.SUM, trainable=False)
      >>> tf.VariableSynchronization.ON_READ.value
      3
    """
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


@tf_export("VariableAggregation", v1=[])
class VariableAggregationV2(enum.Enum):
    """How the per-replica updates (or values) of a distributed variable are combined.

    Members:
      NONE: no aggregation.
      SUM: add the replicas' values.
      MEAN: average them.
      ONLY_FIRST_REPLICA: take the first replica's value.

    Example:
      >>> tf.VariableAggregation.MEAN.name
      'MEAN'
    """
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


@tf_export(v1=["VariableAggregation"])
class VariableAggregation(enum.Enum):
    """TF1's `VariableAggregation`: the TF2 members plus `ONLY_FIRST_TOWER`.

    Members:
      NONE: no combination.
      SUM: add the replicas' values.
      MEAN: average them.
      ONLY_FIRST_REPLICA: take the first replica's value.
      ONLY_FIRST_TOWER: the old name of ONLY_FIRST_REPLICA (the same member).

    Example:
      >>> agg = tf.compat.v1.VariableAggregation
      >>> agg.ONLY_FIRST_TOWER is agg.ONLY_FIRST_REPLICA
      True
    """
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3  # TF1's alias

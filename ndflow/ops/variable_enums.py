"""`tf.VariableSynchronization` and `tf.VariableAggregation`: how a variable is synchronized
and aggregated across replicas (accepted by tf.Variable; meaningful under distribution
strategies)."""

from __future__ import annotations

import enum

from ndflow.core.api_export import tf_export


@tf_export("VariableSynchronization", v1=["VariableSynchronization"])
class VariableSynchronization(enum.Enum):
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


@tf_export("VariableAggregation", v1=[])
class VariableAggregationV2(enum.Enum):
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


@tf_export(v1=["VariableAggregation"])
class VariableAggregation(enum.Enum):
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3  # TF1's alias

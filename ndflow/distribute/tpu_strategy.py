"""`tf.distribute.TPUStrategy` (and the experimental v1/v2 classes): synchronous training on a
TPU system. ndflow has no TPU devices, so constructing one fails as TensorFlow's does on a
machine without a TPU: with no resolver, the default `TPUClusterResolver('')`'s ValueError
(or what it raises for TPU_NAME & co.); with one, the NotFoundError of a TPU system with no
TPUs (TensorFlow 2.21 reaches an IndexError for a 'local' resolver there)."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.errors import NotFoundError
from ndflow.distribute.cluster_resolver.resolvers import ClusterResolver
from ndflow.distribute.cluster_resolver.tpu_resolver import (
    NO_TPU_MESSAGE,
    TPUClusterResolver,
)
from ndflow.distribute.distribute_lib import Strategy


def _no_tpu_system(tpu_cluster_resolver):
    """Resolves as TPUExtended does, then fails: ndflow never finds a TPU system."""
    if tpu_cluster_resolver is None:
        tpu_cluster_resolver = TPUClusterResolver("")
    if not isinstance(tpu_cluster_resolver, ClusterResolver):
        raise TypeError("tpu_cluster_resolver must be a tf.distribute.cluster_resolver."
                        f"TPUClusterResolver, got {type(tpu_cluster_resolver).__name__}")
    raise NotFoundError(None, None, NO_TPU_MESSAGE)


@tf_export("distribute.TPUStrategy", v1=[])
class TPUStrategy(Strategy):
    """Synchronous training on TPUs: unavailable in ndflow (see the module doc)."""

    def __init__(self, tpu_cluster_resolver=None, experimental_device_assignment=None,
                 experimental_spmd_xla_partitioning=False):
        _no_tpu_system(tpu_cluster_resolver)


@tf_export("distribute.experimental.TPUStrategy", v1=[])
class TPUStrategyV2Experimental(Strategy):
    """The experimental name of `TPUStrategy` (TF 2.x): unavailable in ndflow."""

    def __init__(self, tpu_cluster_resolver=None, device_assignment=None):
        _no_tpu_system(tpu_cluster_resolver)


@tf_export(v1=["distribute.experimental.TPUStrategy"])
class TPUStrategyV1(Strategy):
    """TF1's TPUStrategy: unavailable in ndflow."""

    def __init__(self, tpu_cluster_resolver=None, steps_per_run=None, device_assignment=None):
        _no_tpu_system(tpu_cluster_resolver)

"""`tf.nn.compute_average_loss` and `tf.nn.scale_regularization_loss`: per-replica losses
scaled so that summing them over the replicas (strategy.reduce SUM, or the gradient
all-reduce) gives the global-batch average."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.distribute import distribution_context as dc
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import div_no_nan, multiply, truediv
from ndflow.ops.array_core import shape
from ndflow.ops.cast import cast
from ndflow.ops.nn_loss_composite import check_global_batch_size, match_weight_rank
from ndflow.ops.reduction import reduce_sum


def _num_replicas(fn: str) -> int:
    # TF: a replica's share needs a replica context whenever a strategy is current
    if dc.has_strategy() and dc.in_cross_replica_context():
        raise RuntimeError(f"You are calling `{fn}` in cross replica context, while it was "
                           "expected to be called in replica context.")
    return dc.get_strategy().num_replicas_in_sync


@tf_export("nn.compute_average_loss")
def compute_average_loss(per_example_loss, sample_weight=None,
                         global_batch_size=None) -> Tensor:
    """`tf.nn.compute_average_loss`: sum(per_example_loss * sample_weight) / global batch
    size (by default the loss's first dimension times the replicas in sync); 0 for a batch
    size of 0."""
    per_example_loss = convert_to_tensor(per_example_loss)
    input_dtype = per_example_loss.dtype
    if per_example_loss.shape.rank == 0:
        raise ValueError(f"Invalid value passed for `per_example_loss`. Expected a tensor with "
                         f"at least rank 1. Received per_example_loss={per_example_loss} with "
                         f"rank 0")
    if sample_weight is not None:
        losses = cast(per_example_loss, dtypes.float32)
        weight = cast(convert_to_tensor(sample_weight), dtypes.float32)
        per_example_loss = cast(multiply(losses, match_weight_rank(losses, weight)),
                                input_dtype)
    if global_batch_size is None:
        replicas = _num_replicas("compute_average_loss")
        global_batch_size = multiply(shape(per_example_loss)[0], replicas)
    else:
        check_global_batch_size(global_batch_size)
    global_batch_size = cast(global_batch_size, input_dtype)
    return div_no_nan(reduce_sum(per_example_loss), global_batch_size)


@tf_export("nn.scale_regularization_loss")
def scale_regularization_loss(regularization_loss) -> Tensor:
    """`tf.nn.scale_regularization_loss`: the summed loss divided by the number of replicas
    in sync."""
    replicas = _num_replicas("scale_regularization_loss")
    return truediv(reduce_sum(regularization_loss), replicas)

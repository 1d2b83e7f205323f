"""Horovod's TensorFlow API on ndflow: data-parallel training over torch.distributed.

    import ndflow.distribute.horovod as hvd
    hvd.init()                                    # from the launcher's environment
    opt = hvd.DistributedOptimizer(opt)           # gradients averaged over the workers
    bcast = hvd.broadcast_global_variables(0)     # TF1 (an op); TF2: hvd.broadcast_variables
    callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0)]    # Keras

launched with `python -m ndflow.distribute.run -np 2 python train.py` (or `--hosts`). The
collectives are TensorFlow's CollectiveReduceV2 ops, so they run eagerly, in `tf.function`
and in Sessions. Modules: `basics.py` (init, rank, size, reduce ops, compression),
`tensor_ops.py` (allreduce, grouped_allreduce, broadcast, broadcast_variables,
broadcast_global_variables), `optimizers.py` (DistributedOptimizer, DistributedGradientTape;
mixed precision composition rules), `hooks.py` (BroadcastGlobalVariablesHook),
`callbacks.py` (Keras callbacks, defined by ndflow.keras and registered here).
"""

from ndflow.distribute.horovod import callbacks
from ndflow.distribute.horovod.basics import (
    Adasum,
    Average,
    Compression,
    Max,
    Min,
    Product,
    Sum,
    cross_rank,
    cross_size,
    gloo_enabled,
    init,
    is_homogeneous,
    is_initialized,
    local_rank,
    local_size,
    mpi_enabled,
    mpi_threads_supported,
    nccl_built,
    rank,
    shutdown,
    size,
)
from ndflow.distribute.horovod.hooks import BroadcastGlobalVariablesHook
from ndflow.distribute.horovod.optimizers import DistributedGradientTape, DistributedOptimizer
from ndflow.distribute.horovod.tensor_ops import (
    allgather,
    allgather_object,
    allreduce,
    broadcast,
    broadcast_global_variables,
    broadcast_object,
    broadcast_variables,
    grouped_allreduce,
)

__all__ = [
    "Adasum", "Average", "BroadcastGlobalVariablesHook", "Compression",
    "DistributedGradientTape", "DistributedOptimizer", "Max", "Min", "Product", "Sum",
    "allgather", "allgather_object", "allreduce", "broadcast", "broadcast_global_variables",
    "broadcast_object", "broadcast_variables", "callbacks", "cross_rank", "cross_size",
    "gloo_enabled", "grouped_allreduce", "init", "is_homogeneous", "is_initialized",
    "local_rank", "local_size", "mpi_enabled", "mpi_threads_supported", "nccl_built", "rank",
    "shutdown", "size",
]


def __getattr__(name: str):
    """The Keras callbacks (`hvd.BroadcastGlobalVariablesCallback`), Keras imported first."""
    try:
        return callbacks.registered()[name]
    except KeyError:
        raise AttributeError(f"module 'ndflow.distribute.horovod' has no attribute {name!r}"
                             ) from None

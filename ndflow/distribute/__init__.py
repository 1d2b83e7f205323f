"""`tf.distribute`: distribution strategies (MirroredStrategy over the devices of one
process, MultiWorkerMirroredStrategy over processes on torch.distributed, OneDeviceStrategy)
and the replica/cross-replica context functions. This package is the `tf.distribute`
namespace module: only exported names show in `dir(tf.distribute)`."""

from ndflow.distribute import (  # noqa: F401 - importing runs their tf_exports
    central_storage_strategy,
    cluster_device_filters,
    cluster_resolver,
    collective,
    collective_hints,
    cross_device_ops,
    distribute_lib,
    distribution_context,
    input_lib,
    loss_reduction,
    loss_scaling,
    mirrored_strategy,
    multi_worker_mirrored_strategy,
    one_device_strategy,
    preemption,
    reduce_util,
    tpu_strategy,
    values,
)

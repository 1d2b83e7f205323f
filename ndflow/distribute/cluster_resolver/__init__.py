"""`tf.distribute.cluster_resolver`: who the processes of a multi-worker job are, from
`TF_CONFIG` (as TensorFlow reads it) or from torch.distributed's launcher variables.

This package is the public namespace itself (only exported names show in it), so the code is
in its modules:

- `cluster_spec.py`: `tf.train.ClusterSpec` (+ the `ClusterDef`/`JobDef` protos).
- `resolvers.py`: `ClusterResolver`, `SimpleClusterResolver`, `TFConfigClusterResolver`
  (TensorFlow's), `TorchEnvClusterResolver` (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE,
  LOCAL_RANK, LOCAL_WORLD_SIZE), and
  `process_group_spec(resolver) -> ProcessGroupSpec` (validated; ValueError naming the
  TF_CONFIG field or variable) and `resolver_from_environment(environ=None)` (TF_CONFIG if set,
  else torch's variables if WORLD_SIZE is set, else one local process).
- `process_group.py`: `ProcessGroupSpec(rank, world_size, local_rank, local_size,
  master_addr, master_port, task_type, task_id)` with `.is_chief` and `.address`; the chief
  is rank 0, then the workers by index; `validate_cluster`, `split_address`.

ndflow.distribute.collective turns a ProcessGroupSpec into a torch.distributed group.
"""

from ndflow.distribute.cluster_resolver import (  # noqa: F401 - declares the exports
    cloud_resolvers,
    cluster_spec,
    process_group,
    resolvers,
    slurm,
    tpu_resolver,
    union,
)

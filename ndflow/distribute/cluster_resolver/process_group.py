"""The collective group a cluster describes: `ProcessGroupSpec` (this process's rank, world
size, local rank and the rendezvous address) from any resolver, with TensorFlow's checks of a
TF_CONFIG (multi_worker_util's, plus those it leaves to its servers) as ValueErrors naming
the field.

Ranks follow TensorFlow's collective leader: the chief is rank 0 when there is one, then the
workers in index order; rank 0's address is the rendezvous (torch.distributed's TCP store).
"""

from __future__ import annotations

from dataclasses import dataclass

from ndflow.distribute.cluster_resolver.cluster_spec import ClusterSpec

_ALLOWED_TASK_TYPES = ("chief", "worker", "evaluator", "ps")
# The task types that join the all-reduce group, in rank order.
COLLECTIVE_TASK_TYPES = ("chief", "worker")


@dataclass(frozen=True)
class ProcessGroupSpec:
    """This process's place in the collective group.

    rank, world_size: in the all-reduce group (chief = 0, then workers by index);
    local_rank, local_size: among the group's processes on this host;
    master_addr, master_port: rank 0's rendezvous address (torch.distributed's TCP store);
    task_type, task_id: the TF_CONFIG task this process is.
    """

    rank: int
    world_size: int
    local_rank: int
    local_size: int
    master_addr: str
    master_port: int
    task_type: str
    task_id: int

    @property
    def is_chief(self) -> bool:
        return self.rank == 0

    @property
    def address(self) -> str:
        return f"{self.master_addr}:{self.master_port}"


def split_address(address: str, where: str) -> tuple[str, int]:
    """'host:port' (or '[v6]:port', with an optional 'grpc://' prefix) -> (host, port);
    ValueError naming `where` otherwise."""
    text = address.split("://", 1)[-1]
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{where} must be 'host:port', got {address!r}")
    return host.strip("[]"), int(port)


def validate_cluster(spec: ClusterSpec, task_type, task_id) -> None:
    """TensorFlow's multi_worker_util checks on a cluster and task, as ValueErrors naming the
    TF_CONFIG field."""
    for job in spec.jobs:
        if job not in _ALLOWED_TASK_TYPES:
            raise ValueError(f"TF_CONFIG's cluster has a disallowed task type {job!r}; allowed "
                             f"types are {_ALLOWED_TASK_TYPES}")
    if task_type not in _ALLOWED_TASK_TYPES:
        raise ValueError(f"Unrecognized task.type {task_type!r} in TF_CONFIG; valid task "
                         f"types are {_ALLOWED_TASK_TYPES}")
    if task_type not in spec.jobs and task_type != "evaluator":
        raise ValueError(f"TF_CONFIG's task.type {task_type!r} not found in its cluster "
                         f"(jobs: {spec.jobs})")
    for job in ("chief", "evaluator"):
        if job in spec.jobs and spec.num_tasks(job) > 1:
            raise ValueError(f"There must be at most one {job!r} job (TF_CONFIG's cluster."
                             f"{job} has {spec.num_tasks(job)} tasks).")
    if task_id is None:
        raise ValueError("TF_CONFIG has no task.index")
    if task_id < 0 or (task_type in spec.jobs and task_id >= spec.num_tasks(task_type)):
        raise ValueError(f"TF_CONFIG's task.index {task_id} is out of range for job "
                         f"{task_type!r} with {spec.num_tasks(task_type)} tasks")
    for job in COLLECTIVE_TASK_TYPES:
        if job in spec.jobs:
            if spec.task_indices(job) != list(range(spec.num_tasks(job))):
                raise ValueError(f"TF_CONFIG's cluster.{job} must list tasks 0..n-1, got "
                                 f"indices {spec.task_indices(job)}")
            for i, address in enumerate(spec.job_tasks(job)):
                split_address(address, f"TF_CONFIG's cluster.{job}[{i}]")

"""`tf.distribute.cluster_resolver.SlurmClusterResolver`: the cluster of a Slurm job step, as
TensorFlow 2.21 reads it — this task's rank from SLURM_PROCID, the task count from
SLURM_STEP_NUM_TASKS, the nodes from SLURM_STEP_NODELIST (Slurm's compressed hostlist,
'n[01-03],m5') and the tasks per node from SLURM_STEP_TASKS_PER_NODE ('2(x3),1'). Tasks are
packed onto the nodes in sorted host order, ports counting up from `port_base` on each node,
and each task gets `gpus_per_task` of its node's GPUs (exported as CUDA_VISIBLE_DEVICES when
`auto_set_gpu`). GPUs per node default to CUDA_VISIBLE_DEVICES's count, else `nvidia-smi
--list-gpus`'s.

Slurm's variables are the protocol between srun and its tasks, read when the resolver is
made (as TensorFlow does), not configuration knobs of core/config.py.
"""

from __future__ import annotations

import os
import re
import subprocess

from ndflow.core.api_export import tf_export
from ndflow.distribute.cluster_resolver.cluster_spec import ClusterSpec
from ndflow.distribute.cluster_resolver.resolvers import (
    ClusterResolver,
    task_master,
)

_HOST_PART = re.compile(r"([^,[\]]*)(\[([^\]]+)\])?$")
_TASKS_PART = re.compile(r"(\d+)(\(x(\d+)\))?$")


def _split_hostlist(hostlist: str):
    """Splits at the commas outside brackets: 'n[1-2],m5' -> 'n[1-2]', 'm5'."""
    depth, current = False, ""
    for c in hostlist:
        if depth:
            if c == "[":
                raise ValueError("nested '['")
            depth = c != "]"
        elif c == "[":
            depth = True
        elif c == ",":
            if not current:
                raise ValueError("empty host name")
            yield current
            current = ""
            continue
        current += c
    if current:
        yield current


def _expand_range(expression: str):
    """'3-5,07' -> '3', '4', '5', '07' (zero padding kept: '01-03' -> '01', '02', '03')."""
    for part in expression.split(","):
        bounds = part.split("-")
        if len(bounds) == 1:
            bounds = bounds * 2
        elif len(bounds) != 2:
            raise ValueError(f"bad range {part!r}")
        width = len(bounds[0])
        for i in range(int(bounds[0]), int(bounds[1]) + 1):
            yield str(i).zfill(width)


def expand_hostlist(hostlist: str) -> list:
    """Slurm's hostlist 'n[1-2],m5,o[3-4,6]' -> ['n1', 'n2', 'm5', 'o3', 'o4', 'o6'] (order
    kept, no deduplication); ValueError naming the hostlist when it does not parse."""
    hosts = []
    try:
        for part in _split_hostlist(hostlist):
            m = _HOST_PART.match(part)
            if m is None:
                raise ValueError(f"Invalid part: {part}")
            if m.group(3) is None:
                hosts.append(m.group(1) or "")
            else:
                hosts.extend((m.group(1) or "") + i for i in _expand_range(m.group(3)))
    except ValueError as e:
        raise ValueError(f'Invalid hostlist format "{hostlist}": {e}') from None
    return hosts


def expand_tasks_per_node(tasks_per_node: str) -> list:
    """Slurm's '3(x2),2,1' -> [3, 3, 2, 1]; ValueError naming the list when it does not parse."""
    result = []
    for part in tasks_per_node.split(","):
        m = _TASKS_PART.match(part)
        if m is None:
            raise ValueError(f'Invalid tasks-per-node list format "{tasks_per_node}": ')
        result.extend([int(m.group(1))] * int(m.group(3) or 1))
    return result


def _slurm_var(name: str) -> str:
    name = "SLURM_" + name
    try:
        return os.environ[name]
    except KeyError:
        raise RuntimeError(f"{name} not found in environment. Not running inside a SLURM "
                           "step?") from None


def _slurm_int(name: str) -> int:
    value = _slurm_var(name)
    try:
        return int(value)
    except ValueError:
        raise RuntimeError(f"SLURM_{name} must be an integer, got {value!r}") from None


def get_num_gpus() -> int:
    """GPUs visible on this node: CUDA_VISIBLE_DEVICES's count, else nvidia-smi's."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len(visible.split(","))
    try:
        output = subprocess.check_output(["nvidia-smi", "--list-gpus"], encoding="utf-8")
    except (subprocess.CalledProcessError, OSError) as e:
        raise RuntimeError("Could not get number of GPUs from nvidia-smi. Maybe it is "
                           f"missing?\nOutput: {getattr(e, 'output', None) or e}") from None
    return sum(line.startswith("GPU ") for line in output.strip().split("\n"))


@tf_export("distribute.cluster_resolver.SlurmClusterResolver")
class SlurmClusterResolver(ClusterResolver):
    """The cluster of the current Slurm job step (see the module doc). `jobs` maps job names to
    task counts (default: every Slurm task a 'worker'); the jobs take the tasks in sorted
    job-name order."""

    def __init__(self, jobs=None, port_base=8888, gpus_per_node=None, gpus_per_task=None,
                 tasks_per_node=None, auto_set_gpu=True, rpc_layer="grpc"):
        self._rank = _slurm_int("PROCID")
        self._jobs = {"worker": _slurm_int("STEP_NUM_TASKS")} if jobs is None else jobs
        self._port_base = port_base
        if tasks_per_node is None:
            hosts = expand_hostlist(_slurm_var("STEP_NODELIST"))
            counts = expand_tasks_per_node(_slurm_var("STEP_TASKS_PER_NODE"))
            self._task_configuration = dict(zip(hosts, counts))
        elif isinstance(tasks_per_node, dict):
            self._task_configuration = tasks_per_node
        else:
            hosts = expand_hostlist(_slurm_var("STEP_NODELIST"))
            self._task_configuration = {host: int(tasks_per_node) for host in hosts}
        if not self._task_configuration:
            raise RuntimeError("The Slurm step has no nodes (SLURM_STEP_NODELIST is empty).")
        max_tasks_per_node = max(self._task_configuration.values())
        num_tasks = sum(self._task_configuration.values())
        if gpus_per_node is None:
            gpus_per_node = get_num_gpus()
        if gpus_per_task is None:
            gpus_per_task = gpus_per_node // max_tasks_per_node if max_tasks_per_node else 0
        self._gpus_per_node, self._gpus_per_task = gpus_per_node, gpus_per_task
        self._auto_set_gpu = auto_set_gpu
        self.task_type = None
        self.task_id = None
        self.rpc_layer = rpc_layer
        self._gpu_allocation = []
        self._cluster_allocation = {}
        if max_tasks_per_node * self._gpus_per_task > self._gpus_per_node:
            raise RuntimeError("Requested more GPUs per node than available.")
        if sum(self._jobs.values()) != num_tasks:
            raise RuntimeError(f"Requested {sum(self._jobs.values())} tasks but only "
                               f"{num_tasks} were assigned.")

    def cluster_spec(self) -> ClusterSpec:
        """The cluster, recomputed at each call; also sets `task_type`/`task_id` of this task
        and, with `auto_set_gpu`, CUDA_VISIBLE_DEVICES to its GPUs."""
        tasks, self._gpu_allocation, self._cluster_allocation = [], [], {}
        for host, num_tasks in sorted(self._task_configuration.items()):
            # a node holds as many tasks as its GPUs can be split into (TF's zip); with no
            # GPUs per task (CPU nodes, where TF fails on range(0, 0, 0)) all its tasks
            gpu_offsets = range(0, self._gpus_per_node, self._gpus_per_task) \
                if self._gpus_per_task > 0 else [0] * num_tasks
            for port_offset, gpu_offset in zip(range(num_tasks), gpu_offsets):
                tasks.append(f"{host}:{self._port_base + port_offset}")
                self._gpu_allocation.append(",".join(
                    str(g) for g in range(gpu_offset, gpu_offset + self._gpus_per_task)))
        start = 0
        for task_type, num_tasks in sorted(self._jobs.items()):
            end = start + num_tasks
            self._cluster_allocation[task_type] = tasks[start:end]
            if start <= self._rank < end:
                self.task_type, self.task_id = task_type, self._rank - start
            start = end
        if self._auto_set_gpu:
            if self._rank >= len(self._gpu_allocation):
                raise RuntimeError(f"SLURM_PROCID {self._rank} has no GPUs allocated: "
                                   f"{len(self._gpu_allocation)} tasks fit on the nodes' "
                                   f"{self._gpus_per_node} GPUs ({self._gpus_per_task} per "
                                   "task); pass auto_set_gpu=False or gpus_per_node")
            os.environ["CUDA_VISIBLE_DEVICES"] = self._gpu_allocation[self._rank]
        return ClusterSpec(self._cluster_allocation)

    def get_task_info(self) -> tuple:
        """(task_type, task_id), set by `cluster_spec()` (None before)."""
        return self.task_type, self.task_id

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        return task_master(self, task_type, task_id, rpc_layer)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return {"GPU": self._gpus_per_task}

"""The resolvers: TensorFlow's `ClusterResolver`, `SimpleClusterResolver` and
`TFConfigClusterResolver` (TF_CONFIG read at each call, as TensorFlow does), and ndflow's
`TorchEnvClusterResolver` for torch's launcher variables (MASTER_ADDR, MASTER_PORT, RANK,
WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE).

These variables are the protocol between a launcher and its workers, not configuration
knobs, so they are read here (at call time, or from an `environ` mapping given for tests)
rather than in core/config.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from ndflow.core.api_export import tf_export
from ndflow.distribute.cluster_resolver.cluster_spec import ClusterSpec
from ndflow.distribute.cluster_resolver.process_group import (
    COLLECTIVE_TASK_TYPES,
    ProcessGroupSpec,
    split_address,
    validate_cluster,
)


def format_master_url(master: str, rpc_layer: str | None = None) -> str:
    return f"{rpc_layer}://{master}" if rpc_layer else master


def task_master(resolver, task_type, task_id, rpc_layer) -> str:
    """`resolver.master(...)` for a resolver with a cluster spec: the address of the task
    (by default the resolver's own) with the RPC layer, or "" where no task is known."""
    task_type = task_type if task_type is not None else resolver.task_type
    task_id = task_id if task_id is not None else resolver.task_id
    if task_type is not None and task_id is not None:
        return format_master_url(resolver.cluster_spec().task_address(task_type, task_id),
                                 rpc_layer or resolver.rpc_layer)
    return ""


@tf_export("distribute.cluster_resolver.ClusterResolver")
class ClusterResolver:
    """The abstract resolver: `cluster_spec()`, `master()`, `task_type`, `task_id`,
    `environment`, `num_accelerators()`, `rpc_layer`."""

    def cluster_spec(self) -> ClusterSpec:
        raise NotImplementedError()

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        raise NotImplementedError()

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return {}  # CPU workers: ndflow counts GPUs through tf.config, not the resolver

    @property
    def environment(self) -> str:
        return ""

    @property
    def task_type(self):
        return getattr(self, "_task_type", None)

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        return getattr(self, "_task_id", None)

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def rpc_layer(self):
        return getattr(self, "_rpc_layer", None)

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer


@tf_export("distribute.cluster_resolver.SimpleClusterResolver")
class SimpleClusterResolver(ClusterResolver):
    """A resolver holding a given ClusterSpec, master, task type and id."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None,
                 environment="", num_accelerators=None, rpc_layer=None):
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError("cluster_spec must be a `tf.train.ClusterSpec`.")
        if not isinstance(master, str):
            raise TypeError("master must be a string.")
        self._cluster_spec, self._master = cluster_spec, master
        self._task_type, self._task_id = task_type, task_id
        self._environment, self._num_accelerators = environment, num_accelerators
        self._rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        if task_type is not None and task_id is not None:
            master = self._cluster_spec.task_address(task_type, task_id)
        else:
            master = self._master
        return format_master_url(master, rpc_layer or self._rpc_layer)

    @property
    def environment(self) -> str:
        return self._environment

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return self._num_accelerators or {}


def _environ(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def load_tf_config(environ: Mapping[str, str] | None = None) -> dict:
    """TF_CONFIG as a dict ({} when unset or empty); ValueError naming TF_CONFIG when it is not
    a JSON object."""
    text = _environ(environ).get("TF_CONFIG", "")
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"TF_CONFIG is not valid JSON ({e.msg} at column {e.colno}): "
                         f"{text[:200]!r}") from None
    if not isinstance(config, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object with 'cluster' and 'task', got "
                         f"{type(config).__name__}: {text[:200]!r}")
    return config


@tf_export("distribute.cluster_resolver.TFConfigClusterResolver")
class TFConfigClusterResolver(ClusterResolver):
    """The cluster described by the TF_CONFIG environment variable (read at each call, as
    TensorFlow does); `task_type`/`task_id`/`rpc_layer` given here override TF_CONFIG's.
    `environment` (ndflow extension when a mapping) may also be the environment to read."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        self._task_type, self._task_id, self._rpc_layer = task_type, task_id, rpc_layer
        self._environ = environment if isinstance(environment, Mapping) else None
        self._environment = None if isinstance(environment, Mapping) else environment

    def _config(self) -> dict:
        return load_tf_config(self._environ)

    @property
    def task_type(self):
        if self._task_type is not None:
            return str(self._task_type)
        task = self._config().get("task", {})
        return str(task["type"]) if isinstance(task, dict) and "type" in task else None

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        if self._task_id is not None:
            return int(self._task_id)
        task = self._config().get("task", {})
        if not isinstance(task, dict) or "index" not in task:
            return None
        try:
            return int(task["index"])
        except (TypeError, ValueError):
            raise ValueError(f"TF_CONFIG's task.index must be an integer, got "
                             f"{task['index']!r}") from None

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def environment(self):
        return self._environment

    @property
    def rpc_layer(self):
        return self._rpc_layer if self._rpc_layer is not None else \
            self._config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        config = self._config()
        if "cluster" not in config:
            return ClusterSpec({})
        if not isinstance(config["cluster"], dict):
            raise ValueError(f"TF_CONFIG's cluster must be an object mapping job names to "
                             f"address lists, got {config['cluster']!r}")
        try:
            return ClusterSpec(config["cluster"])
        except TypeError as e:
            raise ValueError(f"TF_CONFIG's cluster is malformed: {e}") from None

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        session_master = self._config().get("session_master")
        if session_master is not None:
            return session_master
        spec = self.cluster_spec()
        if not spec.jobs or (len(spec.jobs) == 1 and spec.num_tasks(spec.jobs[0]) == 1):
            return ""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        return format_master_url(spec.task_address(task_type, task_id),
                                 self.rpc_layer if rpc_layer is None else rpc_layer)


class TorchEnvClusterResolver(ClusterResolver):
    """The cluster torch's launcher variables describe (MASTER_ADDR, MASTER_PORT, RANK,
    WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE): every process is a "worker" with task id =
    RANK; the other workers' own addresses are not known, only the rendezvous address."""

    def __init__(self, environ: Mapping[str, str] | None = None):
        env = _environ(environ)
        self._world_size = _env_int(env, "WORLD_SIZE", minimum=1)
        self._task_id = _env_int(env, "RANK", minimum=0)
        if self._task_id >= self._world_size:
            raise ValueError(f"RANK={self._task_id} must be less than WORLD_SIZE="
                             f"{self._world_size}")
        self._task_type = "worker"
        self._master_addr = env.get("MASTER_ADDR", "")
        if not self._master_addr and self._world_size > 1:
            raise ValueError("MASTER_ADDR is not set: the rendezvous address of rank 0 is "
                             f"needed when WORLD_SIZE={self._world_size}")
        self._master_port = _env_int(env, "MASTER_PORT", minimum=1, default=29500)
        self._local_size = _env_int(env, "LOCAL_WORLD_SIZE", minimum=1,
                                    default=self._world_size)
        self._local_rank = _env_int(env, "LOCAL_RANK", minimum=0, default=self._task_id)
        if self._local_rank >= self._local_size:
            raise ValueError(f"LOCAL_RANK={self._local_rank} must be less than "
                             f"LOCAL_WORLD_SIZE={self._local_size}")

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec({"worker": {0: self.master()}})

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        return format_master_url(f"{self._master_addr or '127.0.0.1'}:{self._master_port}",
                                 rpc_layer)

    def process_group_spec(self) -> ProcessGroupSpec:
        return ProcessGroupSpec(self._task_id, self._world_size, self._local_rank,
                                self._local_size, self._master_addr or "127.0.0.1",
                                self._master_port, "worker", self._task_id)


def _env_int(env: Mapping[str, str], name: str, minimum: int, default: int | None = None):
    value = env.get(name)
    if value is None or value == "":
        if default is None:
            raise ValueError(f"{name} is not set")
        return default
    try:
        result = int(value.strip())
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if result < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {result}")
    return result


def process_group_spec(resolver: ClusterResolver) -> ProcessGroupSpec:
    """The collective group `resolver` describes, validated (ValueError naming the field)."""
    if isinstance(resolver, TorchEnvClusterResolver):
        return resolver.process_group_spec()
    spec = resolver.cluster_spec()
    if not spec:  # no cluster: one local process
        return ProcessGroupSpec(0, 1, 0, 1, "127.0.0.1", 0, "worker", 0)
    task_type, task_id = resolver.task_type, resolver.task_id
    if task_type is None:
        raise ValueError("TF_CONFIG has a cluster but no task.type")
    validate_cluster(spec, task_type, task_id)
    if task_type not in COLLECTIVE_TASK_TYPES:
        raise ValueError(f"A {task_type!r} task does not join the collective all-reduce; "
                         f"only {COLLECTIVE_TASK_TYPES} do")
    members = [(job, i, spec.task_address(job, i)) for job in COLLECTIVE_TASK_TYPES
               if job in spec.jobs for i in spec.task_indices(job)]
    rank = members.index((task_type, task_id, spec.task_address(task_type, task_id)))
    hosts = [split_address(a, f"TF_CONFIG's cluster.{j}[{i}]")[0] for j, i, a in members]
    master_addr, master_port = split_address(members[0][2],
                                             f"TF_CONFIG's cluster.{members[0][0]}[0]")
    my_host = hosts[rank]
    local_rank = hosts[:rank].count(my_host)
    return ProcessGroupSpec(rank, len(members), local_rank, hosts.count(my_host), master_addr,
                            master_port, task_type, task_id)


def resolver_from_environment(environ: Mapping[str, str] | None = None) -> ClusterResolver:
    """TFConfigClusterResolver when TF_CONFIG is set, TorchEnvClusterResolver when
    WORLD_SIZE is, else a single-process SimpleClusterResolver."""
    env = _environ(environ)
    if env.get("TF_CONFIG", "").strip():
        return TFConfigClusterResolver(environment=env if environ is not None else None)
    if env.get("WORLD_SIZE", "").strip():
        return TorchEnvClusterResolver(env)
    return SimpleClusterResolver(ClusterSpec({}))

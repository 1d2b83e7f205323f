"""`tf.distribute.cluster_resolver.UnionResolver`: several resolvers' clusters merged into one
(TensorFlow's UnionClusterResolver); the other properties come from the first resolver unless
overridden."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.distribute.cluster_resolver.cluster_spec import ClusterSpec
from ndflow.distribute.cluster_resolver.resolvers import ClusterResolver, format_master_url


@tf_export("distribute.cluster_resolver.UnionResolver")
class UnionClusterResolver(ClusterResolver):
    """`UnionResolver(r0, r1, ..., rpc_layer=None, task_type=None, task_id=None)`.

    A job several resolvers have is merged: lists are concatenated in resolver order while
    every resolver lists the job densely; once one has it as a sparse dict, all are taken as
    dicts by task index, and a task index given twice is a KeyError."""

    def __init__(self, *args, **kwargs):
        self._rpc_layer = kwargs.pop("rpc_layer", None)
        self._task_type = kwargs.pop("task_type", None)
        self._task_id = kwargs.pop("task_id", None)
        if kwargs:
            raise ValueError(f"Unexpected kwargs provided {kwargs!r}")
        if not args:
            raise ValueError("At least one ClusterResolver is required.")
        for resolver in args:
            if not isinstance(resolver, ClusterResolver):
                raise TypeError("All arguments must be a sub-class of `ClusterResolver.`")
        self._cluster_resolvers = args

    def cluster_spec(self) -> ClusterSpec:
        dicts = [r.cluster_spec().as_dict() for r in self._cluster_resolvers]
        merged: dict = {}
        for cluster in dicts:  # a job is a list unless some resolver has it as a dict
            for job, tasks in cluster.items():
                if job not in merged or isinstance(tasks, dict):
                    merged[job] = [] if isinstance(tasks, list) and job not in merged else {}
        for cluster in dicts:
            for job, tasks in cluster.items():
                if isinstance(merged[job], list):
                    merged[job].extend(tasks)
                    continue
                tasks = dict(enumerate(tasks)) if isinstance(tasks, list) else dict(tasks)
                duplicates = set(tasks) & set(merged[job])
                if duplicates:
                    raise KeyError("Duplicate keys detected when merging two ClusterSpecs: "
                                   f"{duplicates!r}")
                merged[job].update(tasks)
        return ClusterSpec(merged)

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        if task_type is not None and task_id is not None:
            return format_master_url(self.cluster_spec().task_address(task_type, task_id),
                                     rpc_layer or self._rpc_layer)
        return self._cluster_resolvers[0].master(rpc_layer=rpc_layer)

    @property
    def task_type(self):
        return self._task_type or self._cluster_resolvers[0].task_type

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        return self._task_id or self._cluster_resolvers[0].task_id

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def environment(self):
        return self._cluster_resolvers[0].environment

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return self._cluster_resolvers[0].num_accelerators(task_type, task_id, config_proto)

    @property
    def rpc_layer(self):
        return self._rpc_layer or self._cluster_resolvers[0].rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer

"""`tf.config.experimental.ClusterDeviceFilters`: the devices each remote task of a cluster
may see, as TensorFlow's ClusterDeviceFilters proto (device_filters.proto) that
`experimental_connect_to_cluster` sends in its ServerDef."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.protos import server_pb


def _as_bytes(value, what: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"{what} {value!r} must be bytes or unicode")


@tf_export("config.experimental.ClusterDeviceFilters")
class ClusterDeviceFilters:
    """Device filters per job and task: a task with filters ignores every device that matches
    none of them ("/job:ps", "/job:worker/replica:3", ...); its own devices stay visible, and
    a task without filters sees all devices."""

    def __init__(self):
        self._device_filters = {}  # job name -> {task index -> [filter, ...]}
        self._cluster_device_filters = None  # the proto, built on first request

    def set_device_filters(self, job_name, task_index, device_filters):
        """Set the device filters for given job name and task id."""
        assert all(isinstance(df, str) for df in device_filters)
        self._device_filters.setdefault(job_name, {})[task_index] = list(device_filters)
        self._cluster_device_filters = None

    def _as_cluster_device_filters(self):
        """The ClusterDeviceFilters proto: jobs sorted by name, tasks by index."""
        if not self._cluster_device_filters:
            self._make_cluster_device_filters()
        return self._cluster_device_filters

    def _make_cluster_device_filters(self):
        proto = server_pb.ClusterDeviceFilters()
        for job_name, tasks in sorted(self._device_filters.items()):
            job = proto.jobs.add()
            job.name = _as_bytes(job_name, "Job name")
            for index, filters in sorted(tasks.items()):
                for f in filters:
                    job.tasks[index].device_filters.append(_as_bytes(f, "Device filter"))
        self._cluster_device_filters = proto

"""`tf.train.ClusterSpec` (and the `ClusterDef`/`JobDef` protos): a cluster as jobs of tasks
with network addresses, convertible to and from TensorFlow's ClusterDef proto."""

from __future__ import annotations

from tensorboard.compat.proto.cluster_pb2 import ClusterDef, JobDef

from ndflow.core.api_export import tf_export


@tf_export("train.ClusterSpec")
class ClusterSpec:
    """A cluster as jobs of tasks: `{"worker": ["h0:2222", "h1:2222"], "ps": {0: "h2:2222"}}`
    (a job is a list of addresses, or a dict from task index to address), or a
    `tf.train.ClusterDef` proto, or another ClusterSpec."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_cluster_def()
        if isinstance(cluster, ClusterDef):
            self._jobs = {job.name: dict(job.tasks) for job in cluster.job}
        elif isinstance(cluster, dict):
            self._jobs = {}
            for job_name, tasks in cluster.items():
                if isinstance(tasks, (list, tuple)):
                    self._jobs[job_name] = dict(enumerate(tasks))
                elif isinstance(tasks, dict):
                    self._jobs[job_name] = {int(i): t for i, t in tasks.items()}
                else:
                    raise TypeError(f"The tasks for job {job_name!r} must be a list or a "
                                    "dictionary from integers to strings.")
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterDef` protocol buffer")
        for job_name, tasks in self._jobs.items():
            if not isinstance(job_name, (str, bytes)):
                raise TypeError(f"Job name {job_name!r} must be bytes or unicode")
            for address in tasks.values():
                if not isinstance(address, (str, bytes)):
                    raise TypeError(f"Task address {address!r} must be bytes or unicode")

    def __bool__(self):
        return bool(self._jobs)

    def __eq__(self, other):
        return self._jobs == (other._jobs if isinstance(other, ClusterSpec) else other)

    def __ne__(self, other):
        return not self == other

    def __repr__(self):
        items = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{k!r}: {items[k]!r}" for k in sorted(items)) + "})"

    @property
    def jobs(self) -> list:
        return list(self._jobs)

    def _job(self, job_name):
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name) -> list:
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name) -> list:
        """Addresses by task index (None where a sparse job has no task)."""
        job = self._job(job_name)
        out = [None] * (max(job) + 1 if job else 0)
        for i, address in job.items():
            out[i] = address
        return out

    def as_dict(self) -> dict:
        """Job -> list of addresses (dense jobs) or dict index -> address (sparse ones)."""
        out = {}
        for job in self.jobs:
            indices = self.task_indices(job)
            if indices and max(indices) + 1 == len(indices):
                out[job] = self.job_tasks(job)
            else:
                out[job] = {i: self.task_address(job, i) for i in indices}
        return out

    def as_cluster_def(self):
        """The `tf.train.ClusterDef` proto (jobs sorted by name, as TensorFlow writes it)."""
        cluster_def = ClusterDef()
        for job_name, tasks in sorted(self._jobs.items()):
            job = cluster_def.job.add()
            job.name = job_name.decode() if isinstance(job_name, bytes) else job_name
            for i, address in sorted(tasks.items()):
                job.tasks[i] = address.decode() if isinstance(address, bytes) else address
        return cluster_def


tf_export("train.ClusterDef")(ClusterDef)
tf_export("train.JobDef")(JobDef)

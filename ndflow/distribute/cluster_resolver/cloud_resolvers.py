"""TensorFlow's resolvers that ask a cloud API for the cluster:

- `KubernetesClusterResolver`: the pods matching label selectors per job (the `kubernetes`
  client's `CoreV1Api.list_pod_for_all_namespaces`), each 'host_ip:tf_server_port', sorted by
  pod name; a pod not Running is a RuntimeError.
- `GCEClusterResolver`: the RUNNING instances of a GCE instance group (googleapiclient's
  compute v1 `instanceGroups().listInstances` and `instances().get`), 'networkIP:port',
  sorted.

Both take the API object (`override_client`, `service`) for tests and custom credentials; when
it is not given the client package must be installed, else ImportError, as in TensorFlow.
"""

from __future__ import annotations

import enum
import importlib

from ndflow.core.api_export import tf_export
from ndflow.distribute.cluster_resolver.cluster_spec import ClusterSpec
from ndflow.distribute.cluster_resolver.resolvers import (
    ClusterResolver,
    task_master,
)


def _optional_module(name: str):
    """The module, or None when its package is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


@tf_export("distribute.cluster_resolver.KubernetesExecutableLocation")
class ExecutableLocation(enum.Enum):
    """Where the program runs: in a pod of the cluster (in-cluster config) or outside it
    (the kubeconfig file)."""

    WITHIN_CLUSTER = 0
    OFF_CLUSTER = 1


@tf_export("distribute.cluster_resolver.KubernetesClusterResolver")
class KubernetesClusterResolver(ClusterResolver):
    """The pods selected per job by Kubernetes label selectors, e.g.
    `{"worker": ["job-name=worker-a"], "ps": ["job-name=ps"]}` (default: every pod labelled
    'job-name=tensorflow' is a worker). `task_type`/`task_id` are not known: set them."""

    def __init__(self, job_to_label_mapping=None, tf_server_port=8470, rpc_layer="grpc",
                 override_client=None,
                 executable_location=ExecutableLocation.WITHIN_CLUSTER):
        k8s_config = _optional_module("kubernetes.config")
        if k8s_config is None:
            if not override_client:
                raise ImportError("The Kubernetes Python client must be installed before "
                                  "using the Kubernetes Cluster Resolver. To install the "
                                  "Kubernetes Python client, run `pip install kubernetes` "
                                  "on your command line.")
        elif not override_client:
            if executable_location == ExecutableLocation.OFF_CLUSTER:
                k8s_config.load_kube_config()
            elif executable_location == ExecutableLocation.WITHIN_CLUSTER:
                k8s_config.load_incluster_config()
            else:
                raise ValueError("The executable location provided is invalid.")
        self._job_to_label_mapping = job_to_label_mapping or \
            {"worker": ["job-name=tensorflow"]}
        self._tf_server_port = tf_server_port
        self._override_client = override_client
        self.task_type = None
        self.task_id = None
        self.rpc_layer = rpc_layer

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        return task_master(self, task_type, task_id, rpc_layer)

    def _client(self):
        if self._override_client:
            return self._override_client
        k8s_config = importlib.import_module("kubernetes.config")
        k8s_client = importlib.import_module("kubernetes.client")
        k8s_config.load_kube_config()
        return k8s_client.CoreV1Api()

    def cluster_spec(self) -> ClusterSpec:
        """Asks the Kubernetes API at each call."""
        client = self._client()
        cluster = {}
        for job, selectors in self._job_to_label_mapping.items():
            addresses = []
            for selector in selectors:
                pods = client.list_pod_for_all_namespaces(label_selector=selector).items
                for pod in sorted(pods, key=lambda p: p.metadata.name):
                    if pod.status.phase != "Running":
                        raise RuntimeError(f'Pod "{pod.metadata.name}" is not running; '
                                           f'phase: "{pod.status.phase}"')
                    addresses.append(f"{pod.status.host_ip}:{self._tf_server_port}")
            cluster[job] = addresses
        return ClusterSpec(cluster)


@tf_export("distribute.cluster_resolver.GCEClusterResolver")
class GCEClusterResolver(ClusterResolver):
    """The RUNNING instances of GCE instance group `instance_group` in `project`/`zone`, one
    job `task_type` of 'ip:port' addresses (sorted). `service` is the compute v1 API object
    (default: googleapiclient's `discovery.build('compute', 'v1')`)."""

    def __init__(self, project, zone, instance_group, port, task_type="worker", task_id=0,
                 rpc_layer="grpc", credentials="default", service=None):
        self._project, self._zone, self._instance_group = project, zone, instance_group
        self._task_type, self._task_id = task_type, task_id
        self._rpc_layer, self._port = rpc_layer, port
        self._credentials = credentials
        discovery = _optional_module("googleapiclient.discovery")
        oauth2 = _optional_module("oauth2client.client") if discovery is not None else None
        installed = discovery is not None and oauth2 is not None
        if credentials == "default" and installed:
            self._credentials = oauth2.GoogleCredentials.get_application_default()
        if service is None:
            if not installed:
                raise ImportError("googleapiclient must be installed before using the GCE "
                                  "cluster resolver")
            service = discovery.build("compute", "v1", credentials=self._credentials)
        self._service = service

    def cluster_spec(self) -> ClusterSpec:
        """Asks the compute API at each call (following its pages)."""
        request = self._service.instanceGroups().listInstances(
            project=self._project, zone=self._zone, instanceGroups=self._instance_group,
            body={"instanceState": "RUNNING"}, orderBy="name")
        workers = []
        while request is not None:
            response = request.execute()
            for instance in response["items"]:
                name = instance["instance"].split("/")[-1]
                details = self._service.instances().get(
                    project=self._project, zone=self._zone, instance=name)
                if details is not None:
                    ip = details.execute()["networkInterfaces"][0]["networkIP"]
                    workers.append(f"{ip}:{self._port}")
            request = self._service.instanceGroups().listInstances_next(
                previous_request=request, previous_response=response)
        return ClusterSpec({self._task_type: sorted(workers)})

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        return task_master(self, task_type, task_id, rpc_layer)

    @property
    def task_type(self):
        return self._task_type

    @task_type.setter
    def task_type(self, task_type):
        raise RuntimeError("You cannot reset the task_type of the GCEClusterResolver after "
                           "it has been created.")

    @property
    def task_id(self):
        return self._task_id

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def rpc_layer(self):
        return self._rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer

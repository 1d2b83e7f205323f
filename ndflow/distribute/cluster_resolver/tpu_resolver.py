"""`tf.distribute.cluster_resolver.TPUClusterResolver`: where a Cloud TPU's workers are.

ndflow runs on CPUs and GPUs, so no TPU is ever reachable; the resolver still reads its
arguments and environment as TensorFlow 2.21 does, so that a TPU program fails where and as
TensorFlow's fails on a machine without a TPU:

- `tpu` None or '' -> KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS, TPU_NAME, then TPU_CONFIG's
  `tpu_node_name` (with its `project`/`zone`); none: ValueError('Please provide a TPU Name
  to connect to.').
- 'local': a TPU attached to this VM; `cluster_spec()` is empty, `master()` '', and
  `num_accelerators()` counts the logical TPU devices (none).
- 'grpc://host:port[,...]': the workers' addresses themselves (port 8470 when omitted).
- a TPU name: the project and zone not given are asked of the GCE metadata server
  (GCE_METADATA_HOST / GCE_METADATA_IP, default metadata.google.internal; off GCP the
  request fails with urllib's URLError, as TensorFlow's), and the workers of the Cloud TPU
  API's node (`service`, or googleapiclient's 'tpu' v1 API).

Connecting to the workers (`num_accelerators()` of a remote TPU, `connect()`) is where the
absence of a TPU shows: TensorFlow's errors for that case.
"""

from __future__ import annotations

import importlib
import json
import os
import urllib.request

from ndflow.core.api_export import tf_export
from ndflow.core.errors import NotFoundError
from ndflow.distribute.cluster_resolver.cluster_spec import ClusterSpec
from ndflow.distribute.cluster_resolver.resolvers import ClusterResolver, format_master_url
from ndflow.runtime.device_config import list_logical_devices

_DEFAULT_PORT = "8470"
NO_TPU_MESSAGE = ("TPUs not found in the cluster. Failed in initialization: no TPU devices "
                  "are registered (ndflow runs on CPU and GPU devices).")


def _metadata_endpoint() -> str:
    endpoint = os.environ.get("GCE_METADATA_HOST") or \
        os.environ.get("GCE_METADATA_IP", "metadata.google.internal")
    return "http://" + endpoint


def request_compute_metadata(path: str) -> str:
    """A GCE metadata value ('project/project-id', 'instance/zone'); URLError off GCP."""
    req = urllib.request.Request(f"{_metadata_endpoint()}/computeMetadata/v1/{path}",
                                 headers={"Metadata-Flavor": "Google"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.read().decode("utf-8")


def _endpoints_from_string(endpoints: str) -> list:
    """'grpc://10.0.0.1:8470,10.0.0.2' -> [{'ipAddress': ..., 'port': ...}, ...]."""
    out = []
    for endpoint in endpoints.split(","):
        if endpoint.startswith("grpc://"):
            endpoint = endpoint.split("grpc://")[1]
        parts = endpoint.split(":")
        out.append({"ipAddress": parts[0],
                    "port": parts[1] if len(parts) > 1 else _DEFAULT_PORT})
    return out


class _CloudTpuClient:
    """The Cloud TPU client's part the resolver uses: the TPU's name and its endpoints."""

    def __init__(self, tpu, zone, project, credentials, service, discovery_url):
        if isinstance(tpu, list):
            if not tpu:
                raise ValueError("At least one TPU must be specified.")
            if len(tpu) != 1:
                raise NotImplementedError("Using multiple TPUs in a single session is not "
                                          "yet implemented")
            tpu = tpu[0]
        if not tpu:
            tpu = next((os.environ[e] for e in ("KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS", "TPU_NAME")
                        if e in os.environ), None)
        if tpu is None:
            node_config = json.loads(os.environ["TPU_CONFIG"]) \
                if os.environ.get("TPU_CONFIG") else None
            if not node_config:
                raise ValueError("Please provide a TPU Name to connect to.")
            tpu = node_config.get("tpu_node_name")
            project = project or node_config.get("project")
            zone = zone or node_config.get("zone")
        self._tpu = tpu.decode() if isinstance(tpu, bytes) else tpu
        self._use_api = not self._tpu.startswith("grpc://")
        self._service, self._credentials = service, None
        self._project = self._zone = self._discovery_url = None
        if self._use_api:
            if credentials != "default":
                self._credentials = credentials
            self._project = project or request_compute_metadata("project/project-id")
            self._zone = zone or request_compute_metadata("instance/zone").split("/")[-1]
            self._discovery_url = os.environ.get("TPU_API_DISCOVERY_URL") or discovery_url

    def name(self) -> str:
        return self._tpu

    def api_available(self) -> bool:
        return self._use_api

    def _tpu_service(self):
        if self._service:
            return self._service
        try:
            discovery = importlib.import_module("googleapiclient.discovery")
            oauth2 = importlib.import_module("oauth2client.client")
        except ImportError:
            raise RuntimeError("Missing runtime dependency on the Google API client. Run "
                               "`pip install cloud-tpu-client` to fix.") from None
        credentials = self._credentials
        if credentials is None or credentials == "default":
            credentials = oauth2.GoogleCredentials.get_application_default()
        kwargs = {"discoveryServiceUrl": self._discovery_url} if self._discovery_url else {}
        return discovery.build("tpu", "v1", credentials=credentials, cache_discovery=False,
                               **kwargs)

    def network_endpoints(self) -> list:
        if not self._use_api:
            return _endpoints_from_string(self._tpu)
        service = self._tpu_service()
        full_name = f"projects/{self._project}/locations/{self._zone}/nodes/{self._tpu}"
        try:
            response = service.projects().locations().nodes().get(name=full_name).execute()
        except Exception as e:  # noqa: BLE001 - TF reports any API failure this way
            raise ValueError(f"Could not lookup TPU metadata from name '{self._tpu}'. Please "
                             "doublecheck the tpu argument in the TPUClusterResolver "
                             f"constructor. Exception: {e}") from None
        if response.get("state") != "READY":
            raise RuntimeError(f'TPU "{self._tpu}" is not yet ready; state: '
                               f'"{response.get("state")}"')
        if "networkEndpoints" in response:
            return response["networkEndpoints"]
        return [{"ipAddress": response["ipAddress"], "port": response["port"]}]


class _LocalClient:
    def api_available(self) -> bool:
        return False


@tf_export("distribute.cluster_resolver.TPUClusterResolver")
class TPUClusterResolver(ClusterResolver):
    """A Cloud TPU's workers (see the module doc): `tpu` is a name, 'grpc://' addresses or
    'local'."""

    @staticmethod
    def connect(tpu=None, zone=None, project=None):
        """Resolves, connects to and initializes the TPU: NotFoundError without one."""
        TPUClusterResolver(tpu, zone, project)
        raise NotFoundError(None, None, NO_TPU_MESSAGE)

    def __init__(self, tpu=None, zone=None, project=None, job_name="worker",
                 coordinator_name=None, coordinator_address=None, credentials="default",
                 service=None, discovery_url=None):
        if tpu != "local":
            self._cloud_tpu_client = _CloudTpuClient(tpu, zone, project, credentials,
                                                     service, discovery_url)
            self._tpu = self._cloud_tpu_client.name()
        else:
            self._cloud_tpu_client = _LocalClient()
            self._tpu = "local"
        self.task_type = job_name
        self.task_id = 0
        self._coordinator_name = coordinator_name
        if coordinator_name and not coordinator_address:
            # TF starts an in-process gRPC server as the coordinator; ndflow has none
            raise NotImplementedError("TPUClusterResolver needs a coordinator_address with "
                                      "coordinator_name: ndflow has no TensorFlow gRPC "
                                      "server to start as the coordinator.")
        self._coordinator_address = coordinator_address
        self._tpu_topology = None

    def __enter__(self):
        return None

    def __exit__(self, exc_type, value, traceback):
        return None

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        """'grpc://' + the first worker's address ('' for a local TPU)."""
        if self._tpu == "local":
            return ""
        spec = self.cluster_spec()
        if task_type is not None and task_id is not None:
            master = spec.task_address(task_type, task_id)
        elif self.task_type is not None and self.task_id is not None:
            master = spec.task_address(self.task_type, self.task_id)
        else:
            tasks = spec.job_tasks(self.task_type)
            if not tasks:
                raise ValueError("No TPUs with the specified names exist.")
            master = tasks[0]
        return format_master_url(master, "grpc")

    def get_master(self) -> str:
        return self.master()

    def get_job_name(self):
        return self.task_type

    def get_coordination_service_leader(self) -> str:
        return "/job:" + self.get_job_name() + "/task:0"

    def cluster_spec(self) -> ClusterSpec:
        """The workers (asked of the Cloud TPU API at each call for a named TPU)."""
        if self._tpu == "local":
            return ClusterSpec({})
        workers = [f"{e['ipAddress']}:{e['port']}"
                   for e in self._cloud_tpu_client.network_endpoints()]
        cluster = {self.task_type: workers}
        if self._coordinator_address:
            cluster[self._coordinator_name] = [self._coordinator_address]
        return ClusterSpec(cluster)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        """TPU cores per worker: the local logical TPU devices (none in ndflow); a remote
        TPU's master cannot be reached (TF's error after its retries)."""
        if self._tpu == "local":
            return {"TPU": len(list_logical_devices("TPU"))}
        raise RuntimeError("Failed to connect to master. The TPU might not be ready (e.g. "
                           "still scheduling) or the master address is incorrect: got "
                           f"({self.master()})")

    @property
    def tpu_hardware_feature(self):
        """The topology's hardware feature (None: no topology is ever set without a TPU)."""
        return None if self._tpu_topology is None else self._tpu_topology.tpu_hardware_feature

    @property
    def environment(self) -> str:
        return ""

    def __deepcopy__(self, memo):
        return self

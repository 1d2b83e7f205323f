"""The cluster resolvers TensorFlow 2.21 has beyond TF_CONFIG's — Slurm, Kubernetes, GCE,
Cloud TPU, UnionResolver — plus TPUStrategy without a TPU, CollectiveHints and
get_loss_reduction, against TF 2.21's results for the same calls
(tests/fixtures/distribute_resolvers: configs.py runs them, generate.py ran them in TF)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import ndflow as tf
from ndflow.distribute.cluster_resolver.resolvers import process_group_spec
from ndflow.distribute.cluster_resolver.slurm import expand_hostlist, expand_tasks_per_node
from tests import fixture_modules

configs = fixture_modules.load("distribute_resolvers")
WANT = json.loads((Path(configs.__file__).parent / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(configs.CASES))
def test_matches_tensorflow(name):
    got = json.loads(json.dumps(configs.run(tf, name), sort_keys=True))  # int keys -> str
    assert got == WANT[name]


def test_environment_is_restored_after_slurm_cases():
    before = os.environ.get("CUDA_VISIBLE_DEVICES")
    configs.run(tf, "slurm_default")
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == before


@pytest.mark.parametrize("hostlist,hosts", [
    ("n[1-2],m5,o[3-4,6,7-9]", ["n1", "n2", "m5", "o3", "o4", "o6", "o7", "o8", "o9"]),
    ("gpu[008-011]", ["gpu008", "gpu009", "gpu010", "gpu011"]),
    ("a,b,a", ["a", "b", "a"]),
])
def test_expand_hostlist(hostlist, hosts):
    assert expand_hostlist(hostlist) == hosts


def test_expand_tasks_per_node():
    assert expand_tasks_per_node("3(x2),2,1") == [3, 3, 2, 1]
    with pytest.raises(ValueError, match="Invalid tasks-per-node"):
        expand_tasks_per_node("x")


def test_slurm_cpu_nodes_without_gpus(monkeypatch):
    # TF 2.21 fails on range(0, 0, 0) here; ndflow places every task with no GPUs
    monkeypatch.setenv("SLURM_PROCID", "2")
    monkeypatch.setenv("SLURM_STEP_NUM_TASKS", "3")
    monkeypatch.setenv("SLURM_STEP_NODELIST", "c[1-2]")
    monkeypatch.setenv("SLURM_STEP_TASKS_PER_NODE", "2,1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    r = tf.distribute.cluster_resolver.SlurmClusterResolver(gpus_per_node=0)
    assert r.cluster_spec().as_dict() == {"worker": ["c1:8888", "c1:8889", "c2:8888"]}
    assert r.get_task_info() == ("worker", 2)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == ""
    assert r.num_accelerators() == {"GPU": 0}


def test_slurm_missing_nvidia_smi(monkeypatch, tmp_path):
    monkeypatch.setenv("SLURM_PROCID", "0")
    monkeypatch.setenv("SLURM_STEP_NUM_TASKS", "1")
    monkeypatch.setenv("SLURM_STEP_NODELIST", "n1")
    monkeypatch.setenv("SLURM_STEP_TASKS_PER_NODE", "1")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi at all
    with pytest.raises(RuntimeError, match="Could not get number of GPUs from nvidia-smi"):
        tf.distribute.cluster_resolver.SlurmClusterResolver()


def test_slurm_resolver_drives_process_group_spec(monkeypatch):
    """A Slurm resolver feeds MultiWorkerMirroredStrategy's rank computation."""
    monkeypatch.setenv("SLURM_PROCID", "1")
    monkeypatch.setenv("SLURM_STEP_NUM_TASKS", "2")
    monkeypatch.setenv("SLURM_STEP_NODELIST", "h[1-2]")
    monkeypatch.setenv("SLURM_STEP_TASKS_PER_NODE", "1(x2)")
    r = tf.distribute.cluster_resolver.SlurmClusterResolver(gpus_per_node=0,
                                                            auto_set_gpu=False)
    r.cluster_spec()
    spec = process_group_spec(r)
    assert (spec.rank, spec.world_size, spec.master_addr, spec.master_port) == \
        (1, 2, "h1", 8888)


def test_tpu_local_strategy_and_connect_raise_not_found():
    # TF 2.21 reaches an IndexError for a 'local' resolver; ndflow says no TPU was found
    r = tf.distribute.cluster_resolver.TPUClusterResolver("local")
    with pytest.raises(tf.errors.NotFoundError, match="TPUs not found in the cluster"):
        tf.distribute.TPUStrategy(r)
    with pytest.raises(tf.errors.NotFoundError, match="TPUs not found"):
        tf.distribute.experimental.TPUStrategy(r)
    with pytest.raises(tf.errors.NotFoundError, match="TPUs not found"):
        tf.distribute.cluster_resolver.TPUClusterResolver.connect("local")
    with pytest.raises(TypeError, match="TPUClusterResolver"):
        tf.distribute.TPUStrategy("grpc://x:1")


def test_tpu_remote_num_accelerators_and_coordinator_server():
    r = tf.distribute.cluster_resolver.TPUClusterResolver("grpc://10.0.0.1:8470")
    with pytest.raises(RuntimeError, match=r"Failed to connect to master.*grpc://10.0.0.1:8470"):
        r.num_accelerators()
    with pytest.raises(NotImplementedError, match="coordinator_address"):
        tf.distribute.cluster_resolver.TPUClusterResolver("grpc://10.0.0.1:8470",
                                                          coordinator_name="coordinator")


def test_tpu_named_without_api_client():
    r = tf.distribute.cluster_resolver.TPUClusterResolver("mytpu", zone="z", project="p")
    with pytest.raises(RuntimeError, match="Missing runtime dependency on the Google API"):
        r.cluster_spec()


def test_tpu_name_off_gcp_fails_on_metadata(monkeypatch):
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")  # nothing listens: refused
    with pytest.raises(OSError):
        tf.distribute.cluster_resolver.TPUClusterResolver("mytpu")


def test_loss_reduction_for_estimator_scaling():
    strategy = tf.distribute.get_strategy()
    graph = tf.Graph()
    strategy._scale_loss_for_estimator = True
    try:
        with graph.as_default():
            assert tf.compat.v1.distribute.get_loss_reduction() is tf.distribute.ReduceOp.MEAN
            graph._last_loss_reduction = tf.compat.v1.losses.Reduction.SUM
            assert tf.compat.v1.distribute.get_loss_reduction() is tf.distribute.ReduceOp.SUM
            graph._last_loss_reduction = tf.compat.v1.losses.Reduction.MEAN
            assert tf.compat.v1.distribute.get_loss_reduction() is tf.distribute.ReduceOp.MEAN
    finally:
        del strategy._scale_loss_for_estimator
    assert tf.compat.v1.distribute.get_loss_reduction() is tf.distribute.ReduceOp.SUM

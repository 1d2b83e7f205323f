"""Cluster resolvers: TF_CONFIG as TensorFlow reads it (against what TensorFlow 2.21's
TFConfigClusterResolver and ClusterSpec make of the same values: tests/fixtures/tf_config,
written by the generate.py beside it), torch's launcher variables, and the collective group
both describe; inconsistent configurations are ValueErrors naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ndflow as tf
from ndflow.distribute import collective
from ndflow.distribute.cluster_resolver import resolvers as cr
from ndflow.distribute.cluster_resolver.process_group import ProcessGroupSpec


def _tf_config(cluster, task=None, **extra):
    config = {"cluster": cluster, **extra}
    if task is not None:
        config["task"] = task
    return {"TF_CONFIG": json.dumps(config)}


def _spec(env):
    return cr.process_group_spec(cr.resolver_from_environment(env))


FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tf_config" / "expected.json"


@pytest.mark.parametrize("expected", json.loads(FIXTURE.read_text()),
                         ids=lambda e: "-".join(sorted(e["config"]["cluster"])))
def test_tf_config_read_as_tensorflow_reads_it(expected, monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps(expected["config"]))
    r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    spec = r.cluster_spec()
    as_dict = {k: v if isinstance(v, list) else {str(i): a for i, a in v.items()}
               for k, v in spec.as_dict().items()}
    assert (r.task_type, r.task_id, r.rpc_layer, r.master()) == \
        (expected["task_type"], expected["task_id"], expected["rpc_layer"], expected["master"])
    assert as_dict == expected["as_dict"] and repr(spec) == expected["repr"]
    assert spec.as_cluster_def().SerializeToString().hex() == expected["cluster_def"]


def test_cluster_spec_as_tensorflow():
    spec = tf.train.ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": {1: "p1:2222"}})
    assert sorted(spec.jobs) == ["ps", "worker"]
    assert spec.num_tasks("worker") == 2 and spec.task_indices("ps") == [1]
    assert spec.task_address("worker", 1) == "w1:2222"
    assert spec.job_tasks("ps") == [None, "p1:2222"]
    assert spec.as_dict() == {"worker": ["w0:2222", "w1:2222"], "ps": {1: "p1:2222"}}
    assert repr(spec) == "ClusterSpec({'ps': {1: 'p1:2222'}, 'worker': ['w0:2222', 'w1:2222']})"
    round_trip = tf.train.ClusterSpec(spec.as_cluster_def())
    assert round_trip == spec and tf.train.ClusterSpec(spec) == spec
    assert [j.name for j in spec.as_cluster_def().job] == ["ps", "worker"]
    with pytest.raises(ValueError, match="No such job in cluster: 'chief'"):
        spec.num_tasks("chief")
    with pytest.raises(ValueError, match="No task with index 5 in job 'worker'"):
        spec.task_address("worker", 5)
    with pytest.raises(TypeError, match="must be a list or a dictionary"):
        tf.train.ClusterSpec({"worker": "w0:1"})


def test_tfconfig_resolver_reads_the_environment(monkeypatch):
    cluster = {"chief": ["c0:2222"], "worker": ["w0:2222", "w1:2222"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster,
                                               "task": {"type": "worker", "index": 1},
                                               "rpc_layer": "grpc"}))
    r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert (r.task_type, r.task_id, r.rpc_layer) == ("worker", 1, "grpc")
    assert r.cluster_spec().as_dict() == cluster
    assert r.master() == "grpc://w1:2222"
    assert r.master("chief", 0, rpc_layer="") == "c0:2222"
    overridden = tf.distribute.cluster_resolver.TFConfigClusterResolver(task_type="chief",
                                                                      task_id=0)
    assert (overridden.task_type, overridden.task_id) == ("chief", 0)
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["w0:1"]}}))
    assert r.master() == ""  # a one-task cluster: no master, as TensorFlow
    monkeypatch.delenv("TF_CONFIG")
    assert r.cluster_spec().as_dict() == {} and r.task_type is None


def test_simple_resolver():
    spec = tf.train.ClusterSpec({"worker": ["w0:1", "w1:1"]})
    r = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, task_type="worker",
                                                             task_id=1, rpc_layer="grpc")
    assert r.cluster_spec() is spec and r.master("worker", 0) == "grpc://w0:1"
    with pytest.raises(TypeError, match="cluster_spec must be a `tf.train.ClusterSpec`"):
        tf.distribute.cluster_resolver.SimpleClusterResolver({"worker": []})


def test_group_from_tf_config_chief_first_and_local_ranks():
    cluster = {"chief": ["h0:2000"], "worker": ["h0:2001", "h1:2002", "h1:2003"]}
    ranks = [(_spec(_tf_config(cluster, {"type": t, "index": i})))
             for t, i in [("chief", 0), ("worker", 0), ("worker", 1), ("worker", 2)]]
    assert [s.rank for s in ranks] == [0, 1, 2, 3]
    assert {s.world_size for s in ranks} == {4}
    assert [(s.local_rank, s.local_size) for s in ranks] == [(0, 2), (1, 2), (0, 2), (1, 2)]
    assert {s.address for s in ranks} == {"h0:2000"}
    assert [s.is_chief for s in ranks] == [True, False, False, False]
    no_chief = _spec(_tf_config({"worker": ["a:1", "b:2"]}, {"type": "worker", "index": 0}))
    assert no_chief.is_chief and no_chief.address == "a:1"


def test_group_from_torch_variables():
    env = {"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29400", "RANK": "3", "WORLD_SIZE": "4",
           "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
    s = _spec(env)
    assert (s.rank, s.world_size, s.local_rank, s.local_size, s.address) == \
        (3, 4, 1, 2, "10.0.0.1:29400")
    assert _spec({}).world_size == 1  # nothing set: one local process


@pytest.mark.parametrize("env, message", [
    ({"TF_CONFIG": "{not json"}, "TF_CONFIG is not valid JSON"),
    ({"TF_CONFIG": "[1, 2]"}, "TF_CONFIG must be a JSON object"),
    (_tf_config({"worker": ["a:1"]}, {"type": "worker", "index": 3}),
     "task.index 3 is out of range for job 'worker'"),
    (_tf_config({"worker": ["a:1"]}, {"type": "chief", "index": 0}),
     "task.type 'chief' not found in its cluster"),
    (_tf_config({"worker": ["a:1"]}, {"type": "boss", "index": 0}),
     "Unrecognized task.type 'boss'"),
    (_tf_config({"master": ["a:1"]}, {"type": "worker", "index": 0}),
     "disallowed task type 'master'"),
    (_tf_config({"chief": ["a:1", "b:1"], "worker": ["c:1"]}, {"type": "worker", "index": 0}),
     "at most one 'chief' job"),
    (_tf_config({"worker": ["a:1"]}), "has a cluster but no task.type"),
    (_tf_config({"worker": ["a:1"]}, {"type": "worker"}), "TF_CONFIG has no task.index"),
    (_tf_config({"worker": ["a:1"]}, {"type": "worker", "index": "x"}),
     "task.index must be an integer"),
    (_tf_config({"worker": ["a", "b:1"]}, {"type": "worker", "index": 1}),
     r"cluster.worker\[0\] must be 'host:port'"),
    (_tf_config({"worker": ["a:1"], "ps": ["p:1"]}, {"type": "ps", "index": 0}),
     "'ps' task does not join the collective"),
    (_tf_config({"worker": "a:1"}, {"type": "worker", "index": 0}),
     "TF_CONFIG's cluster is malformed"),
    ({"WORLD_SIZE": "2", "RANK": "2", "MASTER_ADDR": "x"}, "RANK=2 must be less than WORLD_SIZE=2"),
    ({"WORLD_SIZE": "2", "RANK": "0"}, "MASTER_ADDR is not set"),
    ({"WORLD_SIZE": "two", "RANK": "0"}, "WORLD_SIZE must be an integer"),
    ({"WORLD_SIZE": "2", "MASTER_ADDR": "x"}, "RANK is not set"),
])
def test_inconsistent_configuration_names_the_field(env, message):
    with pytest.raises(ValueError, match=message):
        _spec(env)


@pytest.mark.parametrize("gpus,local_size,want", [
    (0, 2, "gloo"), (1, 1, "cpu:gloo,cuda:nccl"), (1, 2, "gloo"), (2, 2, "cpu:gloo,cuda:nccl")])
def test_default_backend_gloo_for_cpu_tensors_nccl_for_one_gpu_per_worker(
        monkeypatch, gpus, local_size, want):
    monkeypatch.setattr(collective.torch.cuda, "is_available", lambda: gpus > 0)
    monkeypatch.setattr(collective.torch.cuda, "device_count", lambda: gpus)
    spec = ProcessGroupSpec(0, local_size, 0, local_size, "127.0.0.1", 1, "worker", 0)
    assert collective.default_backend(spec) == want

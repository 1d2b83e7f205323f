"""PreemptionCheckpointHandler, TerminationConfig and PreemptionWatcher on a single worker
against TensorFlow 2.21's runs of the same scenarios (tests/fixtures/preemption: worker.py
trains, SIGTERMs itself or has a watcher fire; generate.py ran it in TF subprocesses).
The default pass runs the scenarios in-process (the handler's SystemExit caught, the SIGTERM
handler restored afterwards); the slow pass runs them in subprocesses as TF's were."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

import ndflow as tf
from tests import fixture_modules

configs = fixture_modules.load("preemption")
WANT = json.loads((Path(configs.__file__).parent / "expected.json").read_text())
# how many steps fit in the watcher's polling second or the grace period depends on timing
_TIMED = ("watcher", "grace_period")


def _comparable(name, result):
    if name not in _TIMED:
        return result
    runs = [{**r, "events": [e for e in r["events"] if "step" not in e]}
            for r in result["runs"]]
    return {**result, "runs": runs}


@pytest.fixture
def sigterm_restored(monkeypatch):
    saved = signal.getsignal(signal.SIGTERM)
    for k, v in configs.ENV.items():
        monkeypatch.setenv(k, v)
    yield
    signal.signal(signal.SIGTERM, saved)


@pytest.mark.parametrize("name", configs.SCENARIOS)
def test_matches_tensorflow_in_process(sigterm_restored, name):
    got = configs.run_in_process(tf, name)
    assert _comparable(name, got) == _comparable(name, WANT[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", configs.SCENARIOS)
def test_matches_tensorflow_in_subprocesses(name):
    got = configs.run("ndflow", name, python=sys.executable)
    assert _comparable(name, got) == _comparable(name, WANT[name])


def test_checkpoint_needs_a_directory():
    # TF 2.21 means this error but raises a TypeError building it (one argument given)
    with pytest.raises(tf.errors.InvalidArgumentError, match="checkpoint_dir must be passed"):
        tf.distribute.experimental.PreemptionCheckpointHandler(
            None, tf.train.Checkpoint(v=tf.Variable(1.0)))


def test_multi_worker_and_parameter_server_clusters_are_refused(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    ps = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec({"worker": ["a:1"], "ps": ["b:1"]}), task_type="worker", task_id=0)
    with pytest.raises(NotImplementedError, match="ParameterServerStrategy"):
        tf.distribute.experimental.PreemptionCheckpointHandler(ps, ckpt, str(tmp_path))
    workers = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec({"worker": ["a:1", "b:1"]}), task_type="worker", task_id=0)
    with pytest.raises(NotImplementedError, match="coordination service"):
        tf.distribute.experimental.PreemptionCheckpointHandler(workers, ckpt, str(tmp_path))


@pytest.mark.parametrize("cluster", [{}, {"worker": ["localhost:1234"]}])
def test_one_task_cluster_is_a_single_worker(sigterm_restored, tmp_path, cluster):
    v = tf.Variable(0.0)
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster), task_type="worker", task_id=0)
    handler = tf.distribute.experimental.PreemptionCheckpointHandler(
        resolver, tf.train.Checkpoint(v=v), str(tmp_path))
    with handler.watch_preemption_scope():  # errors pass through it on one worker
        for _ in range(3):
            handler.run(lambda: v.assign_add(2.0))
        with pytest.raises(tf.errors.InvalidArgumentError):
            handler.run(lambda: tf.reshape(tf.ones([3]), [2]))
    assert handler.total_run_calls == 3 and float(v.numpy()) == 6.0
    signal.raise_signal(signal.SIGTERM)  # caught: the next step saves and exits
    handler.run(lambda: v.assign_add(2.0))
    with pytest.raises(SystemExit) as exit_info:
        handler.run(lambda: v.assign_add(2.0))
    assert exit_info.value.code == 42 and float(v.numpy()) == 8.0
    restored = tf.Variable(0.0)
    tf.train.Checkpoint(v=restored).restore(tf.train.latest_checkpoint(str(tmp_path)))
    assert float(restored.numpy()) == 8.0

"""CentralStorageStrategy on three logical CPU devices (replicas on /cpu:1 and /cpu:2,
variables on /cpu:0) against TensorFlow 2.21's results for the same calls
(tests/fixtures/central_storage: configs.py runs them, generate.py ran them in TF)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.runtime import device_config
from tests import fixture_modules

configs = fixture_modules.load("central_storage")
WANT = json.loads((Path(configs.__file__).parent / "expected.json").read_text())
_FLOAT_CASES = {"train_eager", "train_function", "keras_fit"}


@pytest.fixture
def three_cpus(monkeypatch):
    """Three logical CPU devices (set directly: other tests may already have listed devices,
    after which TF forbids reconfiguring them)."""
    cpu = tf.config.list_physical_devices("CPU")[0]
    monkeypatch.setitem(device_config._logical, cpu,
                        [tf.config.LogicalDeviceConfiguration()] * 3)


def _close(got, want):
    if isinstance(want, dict):
        assert sorted(got) == sorted(want)
        for k in want:
            _close(got[k], want[k])
    elif isinstance(want, list) and want and isinstance(want[0], float):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        assert got == want


@pytest.mark.parametrize("name", sorted(configs.CASES))
def test_matches_tensorflow(three_cpus, name):
    got = json.loads(json.dumps(configs.run(tf, name), sort_keys=True))
    want = WANT[name]
    if name == "keras_fit":
        # TF 2.21's fit under this strategy reports a loss history that is not the epochs'
        # mean loss (its weights are right): ndflow's is checked against NumPy instead
        np.testing.assert_allclose(got.pop("loss"), _fit_losses_numpy(), rtol=1e-5)
        want = {k: v for k, v in want.items() if k != "loss"}
    if name in _FLOAT_CASES:
        _close(got, want)
    else:
        assert got == want


def _fit_losses_numpy():
    """The mean squared error of each epoch of keras_fit's SGD, in float64."""
    rng = np.random.RandomState(0)
    x = rng.randn(16, 3).astype(np.float32).astype(np.float64)
    y = x @ np.array([[1.0], [-2.0], [0.5]]) + 0.3
    w, b, losses = np.full((3, 1), 0.1), np.zeros(1), []
    for _ in range(3):
        batch_losses = []
        for i in range(2):
            xb, yb = x[8 * i:8 * i + 8], y[8 * i:8 * i + 8]
            err = xb @ w + b - yb
            batch_losses.append(np.mean(err ** 2))
            w, b = w - 0.05 * 2 * xb.T @ err / 8, b - 0.05 * 2 * err.sum(0) / 8
        losses.append(np.mean(batch_losses))
    return losses


def test_variables_live_once_on_the_parameter_device(three_cpus):
    s = tf.distribute.experimental.CentralStorageStrategy(["/cpu:1", "/cpu:2"])
    assert s.extended.parameter_devices == ("/device:CPU:0",)  # TF's default, as written
    with s.scope():
        v = tf.Variable([1.0, 2.0])
    assert len(v.values) == 1  # one copy, whatever the number of replicas
    seen = s.run(lambda: v.read_value())
    assert [float(t.numpy()[1]) for t in s.experimental_local_results(seen)] == [2.0, 2.0]
    v.values[0].assign([3.0, 4.0])  # the one copy is what every replica reads
    seen = s.run(lambda: v.read_value())
    assert [float(t.numpy()[1]) for t in s.experimental_local_results(seen)] == [4.0, 4.0]


def test_checkpoint_round_trip(three_cpus, tmp_path):
    s = tf.distribute.experimental.CentralStorageStrategy(["/cpu:1", "/cpu:2"])
    with s.scope():
        v = tf.Variable([1.0, 2.0])
    path = tf.train.Checkpoint(v=v).save(str(tmp_path / "ckpt"))
    plain = tf.Variable([0.0, 0.0])
    tf.train.Checkpoint(v=plain).restore(path)
    np.testing.assert_array_equal(plain.numpy(), [1.0, 2.0])
    v.assign([7.0, 8.0])
    tf.train.Checkpoint(v=v).restore(path)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_v1_name_and_bad_devices(three_cpus):
    assert tf.compat.v1.distribute.experimental.CentralStorageStrategy is \
        tf.distribute.experimental.CentralStorageStrategy
    with pytest.raises(tf.errors.InvalidArgumentError, match="CPU:7 does not exist"):
        tf.distribute.experimental.CentralStorageStrategy(["/cpu:1", "/cpu:7"])

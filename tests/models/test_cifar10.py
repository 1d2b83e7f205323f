"""The CIFAR-10 tutorial (ndflow/models/image/cifar10): the binary record reader against bytes
written here, the input pipeline's bad-input errors, training (one step runs, the loss falls),
N towers on N logical CPU devices equal one tower with an N-times batch, evaluation with the
averaged weights. The full example commands run as subprocesses in the slow pass."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import autotune
from ndflow.models.image.cifar10 import (
    cifar10_eval,
    cifar10_input,
    cifar10_multi_gpu_train,
    cifar10_train,
    generated_data,
)
from ndflow.runtime import device_config

v1 = tf.compat.v1
# One colour per class (the distortions keep colour ratios: a class is learnable in a few steps).
COLOURS = np.array([[230, 25, 75], [60, 180, 75], [255, 225, 25], [0, 130, 200],
                    [245, 130, 48], [145, 30, 180], [70, 240, 240], [240, 50, 230],
                    [210, 245, 60], [0, 128, 128]], np.float64)


def _colour_records(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    labels = np.arange(n) % 10
    images = COLOURS[labels][:, None, None, :] + rng.normal(0, 20, (n, 32, 32, 3))
    return np.clip(np.rint(images), 0, 255).astype(np.uint8), labels


@pytest.fixture(scope="module")
def batches_dir(tmp_path_factory):
    """A cifar-10-batches-bin of colour-coded classes, in CIFAR-10's binary format."""
    d = tmp_path_factory.mktemp("cifar") / cifar10_input.BATCHES_DIR
    d.mkdir()
    for i, name in enumerate(cifar10_input.TRAIN_FILES + cifar10_input.EVAL_FILES):
        (d / name).write_bytes(generated_data.encode_records(*_colour_records(40, i)))
    return str(d)


def test_reader_decodes_the_bytes_written(tmp_path):
    rng = np.random.RandomState(0)
    raw = rng.randint(0, 256, (3, cifar10_input.RECORD_BYTES)).astype(np.uint8)
    path = tmp_path / "data.bin"
    path.write_bytes(raw.tobytes())
    ds = tf.data.FixedLengthRecordDataset([str(path)], cifar10_input.RECORD_BYTES)
    got = [(img.numpy(), lbl.numpy()) for img, lbl in ds.map(cifar10_input.read_cifar10)]
    assert len(got) == 3
    for (image, label), record in zip(got, raw):
        assert label.dtype == np.int32 and label.tolist() == [record[0]]
        np.testing.assert_array_equal(image, record[1:].reshape(3, 32, 32).transpose(1, 2, 0))
    # and the writer of the generated data writes that layout
    images, labels = _colour_records(2, 0)
    encoded = np.frombuffer(generated_data.encode_records(images, labels), np.uint8)
    np.testing.assert_array_equal(encoded.reshape(2, -1)[:, 0], labels)
    np.testing.assert_array_equal(encoded.reshape(2, -1)[1, 1:].reshape(3, 32, 32),
                                  images[1].transpose(2, 0, 1))


def test_missing_and_truncated_files_are_typed_errors(tmp_path, batches_dir):
    with pytest.raises(tf.errors.NotFoundError, match="data_batch_1.bin"):
        cifar10_input.distorted_dataset(str(tmp_path), 4, quiet=True)
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in cifar10_input.EVAL_FILES:
        data = open(os.path.join(batches_dir, name), "rb").read()
        (bad / name).write_bytes(data[:-100])
    with pytest.raises(tf.errors.DataLossError, match="test_batch.bin is .* not a whole number"):
        cifar10_input.eval_dataset(True, str(bad), 4)


def test_offline_data_dir_gets_generated_batches(tmp_path, capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(generated_data, "write_batches", calls.append)
    out = cifar10_input.locate_data(str(tmp_path))
    assert out == str(tmp_path / cifar10_input.GENERATED_DIR) and calls == [out]
    err = capsys.readouterr().err
    assert "CIFAR-10 is not available" in err and "data_batch_1.bin" in err


def _run_towers(devices, images, labels, init_values=None, steps=1):
    """Trains `steps` steps with len(devices) towers fed constant equal slices of `images`,
    from `init_values` (weights and their averages) or from a fresh initialization; returns
    (initial trainable values, final values of every variable)."""
    per_tower = images.shape[0] // len(devices)
    slices = iter(range(len(devices)))
    with tf.Graph().as_default():
        def next_batch():
            i = next(slices)
            return (tf.constant(images[i * per_tower:(i + 1) * per_tower]),
                    tf.constant(labels[i * per_tower:(i + 1) * per_tower]))

        train_op, _, _, _ = cifar10_multi_gpu_train.build_train_graph(next_batch, devices, 8)
        ops = v1.get_default_graph().get_operations()
        for i in range(len(devices)):  # each tower's ops on its device, the weights on CPU:0
            conv = [op for op in ops if op.name == f"tower_{i}/conv1/Conv2D"]
            assert len(conv) == 1 and conv[0].device.endswith(f"CPU:{i}"), conv[0].device
        variables = {v.op.name: v for v in v1.global_variables()}
        assert all(v.device.endswith("CPU:0") for v in variables.values())
        trainable = {v.op.name: v for v in v1.trainable_variables()}
        # One feed of all the weights and their averages (one plan, not one per variable).
        feeds = {n: v1.placeholder(v.dtype, v.shape) for n, v in trainable.items()}
        load = tf.group(*[variables[n + suffix].assign(p) for n, p in feeds.items()
                          for suffix in ("", "/ExponentialMovingAverage")])
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            if init_values is None:
                init_values = sess.run(trainable)
            else:
                sess.run(load, {feeds[n]: value for n, value in init_values.items()})
            for _ in range(steps):
                sess.run(train_op)
            return init_values, sess.run(variables)


def test_two_towers_equal_one_tower_with_the_doubled_batch(monkeypatch):
    """Towers on /cpu:0 and /cpu:1 (logical CPU devices) with batch 4 each, against one tower
    with batch 8 from the same weights: same updated weights, averages and step."""
    # the default convolution algorithms on both sides: batch 4 and batch 8 are shapes of
    # their own, each timed (kernels/autotune.py), and two algorithms (an FFT, oneDNN's
    # direct kernel) round differently: conv1's weights 7e-6 apart in one CI run of three.
    # Choices earlier tests made stand while tuning is off: forgotten first
    monkeypatch.setenv("TF_CUDNN_USE_AUTOTUNE", "0")
    autotune.clear()
    rng = np.random.RandomState(0)
    images = rng.standard_normal((8, 24, 24, 3)).astype(np.float32)
    labels = (np.arange(8) % 10).astype(np.int32)
    init, two = _run_towers(["/cpu:0", "/cpu:1"], images, labels)
    _, one = _run_towers(["/cpu:0"], images, labels, init)
    assert two.keys() == one.keys() and "conv1/weights/ExponentialMovingAverage" in two
    for name in one:
        np.testing.assert_allclose(two[name], one[name], rtol=2e-5, atol=2e-6, err_msg=name)
    assert not np.allclose(one["local3/weights"], init["local3/weights"])


def test_more_towers_than_devices_is_an_invalid_argument(monkeypatch):
    monkeypatch.setattr(device_config, "_logical", {})
    monkeypatch.setattr(device_config, "_initialized", True)  # too late to configure any
    monkeypatch.setattr(tf.config, "list_physical_devices",
                        lambda t=None: [device_config.PhysicalDevice("/physical_device:CPU:0",
                                                                     "CPU")] if t != "GPU" else [])
    assert cifar10_multi_gpu_train.tower_devices(1) == ["/cpu:0"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="--num_gpus=2 asks for 2 towers, "
                                                             "but only 1 CPU device"):
        cifar10_multi_gpu_train.tower_devices(2)


def test_downloaded_tarball_is_extracted(tmp_path, batches_dir):
    with tarfile.open(tmp_path / cifar10_input.TARBALL, "w:gz") as tar:
        tar.add(batches_dir, arcname=cifar10_input.BATCHES_DIR)
    out = cifar10_input.locate_data(str(tmp_path))
    assert out == str(tmp_path / cifar10_input.BATCHES_DIR)
    assert cifar10_input.check_files([os.path.join(out, f) for f in
                                      cifar10_input.TRAIN_FILES]) == 200
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / cifar10_input.TARBALL).write_bytes(b"not a tarball")
    with pytest.raises(tf.errors.DataLossError, match="Cannot extract"):
        cifar10_input.locate_data(str(broken))


@pytest.mark.slow  # ~2 s of plan compiles, summaries, graph.pbtxt and checkpoints: CI's slow pass
def test_training_lowers_the_loss_and_eval_reports_precision(batches_dir, tmp_path, capsys):
    """cifar10_train's graph and MonitoredTrainingSession loop for 20 steps of batch 8, then
    cifar10_eval restores the moving averages from its checkpoint."""
    data_dir = os.path.dirname(batches_dir)
    # The first loss is ~ln(10) + weight decay; SGD at 0.1 on batches of 8 is noisy and the
    # run is not seeded (input threads), so the mean of the last ten steps is 0.35-0.6 lower
    # in most runs but about one run in six barely moves or diverges: up to three runs must
    # show the drop (a trainer that does not learn fails all three).
    drops = []
    for attempt in range(3):
        train_dir = str(tmp_path / f"train{attempt}")
        logger = cifar10_train.main(["--max_steps", "20", "--batch_size", "8", "--train_dir",
                                     train_dir, "--data_dir", data_dir])
        losses = logger.losses
        assert len(losses) == 20 and np.all(np.isfinite(losses))
        drops.append(losses[0] - np.mean(losses[10:]))
        if drops[-1] > 0.15:
            break
    assert drops[-1] > 0.15, drops
    out = capsys.readouterr().out
    assert "step 0, loss = " in out and "step 10, loss = " in out and "examples/sec;" in out
    assert v1.train.latest_checkpoint(train_dir).endswith("model.ckpt-20")
    reader = tf.train.load_checkpoint(train_dir)
    assert reader.has_tensor("local3/weights/ExponentialMovingAverage")
    precision = cifar10_eval.main(["--run_once", "--checkpoint_dir", train_dir,
                                   "--eval_dir", str(tmp_path / "eval"), "--data_dir", data_dir,
                                   "--batch_size", "8", "--num_examples", "16"])
    assert 0.0 <= precision <= 1.0
    assert "precision @ 1 = " in capsys.readouterr().out


def _example(module: str, *args: str) -> str:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", f"ndflow.models.image.cifar10.{module}", *args],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_example_commands_offline(tmp_path):
    """The tutorial's three commands on a fresh data dir: generated data, training with
    MonitoredTrainingSession, two towers on logical CPUs, evaluation of the averages."""
    data, train = str(tmp_path / "data"), str(tmp_path / "train")
    out = _example("cifar10_train", "--max_steps", "12", "--batch_size", "16",
                   "--train_dir", train, "--data_dir", data)
    assert "CIFAR-10 is not available" in out and "step 10, loss = " in out
    assert "examples/sec" in out and v1.train.latest_checkpoint(train).endswith("-12")
    out = _example("cifar10_eval", "--run_once", "--checkpoint_dir", train, "--batch_size", "16",
                   "--eval_dir", str(tmp_path / "eval"), "--data_dir", data)
    assert "precision @ 1 = " in out


@pytest.mark.slow
def test_multi_gpu_command_on_two_logical_cpus(tmp_path):
    out = _example("cifar10_multi_gpu_train", "--num_gpus", "2", "--max_steps", "11",
                   "--batch_size", "16", "--train_dir", str(tmp_path / "multi"),
                   "--data_dir", str(tmp_path / "data"))
    assert "step 0, loss = " in out and "step 10, loss = " in out
    assert v1.train.latest_checkpoint(str(tmp_path / "multi")).endswith("model.ckpt-10")

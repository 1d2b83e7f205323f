"""Data-parallel training with ndflow's horovod API, for real: two worker processes on loopback
(started by `python -m ndflow.distribute.run -np 2`) train the MNIST example's model and end
with identical weights, equal to one process trained on the concatenated batches to float
rounding — eagerly-built tf.function steps with DistributedGradientTape, TF1 Sessions with
DistributedOptimizer + broadcast_global_variables, and Keras' LossScaleOptimizer under
DistributedOptimizer and TF1's MixedPrecisionLossScaleOptimizer around DistributedOptimizer,
where an overflow on one worker only makes both skip the step, and Keras fit with
BroadcastGlobalVariablesCallback.
Plus single-process checks of the API (fast)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
import ndflow.distribute.horovod as hvd
from ndflow.core.errors import UnimplementedError

WORKER = Path(__file__).resolve().parent / "workers" / "mnist_hvd_worker.py"
ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "ndflow" / "distribute" / "run.py"


def _train(mode: str, tmp_path: Path) -> tuple[list[dict], dict]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TF_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    # every process convolves with the same algorithm: the autotuner's choice rests on timings,
    # which differ between processes on a loaded machine, and an FFT convolution rounds
    # differently from a direct one (1e-4 apart after a few steps)
    env["TF_CUDNN_USE_AUTOTUNE"] = "0"
    (tmp_path / "two").mkdir()
    (tmp_path / "one").mkdir()
    # `-m ndflow.distribute.run` once; else the launcher as a file (it imports no ndflow,
    # which saves an interpreter's import of the whole library per test)
    launcher = ["-m", "ndflow.distribute.run"] if mode == "tf2" else [str(LAUNCHER)]
    two = subprocess.Popen([sys.executable, *launcher, "-np", "2",
                            sys.executable, str(WORKER), mode, str(tmp_path / "two")],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    one = subprocess.Popen([sys.executable, str(WORKER), mode, str(tmp_path / "one")], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out_two, _ = two.communicate(timeout=110)
    out_one, _ = one.communicate(timeout=110)
    assert two.returncode == 0, out_two[-3000:]
    assert one.returncode == 0, out_one[-3000:]
    assert "[0]<stdout>:done rank 0 of 2" in out_two and "[1]<stdout>:done rank 1 of 2" in out_two
    workers = [dict(np.load(tmp_path / "two" / f"rank{r}.npz")) for r in (0, 1)]
    return workers, dict(np.load(tmp_path / "one" / "rank0.npz"))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["tf2", "tf1", "keras_lso", "tf1_lso", "keras_fit"])
def test_two_workers_train_as_one_process_on_the_whole_batch(mode, tmp_path):
    (w0, w1), single = _train(mode, tmp_path)
    assert sorted(w0) == sorted(single)
    for name in w0:
        np.testing.assert_array_equal(w0[name], w1[name], err_msg=name)  # identical weights
        np.testing.assert_allclose(w0[name], single[name], rtol=1e-5, atol=1e-6, err_msg=name)
    if mode == "keras_lso":  # the overflow on worker 1 skipped step 1 on both workers
        assert float(w0["loss_scale"]) == 2.0 ** 9 and int(w0["iterations"]) == 3
    if mode == "tf1_lso":  # dynamic scale 2**15 halved once by the skipped step
        assert float(w0["loss_scale"]) == 2.0 ** 14


def test_single_process_api():
    hvd.init()
    assert (hvd.rank(), hvd.size(), hvd.local_rank(), hvd.local_size()) == (0, 1, 0, 1)
    x = tf.constant([1.0, -2.0])
    np.testing.assert_array_equal(hvd.allreduce(x).numpy(), [1.0, -2.0])
    np.testing.assert_array_equal(hvd.allreduce(x, op=hvd.Sum, postscale_factor=3.0).numpy(),
                                  [3.0, -6.0])
    np.testing.assert_array_equal(hvd.broadcast(x, 0).numpy(), [1.0, -2.0])
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * v)
    grads = hvd.DistributedGradientTape(tape).gradient(loss, [v])
    np.testing.assert_array_equal(grads[0].numpy(), [2.0, 4.0])
    assert hvd.callbacks.BroadcastGlobalVariablesCallback is hvd.BroadcastGlobalVariablesCallback


def test_bad_arguments():
    hvd.init()
    with pytest.raises(ValueError, match="op parameter supersedes average"):
        hvd.allreduce(tf.constant(1.0), average=True, op=hvd.Sum)
    with pytest.raises(UnimplementedError, match="Adasum"):
        hvd.allreduce(tf.constant(1.0), op=hvd.Adasum)
    with pytest.raises(ValueError, match="root_rank 3 is not a rank of the 1 workers"):
        hvd.broadcast(tf.constant(1.0), 3)
    with pytest.raises(RuntimeError, match="does not support eager execution"):
        hvd.broadcast_global_variables(0)
    with pytest.raises(ValueError, match="takes a tf.compat.v1.train.Optimizer or a Keras"):
        hvd.DistributedOptimizer(object())
    sgd = tf.keras.optimizers.SGD(0.1)
    with pytest.raises(ValueError, match="Wrap the loss-scale optimizer, not the reverse"):
        hvd.DistributedOptimizer(tf.keras.mixed_precision.LossScaleOptimizer(
            hvd.DistributedOptimizer(sgd)))


def test_tf1_session_graph_holds_collective_ops():
    hvd.init()
    with tf.Graph().as_default() as g:
        v = tf.compat.v1.get_variable("w", initializer=tf.constant([[1.0, 2.0]]))
        b = tf.compat.v1.get_variable("b", initializer=tf.constant([3.0]))
        loss = tf.reduce_sum(v * v) + tf.reduce_sum(b)
        train = hvd.DistributedOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(0.5)).minimize(loss)
        bcast = hvd.broadcast_global_variables(0)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(bcast)
            sess.run(train)
            np.testing.assert_allclose(sess.run(v), [[0.0, 0.0]])
    # one process: the all-reduce is the identity and adds no collective op
    assert not [op for op in g.get_operations() if op.type == "CollectiveReduceV2"]

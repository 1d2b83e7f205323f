"""MultiWorkerMirroredStrategy: two worker processes on loopback (TF_CONFIG), gloo
collectives. Both a custom loop (strategy.run + a Keras optimizer inside tf.function) and
Keras `fit` under the scope end with identical weights on both workers, equal to one process
trained on the whole (concatenated) batches; workers that start from different initial
values are given worker 0's; only the chief writes the checkpoint; a variable shaped
differently on the two workers is an InvalidArgumentError on both."""

import json
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ndflow as tf

WORKER = textwrap.dedent('''
    import json, os, sys
    import numpy as np
    import ndflow as tf

    out = sys.argv[1]
    rank = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    assert strategy.num_replicas_in_sync == 2, strategy.num_replicas_in_sync
    data = np.load(os.path.join(out, "data.npz"))
    x, y = data["x"], data["y"]

    # custom loop: each worker starts from different values; worker 0's win
    with strategy.scope():
        w = tf.Variable(np.full([3, 1], 1.0 + rank, np.float32))
        opt = tf.keras.optimizers.SGD(0.1)

    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((tf.matmul(xb, w) - yb) ** 2) / 8.0
        grads = tape.gradient(loss, [w])
        opt.apply_gradients(zip(grads, [w]))
        return loss

    @tf.function
    def train_step(batch):
        return strategy.reduce("SUM", strategy.run(step, args=batch), axis=None)

    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat(2)
    losses = [float(train_step(b).numpy()) for b in strategy.experimental_distribute_dataset(ds)]

    # Keras fit under the scope: different initial weights, broadcast at fit
    tf.keras.utils.set_random_seed(rank)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, "relu"),
                                     tf.keras.layers.Dense(1)])
        model.compile(tf.keras.optimizers.Adam(0.01), "mse")
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)

    # a variable whose shape differs between the workers: an error on both, not a hang
    try:
        with strategy.scope():
            tf.Variable(np.zeros([2 + rank], np.float32), name="mismatched")
        mismatch = "no error"
    except tf.errors.InvalidArgumentError as e:
        mismatch = str(e)

    ckpt_dir = os.path.join(out, f"ckpt_{rank}")
    if strategy.extended.should_checkpoint:
        tf.train.Checkpoint(w=w).save(os.path.join(ckpt_dir, "ckpt"))
    np.savez(os.path.join(out, f"result_{rank}.npz"), w=w.numpy(), losses=np.array(losses),
             mismatch=np.array(mismatch),
             **{f"keras_{i}": v for i, v in enumerate(model.get_weights())})
''')


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _keras_reference(x, y):
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, "relu"),
                                 tf.keras.layers.Dense(1)])
    model.compile(tf.keras.optimizers.Adam(0.01), "mse")
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    return model.get_weights()


@pytest.mark.slow
def test_two_workers_equal_one_process(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.randn(16, 3).astype(np.float32)
    y = rng.randn(16, 1).astype(np.float32)
    np.savez(tmp_path / "data.npz", x=x, y=y)
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    ports = _free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = []
    for rank in range(2):
        env = dict(os.environ, TF_CONFIG=json.dumps(
            {"cluster": cluster, "task": {"type": "worker", "index": rank}}))
        env.pop("WORLD_SIZE", None)
        procs.append(subprocess.Popen([sys.executable, str(script), str(tmp_path)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outputs = [p.communicate(timeout=120)[0].decode() for p in procs]
    for p, text in zip(procs, outputs):
        assert p.returncode == 0, text[-3000:]
    results = [np.load(tmp_path / f"result_{r}.npz") for r in range(2)]

    # custom loop: SGD on the mean squared error of the 8-row global batches, from ones
    w = np.ones([3, 1], np.float32)
    ref_losses = []
    for _ in range(2):
        for start in (0, 8):
            xb, yb = x[start:start + 8], y[start:start + 8]
            err = xb @ w - yb
            ref_losses.append(float(np.sum(err ** 2) / 8))
            w = w - 0.1 * 2 * xb.T @ err / 8
    for r in results:
        np.testing.assert_allclose(r["w"], w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(r["losses"], ref_losses, rtol=1e-5)
    np.testing.assert_array_equal(results[0]["w"], results[1]["w"])

    reference = _keras_reference(x, y)
    for i, ref in enumerate(reference):
        a, b = results[0][f"keras_{i}"], results[1][f"keras_{i}"]
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, ref, rtol=1e-5, atol=1e-6)

    assert os.listdir(tmp_path / "ckpt_0") and not (tmp_path / "ckpt_1").exists()
    for r in results:
        message = str(r["mismatch"])
        assert "mismatched:0" in message and "[2]" in message and "[3]" in message, message


def test_one_worker_without_cluster(monkeypatch):
    from ndflow.distribute import collective

    for name in ("TF_CONFIG", "WORLD_SIZE", "RANK"):
        monkeypatch.delenv(name, raising=False)
    try:
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        assert strategy.num_replicas_in_sync == 1
        assert strategy.extended.should_checkpoint
        with strategy.scope():
            v = tf.Variable([1.0, 2.0])
        out = strategy.run(lambda: v * 2.0)
        np.testing.assert_allclose(strategy.reduce("SUM", out, axis=None).numpy(), [2.0, 4.0])
    finally:
        collective.shutdown()


def test_inconsistent_tf_config(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps(
        {"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]},
         "task": {"type": "worker", "index": 5}}))
    with pytest.raises(ValueError, match="index"):
        tf.distribute.MultiWorkerMirroredStrategy()

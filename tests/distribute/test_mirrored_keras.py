"""Keras `fit` of a model compiled under MirroredStrategy(2 logical CPUs).scope(): each batch
split over the replicas, the towers' gradients summed, equal to one device with the global
batch (weights, loss and accuracy), including uneven and empty parts."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.runtime import device_config


@pytest.fixture
def strategy(monkeypatch):
    cpu = tf.config.list_physical_devices("CPU")[0]
    monkeypatch.setitem(device_config._logical, cpu,
                        [tf.config.LogicalDeviceConfiguration()] * 2)
    return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def _model(run_eagerly):
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([tf.keras.Input((4,)),
                                 tf.keras.layers.Dense(8, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], run_eagerly=run_eagerly)
    return model


def test_fit_under_scope_equals_single_device(strategy):
    # eager steps (fast); uneven parts: batches of 5 split 3 + 2
    _check_fit(strategy, samples=10, batch_size=5, epochs=1, run_eagerly=True)


@pytest.mark.slow
@pytest.mark.parametrize("batch_size,epochs", [(8, 2), (7, 1), (1, 1)])
def test_traced_fit_under_scope_equals_single_device(strategy, batch_size, epochs):
    # tf.function steps; batch 1 leaves replica 1 an empty part
    _check_fit(strategy, 20, batch_size, epochs, run_eagerly=False)


def _check_fit(strategy, samples, batch_size, epochs, run_eagerly):
    rng = np.random.RandomState(0)
    x = rng.randn(samples, 4).astype(np.float32)
    y = rng.randint(0, 3, samples)
    with strategy.scope():
        mirrored = _model(run_eagerly)
    assert mirrored.distribute_strategy is strategy
    single = _model(run_eagerly)
    h_mirrored = mirrored.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0,
                              shuffle=False).history
    h_single = single.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0,
                          shuffle=False).history
    np.testing.assert_allclose(h_mirrored["loss"], h_single["loss"], rtol=1e-5)
    np.testing.assert_allclose(h_mirrored["accuracy"], h_single["accuracy"])
    for a, b in zip(mirrored.get_weights(), single.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert int(mirrored.optimizer.iterations.numpy()) == int(single.optimizer.iterations.numpy())


def test_step_holds_a_tower_per_device(strategy):
    from ndflow.keras.replica_towers import tower_slices

    x = tf.constant(np.arange(10, dtype=np.float32).reshape(5, 2))
    parts = tower_slices((x, None), 2)
    assert [p[0][0].numpy()[:, 0].tolist() for p in parts] == [[0, 2, 4], [6, 8]]
    assert parts[1][0][1] is None

"""Keras fit/evaluate/predict fed by tf.data datasets, as Keras 3: the same history as the
same arrays unshuffled, validation datasets, steps_per_epoch on a repeated dataset (and
Keras' warning when the data runs out), sample weights and class weights in datasets."""

import warnings

import numpy as np
import pytest
import torch

import ndflow as tf

D = tf.data.Dataset
RNG = np.random.default_rng(0)
X = RNG.normal(size=(64, 4)).astype(np.float32)
Y = (X.sum(axis=1) > 0).astype(np.float32)[:, None]


def model():
    tf.keras.utils.set_random_seed(1)
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="relu"),
                             tf.keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="binary_crossentropy",
              metrics=["accuracy"])
    return m


def assert_same_history(a, b):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-6)


def test_fit_on_a_dataset_equals_fit_on_the_arrays():
    arrays = model().fit(X, Y, batch_size=16, epochs=3, shuffle=False, verbose=0,
                         validation_data=(X[:16], Y[:16])).history
    m = model()
    ds = D.from_tensor_slices((X, Y)).batch(16).prefetch(tf.data.AUTOTUNE)
    val = D.from_tensor_slices((X[:16], Y[:16])).batch(8)
    threads = torch.get_num_threads()
    history = m.fit(ds, epochs=3, verbose=0, validation_data=val).history
    assert torch.get_num_threads() == threads  # the core left to the pipeline is given back
    assert_same_history(arrays, history)
    assert len(history["loss"]) == 3
    reference = model()
    reference.fit(X, Y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    np.testing.assert_allclose(m.evaluate(ds, verbose=0),
                               reference.evaluate(X, Y, batch_size=16, verbose=0), rtol=1e-5)
    np.testing.assert_allclose(m.predict(ds, verbose=0), reference.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.predict(ds.map(lambda x, y: x), verbose=0),
                               reference.predict(X, verbose=0), rtol=1e-5, atol=1e-6)


def test_steps_per_epoch_on_a_repeated_dataset():
    arrays = model().fit(X, Y, batch_size=16, epochs=3, shuffle=False, verbose=0).history
    repeated = D.from_tensor_slices((X, Y)).repeat().batch(16)
    history = model().fit(repeated, steps_per_epoch=4, epochs=3, verbose=0).history
    assert_same_history(arrays, history)
    # two half epochs go through the data once: the second continues where the first stopped
    halves, whole = model(), model()
    halves.fit(repeated, steps_per_epoch=2, epochs=2, verbose=0)
    whole.fit(X, Y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(halves.get_weights(), whole.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_running_out_of_data_warns_as_keras():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model().fit(D.from_tensor_slices((X, Y)).batch(16), steps_per_epoch=6, epochs=2,
                    verbose=0)
    messages = [str(w.message) for w in caught if "ran out of data" in str(w.message)]
    assert len(messages) == 2
    assert "You may need to use the `.repeat()` function" in messages[0]


def test_sample_weights_and_class_weights_in_datasets():
    weights = np.where(Y[:, 0] > 0, 2.0, 1.0).astype(np.float32)
    with_sw = model().fit(D.from_tensor_slices((X, Y, weights)).batch(16), epochs=2,
                          verbose=0).history
    arrays = model().fit(X, Y, sample_weight=weights, batch_size=16, epochs=2, shuffle=False,
                         verbose=0).history
    assert_same_history(arrays, with_sw)
    with_cw = model().fit(D.from_tensor_slices((X, Y)).batch(16), epochs=2, verbose=0,
                          class_weight={0: 1.0, 1: 2.0}).history
    assert_same_history(arrays, with_cw)


def test_dataset_with_targets_passed_separately_is_kerass_error():
    with pytest.raises(ValueError, match="`y` should not be passed"):
        model().fit(D.from_tensor_slices(X).batch(8), Y, verbose=0)

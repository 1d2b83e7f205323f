"""Keras models and optimizers in `tf.train.Checkpoint`s, with the keys Keras 3 under
TensorFlow 2.21 writes (fixture: tests/fixtures/checkpoints/keras, generate.py beside)."""

import os

import numpy as np
import pytest

import ndflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "checkpoints")
TF_KERAS_CKPT = os.path.join(FIXTURES, "keras", "dense")
X = np.arange(6, dtype=np.float32).reshape(2, 3)
keras = tf.keras


def _model(with_input=True):
    layers = [keras.layers.Dense(4), keras.layers.Dense(2)]
    return keras.Sequential(([keras.Input((3,))] if with_input else []) + layers)


def test_restores_keras_checkpoint_written_by_tensorflow():
    model = _model()
    tf.train.Checkpoint(model=model).restore(TF_KERAS_CKPT).assert_consumed()
    np.testing.assert_allclose(model(X).numpy(), np.load(TF_KERAS_CKPT + "_expected.npy"),
                               rtol=1e-5, atol=1e-6)


def test_unbuilt_model_is_restored_when_built():
    model = _model(with_input=False)
    status = tf.train.Checkpoint(model=model).restore(TF_KERAS_CKPT)
    with pytest.raises(AssertionError, match=r"\(root\)\.model\._functional\._operations\.1"
                                             r"\._kernel"):
        status.assert_consumed()
    out = model(X).numpy()  # the first call builds the layers: values restored then
    status.assert_consumed()
    np.testing.assert_allclose(out, np.load(TF_KERAS_CKPT + "_expected.npy"), rtol=1e-5,
                               atol=1e-6)


def test_writes_the_keys_tensorflow_writes(tmp_path):
    path = tf.train.Checkpoint(model=_model()).write(str(tmp_path / "k"))
    assert tf.train.list_variables(path) == tf.train.list_variables(TF_KERAS_CKPT)


def test_functional_and_subclassed_keys(tmp_path):
    inputs = keras.Input((8, 8, 1))
    y = keras.layers.Conv2D(2, 3)(inputs)
    y = keras.layers.Dense(3)(keras.layers.Flatten()(y))
    functional = keras.Model(inputs, keras.layers.LayerNormalization()(y))

    class Sub(keras.Model):
        def __init__(self):
            super().__init__()
            self.d1 = keras.layers.Dense(3)
            self.emb = keras.layers.Embedding(5, 2)

        def call(self, x):
            return self.d1(self.emb(x))

    sub = Sub()
    sub(np.zeros((1, 2), np.int32))
    path = tf.train.Checkpoint(f=functional, s=sub).write(str(tmp_path / "m"))
    keys = {k for k, _ in tf.train.list_variables(path)}
    want = {"f/_operations/1/_kernel", "f/_operations/1/bias", "f/_operations/3/_kernel",
            "f/_operations/3/bias", "f/_operations/4/gamma", "f/_operations/4/beta",
            "s/d1/_kernel", "s/d1/bias", "s/emb/_embeddings"}  # Keras 3 names under TF 2.21
    assert keys == {k + "/.ATTRIBUTES/VARIABLE_VALUE" for k in want} | \
        {"_CHECKPOINTABLE_OBJECT_GRAPH"}


def test_optimizer_slots_round_trip_and_deferred(tmp_path):
    model = _model()
    model.compile(keras.optimizers.Adam(0.1), "mse")
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
    path = tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(str(tmp_path / "o"))
    keys = dict(tf.train.list_variables(path))
    assert keys["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"] == []
    assert keys["optimizer/_variables/2/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 4]  # m of kernel
    saved_m = tf.train.load_variable(path, "optimizer/_variables/2/.ATTRIBUTES/VARIABLE_VALUE")

    fresh = _model()
    optimizer = keras.optimizers.Adam(0.1)
    status = tf.train.Checkpoint(model=fresh, optimizer=optimizer).restore(path)
    assert int(optimizer.iterations.numpy()) == 1
    zeros = [np.zeros(v.shape, np.float32) for v in fresh.trainable_variables]
    optimizer.apply_gradients(zip(zeros, fresh.trainable_variables))  # builds the slots
    status.assert_consumed()
    np.testing.assert_allclose(optimizer._variables[2].numpy(), 0.9 * saved_m, rtol=1e-6)


def test_restoring_another_models_checkpoint_names_the_mismatch(tmp_path):
    other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(5)])
    with pytest.raises(ValueError, match=r"incompatible tensor with shape \(3, 4\).*shape "
                                         r"\(3, 5\)"):
        tf.train.Checkpoint(model=other).read(TF_KERAS_CKPT)
    smaller = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)])
    status = tf.train.Checkpoint(model=smaller).read(TF_KERAS_CKPT)
    with pytest.raises(AssertionError, match=r"\(root\)\.model\._functional\._operations\.2"):
        status.assert_consumed()
    status.assert_existing_objects_matched()


def test_loss_scale_optimizer_keys_as_keras_3(tmp_path):
    def compiled():
        model = _model()
        optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(0.01))
        model.compile(optimizer, "mse")
        return model, optimizer

    model, optimizer = compiled()
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).write(str(tmp_path / "l"))
    keys = [k.replace("/.ATTRIBUTES/VARIABLE_VALUE", "")
            for k, _ in tf.train.list_variables(path)]
    # what Keras 3.15 under TensorFlow 2.21 writes for this model and optimizer (the model's
    # variables are first reached through the optimizer's list, so they are keyed there)
    assert keys == ["_CHECKPOINTABLE_OBJECT_GRAPH", "optimizer/_iterations",
                    "optimizer/_learning_rate"] + \
        [f"optimizer/_trainable_variables/{i}" for i in range(4)] + \
        ["optimizer/dynamic_scale", "optimizer/inner_optimizer/_iterations",
         "optimizer/inner_optimizer/_learning_rate"] + \
        [f"optimizer/inner_optimizer/_variables/{i}" for i in range(2, 10)] + \
        ["optimizer/step_counter"]
    fresh, fresh_optimizer = compiled()
    status = tf.train.Checkpoint(model=fresh, optimizer=fresh_optimizer).restore(path)
    fresh.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
    status.assert_consumed()  # the inner optimizer's slots were restored when it was built
    assert int(fresh_optimizer.iterations.numpy()) == 2

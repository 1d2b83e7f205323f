"""Keras training: compile/fit/evaluate/predict against Keras 3's own results for fixed
weights and data (tests/fixtures/keras_models), the callback order Keras uses, weights,
custom train_step (the GAN pattern), mixed precision, errors that leave the model usable."""

import json
import pathlib

import numpy as np
import pytest

import ndflow as tf

keras = tf.keras
layers = keras.layers
FIXTURES = pathlib.Path(__file__).parent.parent / "fixtures" / "keras_models"
KERAS = json.loads((FIXTURES / "keras_models.json").read_text())
A = np.load(FIXTURES / "keras_models.npz")
RNG = np.random.default_rng(5)


def _fitted_model():
    model = keras.Sequential([keras.Input((3,)), layers.Dense(4, activation="relu", name="d1"),
                              layers.Dense(1, activation="sigmoid", name="d2")], name="fitted")
    model.set_weights([A[f"fit_init{i}"] for i in range(4)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="binary_crossentropy",
                  metrics=["accuracy"])
    return model


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_fit_evaluate_predict_match_keras(run_eagerly):
    model = _fitted_model()
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="binary_crossentropy",
                  metrics=["accuracy"], run_eagerly=run_eagerly)
    history = model.fit(A["fit_x"], A["fit_y"], batch_size=6, epochs=3, shuffle=False,
                        sample_weight=A["fit_sw"], validation_data=(A["fit_xv"], A["fit_yv"]),
                        verbose=0)
    assert sorted(history.history) == sorted(KERAS["fit_history"])
    for key, values in KERAS["fit_history"].items():
        np.testing.assert_allclose(history.history[key], values, rtol=2e-6, err_msg=key)
    assert history.epoch == [0, 1, 2]
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_allclose(w, A[f"fit_final{i}"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.evaluate(A["fit_xv"], A["fit_yv"], batch_size=4,
                                              verbose=0), KERAS["fit_evaluate"], rtol=2e-6)
    assert model.metrics_names == KERAS["fit_metrics_names"]
    np.testing.assert_allclose(model.predict(A["fit_xv"], batch_size=3, verbose=0),
                               A["fit_predict"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.train_on_batch(A["fit_x"][:5], A["fit_y"][:5]),
                               KERAS["train_on_batch"], rtol=2e-6)


def test_callbacks_fire_in_keras_order():
    calls = []

    class Recorder(keras.callbacks.Callback):
        def __getattribute__(self, name):
            if name.startswith("on_"):
                return lambda *args, **kw: calls.append(
                    [name] + [a for a in args if isinstance(a, int)])
            return super().__getattribute__(name)

    model = keras.Sequential([keras.Input((3,)), layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = A["fit_x"][:8], A["fit_y"][:8]
    model.fit(x, y, batch_size=4, epochs=2, validation_data=(A["fit_xv"][:4], A["fit_yv"][:4]),
              callbacks=[Recorder()], verbose=0)
    assert calls == KERAS["fit_calls"]
    calls.clear()
    model.evaluate(x, y, batch_size=4, callbacks=[Recorder()], verbose=0)
    assert calls == KERAS["evaluate_calls"]
    calls.clear()
    model.predict(x, batch_size=4, callbacks=[Recorder()], verbose=0)
    assert calls == KERAS["predict_calls"]


def test_class_weight_is_sample_weight_by_label():
    x = RNG.normal(size=(12, 3)).astype(np.float32)
    y = np.array([0, 1, 2] * 4)
    weights = {0: 1.0, 1: 3.0, 2: 0.5}
    losses = []
    for kwargs in ({"class_weight": weights},
                   {"sample_weight": np.array([weights[c] for c in y], np.float32)}):
        model = keras.Sequential([keras.Input((3,)), layers.Dense(3, kernel_initializer="ones")])
        model.compile(keras.optimizers.SGD(0.5), keras.losses.SparseCategoricalCrossentropy(
            from_logits=True))
        losses.append(model.fit(x, y, batch_size=12, epochs=2, shuffle=False, verbose=0,
                                **kwargs).history["loss"])
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-6)


def test_custom_train_step_gan_pattern():
    """A model overriding train_step with two optimizers, as the Keras GAN guide does."""
    class GAN(keras.Model):
        def __init__(self):
            super().__init__()
            self.generator = keras.Sequential([keras.Input((2,)), layers.Dense(4)])
            self.discriminator = keras.Sequential([keras.Input((4,)), layers.Dense(1)])
            self.d_loss_tracker = keras.metrics.Mean(name="d_loss")

        def compile(self, d_optimizer, g_optimizer):
            super().compile()
            self.d_optimizer, self.g_optimizer = d_optimizer, g_optimizer
            self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

        @property
        def metrics(self):
            return [self.d_loss_tracker]

        def train_step(self, real):
            noise = tf.random.normal((tf.shape(real)[0], 2))
            with tf.GradientTape() as tape:
                fake = self.generator(noise)
                logits = self.discriminator(tf.concat([real, fake], 0))
                labels = tf.concat([tf.ones((tf.shape(real)[0], 1)),
                                    tf.zeros((tf.shape(real)[0], 1))], 0)
                d_loss = self.loss_fn(labels, logits)
            grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
            self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
            with tf.GradientTape() as tape:
                g_loss = self.loss_fn(tf.ones((tf.shape(real)[0], 1)),
                                      self.discriminator(self.generator(noise)))
            grads = tape.gradient(g_loss, self.generator.trainable_weights)
            self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
            self.d_loss_tracker.update_state(d_loss)
            return {"d_loss": self.d_loss_tracker.result(), "g_loss": g_loss}

    gan = GAN()
    gan.compile(keras.optimizers.Adam(1e-2), keras.optimizers.Adam(1e-2))
    g_before, d_before = gan.generator.get_weights(), gan.discriminator.get_weights()
    history = gan.fit(RNG.normal(size=(32, 4)).astype(np.float32), batch_size=8, epochs=2,
                      verbose=0)
    assert sorted(history.history) == ["d_loss", "g_loss"] and len(history.history["d_loss"]) == 2
    assert all(np.isfinite(history.history["g_loss"]))
    assert not np.allclose(gan.generator.get_weights()[0], g_before[0])
    assert not np.allclose(gan.discriminator.get_weights()[0], d_before[0])


def test_mixed_float16_fit_wraps_optimizer_and_trains():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = keras.Sequential([keras.Input((4,)), layers.Dense(8, activation="relu"),
                                  layers.Dense(2), layers.Activation("linear", dtype="float32")])
        model.compile(keras.optimizers.SGD(0.1), "mse")
        assert isinstance(model.optimizer, keras.mixed_precision.LossScaleOptimizer)
        x = RNG.normal(size=(64, 4)).astype(np.float32)
        y = x[:, :2] * 0.5
        losses = model.fit(x, y, batch_size=16, epochs=4, verbose=0).history["loss"]
        assert model.layers[0].kernel.dtype == tf.float32
        assert losses[-1] < losses[0]
        assert model.predict(x, verbose=0).dtype == np.float32
    finally:
        keras.mixed_precision.set_global_policy("float32")


def test_generators_and_validation_split():
    model = keras.Sequential([keras.Input((3,)), layers.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae"])
    x, y = RNG.normal(size=(40, 3)).astype(np.float32), RNG.normal(size=(40, 1))

    def batches():
        while True:
            for i in range(0, 40, 10):
                yield x[i:i + 10], y[i:i + 10]

    h = model.fit(batches(), steps_per_epoch=4, epochs=2, verbose=0)
    assert len(h.history["loss"]) == 2 and "mae" in h.history
    h = model.fit(x, y, validation_split=0.25, epochs=1, verbose=0)
    assert set(h.history) == {"loss", "mae", "val_loss", "val_mae"}
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert set(logs) == {"loss", "mae"}
    np.testing.assert_allclose(logs["mae"], np.abs(model.predict(x, verbose=0) - y).mean(),
                               rtol=1e-5)


def test_bad_input_errors_leave_model_usable():
    model = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    x, y = np.ones((4, 3), np.float32), np.zeros(4)
    with pytest.raises(ValueError, match=r"You must call `compile\(\)` before calling `fit\(\)`"):
        model.fit(x, y)
    with pytest.raises(ValueError, match="Could not interpret loss identifier: nope"):
        model.compile("sgd", "nope")
        model.fit(x, y, verbose=0)
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        model.compile("sgdd", "mse")
    with pytest.raises(ValueError, match="Could not interpret metric identifier"):
        model.compile("sgd", "mse", metrics=["accurasy"])
        model.fit(x, np.zeros((4, 2)), verbose=0)
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="Data cardinality is ambiguous"):
        model.fit(x, np.zeros((5, 2)), verbose=0)
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        model.fit(np.ones((4, 5), np.float32), np.zeros((4, 2)), verbose=0)
    with pytest.raises(ValueError, match="validation_split"):
        model.fit(x, np.zeros((4, 2)), validation_split=0.99, verbose=0)
    h = model.fit(x, np.zeros((4, 2)), verbose=0)  # still usable
    assert len(h.history["loss"]) == 1


def test_terminate_on_nan_stops_training(capsys):
    model = keras.Sequential([keras.Input((1,)), layers.Dense(1, kernel_initializer="ones")])
    model.compile(keras.optimizers.SGD(1e30), "mse")
    x = np.full((8, 1), 1e10, np.float32)
    h = model.fit(x, -x, batch_size=2, epochs=5, verbose=0,
                  callbacks=[keras.callbacks.TerminateOnNaN()])
    assert len(h.history["loss"]) == 1 and model.stop_training
    assert "Invalid loss, terminating training" in capsys.readouterr().out


def test_labels_out_of_range_and_wrong_dtypes():
    model = keras.Sequential([keras.Input((3,)), layers.Dense(4)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.ones((4, 3), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Received a label value of 7 which is outside the valid range "
                             r"of \[0, 4\)"):
        model.fit(x, np.array([0, 1, 2, 7]), shuffle=False, verbose=0)
    with pytest.raises(ValueError, match="Invalid dtype: str32"):
        model.fit(np.array([["a", "b", "c"]] * 4), np.array([0, 1, 2, 3]), verbose=0)
    assert np.isfinite(model.fit(x, np.array([0, 1, 2, 3]), verbose=0).history["loss"][0])

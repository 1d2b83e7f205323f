"""What Keras 3's TF trainer does with `tf.data` input and Python lists, as TF 2.21 did in
tests/fixtures/customization_data_tutorials: a Sequential model fitted on a dataset is built
for the dataset's element_spec (None batch dimension: what `model.export` then serves); a
compiled train function ends each epoch on a dataset of unknown size with one more call on the
exhausted iterator, which still counts an optimizer step and advances the step's seed
generators (a Dropout's); a Python list of strings is not data (the Load text tutorial's
`model.predict([...])`)."""

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = json.loads((Path(__file__).resolve().parent.parent / "fixtures" /
                      "customization_data_tutorials" / "fixture.json").read_text())


def test_sequential_fitted_on_dataset_is_built_for_its_element_spec():
    tf.keras.utils.set_random_seed(0)
    data = tf.data.Dataset.from_tensor_slices((tf.zeros([4, 3]), tf.zeros([4, 2]))).batch(2)
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    model.compile(loss="mse")
    model.fit(data, verbose=0)
    assert [list(model.inputs[0].shape)] == FIXTURE["fit_dataset_inputs"]


class Steps(tf.keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        self.seen.append(int(self.model.optimizer.iterations.numpy()))

    def on_epoch_end(self, epoch, logs=None):
        self.seen.append(["end", int(self.model.optimizer.iterations.numpy())])


@pytest.mark.parametrize("name", ["unknown", "known"])
@pytest.mark.parametrize("run_eagerly", [False, True])
def test_optimizer_steps_on_a_dataset_of_unknown_size(name, run_eagerly):
    ds = tf.data.Dataset.range(10)
    if name == "unknown":
        ds = ds.filter(lambda x: x < 100)
    ds = ds.map(lambda x: (tf.cast([x], tf.float32), tf.cast(x, tf.float32))).batch(4)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer="adam", run_eagerly=run_eagerly)
    steps = Steps()
    steps.seen = []
    model.fit(ds, epochs=2, verbose=0, callbacks=[steps])
    assert steps.seen == FIXTURE["unknown_size_steps"][f"{name} eager={run_eagerly}"]


class Losses(tf.keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        self.seen.append(float(logs["loss"]))


def test_exhausted_call_advances_dropout_seed_generators():
    # without it the dropout masks of the second epoch on differ from TF's
    tf.keras.utils.set_random_seed(0)
    ds = tf.data.Dataset.range(10).filter(lambda x: x < 100).map(
        lambda x: (tf.cast([x], tf.float32), tf.cast(x, tf.float32))).batch(4)
    model = tf.keras.Sequential([tf.keras.layers.Dense(3), tf.keras.layers.Dropout(0.5),
                                 tf.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer="adam")
    losses = Losses()
    losses.seen = []
    model.fit(ds, epochs=3, verbose=0, callbacks=[losses])
    np.testing.assert_allclose(losses.seen, FIXTURE["unknown_size_dropout_losses"], rtol=1e-5)


@pytest.mark.parametrize("index,x", [(0, ["ab"]), (1, ("ab", "cd"))])
def test_predict_on_a_list_of_strings_is_unrecognized(index, x):
    kind, message = FIXTURE["predict_list"][index]
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    with pytest.raises(ValueError) as caught:
        model.predict(x, verbose=0)
    assert type(caught.value).__name__ == kind
    assert str(caught.value) == message

"""compile()'s losses and metrics on a model with several outputs, as Keras 3 (TF 2.21) pairs
and names them: targets (and sample weights) given as a dict keyed by the output names go
to those outputs whatever the keys' order, and a subclassed model that does not know its
outputs' names names each loss's tracker after the loss and leaves its metrics unprefixed
(the program of tests/programs/corpus/dlwp_ticket_multi_io.py, from Deep Learning with
Python, does both)."""

import numpy as np

import ndflow as tf

keras = tf.keras
layers = keras.layers


def _ticket_model():
    # outputs in an order that is not the sorted order of their names
    title = keras.Input(shape=(5,), name="title")
    tags = keras.Input(shape=(3,), name="tags")
    features = layers.Dense(8, activation="relu")(layers.Concatenate()([title, tags]))
    priority = layers.Dense(1, activation="sigmoid", name="priority")(features)
    department = layers.Dense(4, activation="softmax", name="department")(features)
    return keras.Model([title, tags], [priority, department])


def _data():
    rng = np.random.default_rng(0)
    x = [rng.random((16, 5), np.float32), rng.random((16, 3), np.float32)]
    y = [rng.random((16, 1), np.float32), rng.integers(0, 4, (16, 1))]
    return x, y


def test_dict_targets_reach_the_named_outputs_metrics():
    x, (priority, department) = _data()
    model = _ticket_model()
    model.compile(optimizer="adam",
                  loss={"priority": "mean_squared_error",
                        "department": "sparse_categorical_crossentropy"},
                  metrics={"priority": ["mean_absolute_error"], "department": ["accuracy"]})
    by_list = model.evaluate(x, [priority, department], verbose=0, return_dict=True)
    by_name = model.evaluate({"title": x[0], "tags": x[1]},
                             {"priority": priority, "department": department}, verbose=0,
                             return_dict=True)
    assert by_name == by_list
    predicted_priority, predicted_department = model.predict(x, verbose=0)
    np.testing.assert_allclose(by_name["priority_mean_absolute_error"],
                               np.mean(np.abs(predicted_priority - priority)), rtol=1e-5)
    np.testing.assert_allclose(
        by_name["department_accuracy"],
        np.mean(np.argmax(predicted_department, -1) == department[:, 0]), rtol=1e-6)


def test_dict_sample_weights_reach_the_named_outputs():
    x, (priority, department) = _data()
    model = _ticket_model()
    model.compile(optimizer="adam", loss=["mean_squared_error",
                                          "sparse_categorical_crossentropy"])
    weights = [np.linspace(0.0, 1.0, 16), np.ones(16)]
    by_list = model.evaluate(x, [priority, department], sample_weight=weights, verbose=0,
                             return_dict=True)
    by_name = model.evaluate(x, {"priority": priority, "department": department},
                             sample_weight={"department": weights[1], "priority": weights[0]},
                             verbose=0, return_dict=True)
    np.testing.assert_allclose(by_name["priority_loss"], by_list["priority_loss"], rtol=1e-6)
    np.testing.assert_allclose(by_name["loss"], by_list["loss"], rtol=1e-6)


def test_unnamed_outputs_go_by_the_losses_and_metrics_names():
    class TicketModel(keras.Model):
        def __init__(self):
            super().__init__()
            self.mixing = layers.Dense(8, activation="relu")
            self.priority = layers.Dense(1, activation="sigmoid")
            self.department = layers.Dense(4, activation="softmax")

        def call(self, inputs):
            features = self.mixing(inputs["title"])
            return self.priority(features), self.department(features)

    x, y = _data()
    model = TicketModel()
    model.compile(optimizer="adam",
                  loss=["mean_squared_error", "sparse_categorical_crossentropy"],
                  metrics=[["mean_absolute_error"], ["accuracy"]])
    history = model.fit({"title": x[0]}, y, epochs=1, verbose=0)
    assert sorted(history.history) == [
        "accuracy", "loss", "mean_absolute_error", "mean_squared_error_loss",
        "sparse_categorical_crossentropy_loss"]
    logs = model.evaluate({"title": x[0]}, y, verbose=0, return_dict=True)
    # Keras 3's list: the loss, the compiled metrics in order, then the per-loss trackers
    assert model.evaluate({"title": x[0]}, y, verbose=0) == [
        logs[k] for k in ("loss", "mean_absolute_error", "accuracy",
                          "mean_squared_error_loss", "sparse_categorical_crossentropy_loss")]

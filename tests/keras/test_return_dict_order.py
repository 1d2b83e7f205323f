"""evaluate / train_on_batch / test_on_batch with return_dict=True give their metrics by
name (Keras' pythonify_logs sorts the logs); get_metrics_result keeps the metrics' order.
Expected: TF 2.21 (tests/fixtures/keras_return_dict_order/generate.py)."""

import json
import os

import numpy as np
import pytest

import ndflow as tf

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures",
                       "keras_return_dict_order", "tf_2_21.json")
with open(FIXTURE) as f:
    EXPECTED = json.load(f)


@pytest.fixture(scope="module")
def model():
    tf.keras.utils.set_random_seed(0)
    m = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(2)])
    m.compile("sgd", loss="mse",
              metrics=["mae", tf.keras.metrics.Accuracy(name="zacc"), "accuracy"])
    return m


X = np.ones((4, 2), "float32")
Y = np.ones((4, 2), "float32")


def test_evaluate_return_dict_is_by_name(model):
    logs = model.evaluate(X, Y, return_dict=True, verbose=0)
    assert list(logs) == EXPECTED["evaluate"]
    assert all(isinstance(v, float) for v in logs.values())


def test_on_batch_return_dicts_are_by_name(model):
    assert list(model.train_on_batch(X, Y, return_dict=True)) == EXPECTED["train_on_batch"]
    assert list(model.test_on_batch(X, Y, return_dict=True)) == EXPECTED["test_on_batch"]
    assert list(model.get_metrics_result()) == EXPECTED["get_metrics_result"]

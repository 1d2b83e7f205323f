"""Keras 3's stateless metric API (`Metric.stateless_update_state`, `stateless_result`,
`stateless_reset_state`, used by JAX-style loops such as Deep Learning with Python's, in
tests/programs/corpus/dlwp_mnist_workflows.py): the state goes in and comes out as values and
the metric's own variables stay as they were. The values are the ones TF 2.21 prints."""

import numpy as np
import pytest

import ndflow as tf

keras = tf.keras
ops = keras.ops


def _batch():
    targets = ops.array([0, 1, 2])
    predictions = ops.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.1, 0.6, 0.3]])
    return targets, predictions


def test_stateless_update_and_result_leave_the_variables_alone():
    metric = keras.metrics.SparseCategoricalAccuracy()
    targets, predictions = _batch()
    state = metric.stateless_update_state(metric.variables, targets, predictions)
    assert [float(v) for v in state] == [2.0, 3.0]
    np.testing.assert_allclose(float(metric.stateless_result(state)), 2 / 3, rtol=1e-6)
    assert [float(v.numpy()) for v in metric.variables] == [0.0, 0.0]
    state = metric.stateless_update_state(state, targets[:1], predictions[:1])
    assert [float(v) for v in state] == [3.0, 4.0]
    assert float(metric.stateless_result(state)) == 0.75
    assert float(metric.result()) == 0.0


def test_stateless_reset_gives_zeros_and_keeps_the_state():
    metric = keras.metrics.Mean()
    metric.update_state([1.0, 2.0, 6.0])
    assert [float(v) for v in metric.stateless_reset_state()] == [0.0, 0.0]
    assert float(metric.result()) == 3.0


def test_stateless_state_must_match_the_variables():
    metric = keras.metrics.SparseCategoricalAccuracy()
    with pytest.raises(ValueError, match="corresponding 1:1 to SparseCategoricalAccuracy"):
        metric.stateless_result(metric.variables[:1])

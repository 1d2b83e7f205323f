"""tf.keras.regularizers and tf.keras.constraints: values against NumPy float64 and Keras 3's
(fixture from tests/fixtures/keras_regularizers/generate.py), configs, serialized forms, and
their use by layers (penalties in `losses`, projections after each optimizer step)."""

import json
import pathlib

import numpy as np
import pytest

import ndflow as tf

keras = tf.keras
CASES = json.loads((pathlib.Path(__file__).parent.parent / "fixtures" / "keras_regularizers"
                    / "cases.json").read_text())
W = np.array(CASES["w"], np.float32)
W64 = W.astype(np.float64)

REGULARIZERS = {"l1": (keras.regularizers.L1(), 0.01 * np.abs(W64).sum()),
                "l2": (keras.regularizers.L2(0.3), 0.3 * (W64 ** 2).sum()),
                "l1l2": (keras.regularizers.L1L2(0.01, 0.02),
                         0.01 * np.abs(W64).sum() + 0.02 * (W64 ** 2).sum())}


def _norms(axis):
    return np.sqrt((W64 ** 2).sum(axis=axis, keepdims=True))


CONSTRAINTS = {
    "max_norm": (keras.constraints.MaxNorm(1.5, axis=0),
                 W64 * np.clip(_norms(0), 0, 1.5) / (1e-7 + _norms(0))),
    "non_neg": (keras.constraints.NonNeg(), np.maximum(W64, 0)),
    "unit_norm": (keras.constraints.UnitNorm(axis=1), W64 / (1e-7 + _norms(1))),
    "min_max": (keras.constraints.MinMaxNorm(0.5, 1.0, rate=0.7, axis=0),
                W64 * (0.7 * np.clip(_norms(0), 0.5, 1.0) + 0.3 * _norms(0))
                / (1e-7 + _norms(0)))}


@pytest.mark.parametrize("name", sorted(REGULARIZERS))
def test_regularizers(name):
    reg, reference = REGULARIZERS[name]
    keras_case = CASES["regularizers"][name]
    value = float(reg(tf.constant(W)).numpy())
    np.testing.assert_allclose(value, reference, rtol=1e-5)
    np.testing.assert_allclose(value, keras_case["value"], rtol=1e-5)
    assert reg.get_config() == keras_case["config"]
    assert keras.regularizers.serialize(reg) == keras_case["serialized"]
    again = keras.regularizers.deserialize(keras_case["serialized"])
    assert type(again) is type(reg) and again.get_config() == reg.get_config()


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_constraints(name):
    con, reference = CONSTRAINTS[name]
    keras_case = CASES["constraints"][name]
    value = con(tf.constant(W)).numpy()
    np.testing.assert_allclose(value, reference, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(value, keras_case["value"], rtol=1e-5, atol=1e-6)
    assert con.get_config() == keras_case["config"]
    assert keras.constraints.serialize(con) == keras_case["serialized"]


def test_layers_use_them():
    dense = keras.layers.Dense(3, kernel_regularizer="l2", bias_regularizer=keras.regularizers.L1(
        0.5), kernel_constraint=keras.constraints.NonNeg())
    x = np.random.default_rng(1).normal(size=(8, 4)).astype(np.float32)
    dense(x)
    kernel, bias = dense.kernel.numpy().astype(np.float64), dense.bias.numpy()
    np.testing.assert_allclose(sorted(float(v.numpy()) for v in dense.losses),
                               sorted([0.01 * (kernel ** 2).sum(), 0.5 * np.abs(bias).sum()]),
                               rtol=1e-5)
    model = keras.Sequential([keras.Input((4,)), dense])
    model.compile(keras.optimizers.SGD(1.0), "mse")
    model.fit(x, -np.ones((8, 3), np.float32) * 10, epochs=2, verbose=0)
    assert (dense.kernel.numpy() >= 0).all()  # projected after each step


def test_lookup_errors():
    assert keras.regularizers.get(None) is None and keras.constraints.get(None) is None
    assert isinstance(keras.regularizers.get("l1_l2"), keras.regularizers.L1L2)
    with pytest.raises(ValueError, match="Could not interpret regularizer identifier: l3"):
        keras.regularizers.get("l3")
    with pytest.raises(ValueError, match="Could not interpret constraint identifier: nope"):
        keras.constraints.get("nope")
    with pytest.raises(ValueError, match="non-negative"):
        keras.regularizers.L2(-1.0)

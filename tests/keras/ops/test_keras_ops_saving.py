"""Functional models with keras.ops steps across Keras and ndflow: Keras 3.15's .keras file
of such a model (fixture from generate_model.py) loads in ndflow with Keras' outputs, and
ndflow writes the steps as Keras does (module keras.src.ops.*, Keras' Operation class and
constructor config, call arguments in the node), so its files load in Keras (checked with
Keras outside the tests) and in ndflow."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

import ndflow as tf
from ndflow.keras.ops.keras_op_table import TABLE

K = tf.keras.ops
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "keras_ops"


def test_keras_model_with_ops_steps_loads_with_keras_outputs():
    model = tf.keras.models.load_model(FIXTURES / "keras_ops_model.keras")
    io = np.load(FIXTURES / "keras_ops_model_io.npz")
    outputs = model(io["x"])
    assert len(outputs) == 14
    for i, out in enumerate(outputs):
        np.testing.assert_allclose(np.asarray(out), io[f"out{i}"], rtol=1e-5, atol=1e-6)


def _ops_model():
    inputs = tf.keras.Input((4,))
    x = tf.keras.layers.Dense(3)(inputs)
    return tf.keras.Model(inputs, [
        K.expand_dims(K.sum(x, axis=-1), -1),
        K.einsum("bi,bj->bij", x, x),
        K.pad(x, [[0, 0], [1, 1]], constant_values=2.0),
        K.top_k(x, 2)[1],
        K.add(x, 1.0),                      # Keras' Add: an ndflow layer name (own node)
    ])


def test_ndflow_writes_ops_steps_as_keras_does(tmp_path):
    model = _ops_model()
    path = tmp_path / "ops.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))["config"]
    nodes = {layer["class_name"]: layer for layer in config["layers"]}
    assert nodes["Sum"]["module"] == "keras.src.ops.numpy"
    assert nodes["Sum"]["registered_name"] == "Sum"
    def config(name):
        return {k: v for k, v in nodes[name]["config"].items() if k != "name"}
    assert config("Sum") == {"axis": -1, "keepdims": False}
    assert config("Einsum") == {"subscripts": "bi,bj->bij"}
    assert len(nodes["Einsum"]["inbound_nodes"][0]["args"]) == 2
    assert config("Pad") == {"pad_width": [[0, 0], [1, 1]], "mode": "constant"}
    assert nodes["Pad"]["inbound_nodes"][0]["args"][1] == 2.0     # constant_values: a call arg
    assert nodes["TopK"]["module"] == "keras.src.ops.math"
    for name, node in nodes.items():
        if node["module"].startswith("keras.src.ops"):
            row = next(r for r in TABLE.values() if r[1] == name)
            assert set(node["config"]) <= {"name", *row[2]}
    assert "KerasOpLayer" in nodes    # add: ndflow's own node, its args in its config
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    loaded = tf.keras.models.load_model(path)
    for got, want in zip(loaded(x), model(x)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_ops_with_constant_arrays_keep_ndflow_nodes_that_round_trip(tmp_path):
    inputs = tf.keras.Input((3,))
    out = K.matmul(inputs, np.arange(6.0, dtype=np.float32).reshape(3, 2))
    model = tf.keras.Model(inputs, K.concatenate([out, K.ones_like(out)], axis=-1))
    path = tmp_path / "consts.keras"
    model.save(path)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(tf.keras.models.load_model(path)(x).numpy(),
                               model(x).numpy())

"""`tf.saved_model.experimental.TrackableResource` and `VariablePolicy` against TensorFlow
2.21 (tests/fixtures/saved_model_trackable_resource: TF's SavedModel of the docstring's
DemoResource module, and expected.json; generate.py beside them)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.protos.saved_model_pb import SavedModel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "saved_model_trackable_resource"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())
VariablePolicy = tf.saved_model.experimental.VariablePolicy


class DemoResource(tf.saved_model.experimental.TrackableResource):
    def __init__(self, shared_name="demo_res"):
        super().__init__()
        self.shared_name = shared_name
        self.destroyed = 0
        self._initialize()

    def _create_resource(self):
        return tf.raw_ops.VarHandleOp(dtype=tf.float32, shape=[2],
                                      shared_name=self.shared_name)

    def _initialize(self):
        tf.raw_ops.AssignVariableOp(resource=self.resource_handle, value=tf.ones([2]))

    def _destroy_resource(self):
        self.destroyed += 1
        tf.raw_ops.DestroyResourceOp(resource=self.resource_handle)


class DemoModule(tf.Module):
    def __init__(self, shared_name="demo_res"):
        super().__init__()
        self.resource = DemoResource(shared_name)

    @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
    def increment(self, tensor):
        return tensor + tf.raw_ops.ReadVariableOp(resource=self.resource.resource_handle,
                                                  dtype=tf.float32)

    @tf.function(input_signature=[])
    def bump(self):
        handle = self.resource.resource_handle
        tf.raw_ops.AssignAddVariableOp(resource=handle, value=tf.ones([2]))
        return tf.raw_ops.ReadVariableOp(resource=handle, dtype=tf.float32)


def _meta_graph(path):
    sm = SavedModel()
    sm.ParseFromString((Path(path) / "saved_model.pb").read_bytes())
    return sm.meta_graphs[0]


def test_live_resource():
    demo = DemoModule("live_res")
    assert demo.increment(tf.constant([5.0, 1.0])).numpy().tolist() == EXPECTED["increment"]
    assert demo.resource.resource_handle.dtype == tf.resource
    with pytest.raises(NotImplementedError, match="_create_resource not implemented"):
        tf.saved_model.experimental.TrackableResource().resource_handle  # noqa: B018


def test_load_tensorflows_saved_model():
    loaded = tf.saved_model.load(str(FIXTURES / "demo"))
    np.testing.assert_array_equal(loaded.increment(tf.constant([5.0, 1.0])),
                                  EXPECTED["loaded_increment"])
    np.testing.assert_array_equal(loaded.bump(), EXPECTED["bump"])


def test_save_as_tensorflow_does_and_load(tmp_path):
    """ndflow writes TF's resource node (the three functions, in TF's order; TF loads such
    a directory and gets the same results) and loads it back: the loader made a new
    resource, initialized, that the functions use."""
    demo = DemoModule("saved_res")
    tf.saved_model.save(demo, str(tmp_path / "m"))
    mg = _meta_graph(tmp_path / "m")
    res = next(n for n in mg.object_graph_def.nodes if n.WhichOneof("kind") == "resource")
    assert [c.local_name for c in res.children] == EXPECTED["resource_children"]
    assert res.resource.device == EXPECTED["resource_device"]
    functions = {n.function.concrete_functions[0] for n in mg.object_graph_def.nodes
                 if n.WhichOneof("kind") == "function" and n.function.concrete_functions}
    creators = [f for f in mg.graph_def.library.function
                if f.signature.name in functions and
                any(node.op == "VarHandleOp" for node in f.node_def)]
    assert creators  # the saved _create_resource makes the variable
    assert "VarHandleOp" in {n.op for n in mg.graph_def.node}  # for graph-level loaders
    demo.bump()  # the live resource's later value is not what a load starts from
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_array_equal(loaded.increment(tf.constant([5.0, 1.0])),
                                  EXPECTED["loaded_increment"])
    np.testing.assert_array_equal(loaded.bump(), EXPECTED["bump"])


def test_destroy_on_delete():
    calls = []

    class Tracked(DemoResource):
        def _destroy_resource(self):
            calls.append(self.shared_name)

    r = Tracked("deleted_res")
    del r
    assert calls == ["deleted_res"]


def test_variable_policy_enum():
    for key, name in EXPECTED["policies"].items():
        assert VariablePolicy.from_obj(None if key == "None" else key).name == name
    assert tf.saved_model.SaveOptions(
        experimental_variable_policy="save_variable_devices"
    ).experimental_variable_policy.name == EXPECTED["options_policy"]
    assert tf.saved_model.LoadOptions().experimental_variable_policy is VariablePolicy.NONE
    with pytest.raises(ValueError) as e:
        VariablePolicy.from_obj("bogus")
    assert str(e.value) == EXPECTED["bad_policy"]


@pytest.mark.parametrize("policy, key", [
    (VariablePolicy.SAVE_VARIABLE_DEVICES, "devices"),
    (None, "devices_none"),
])
def test_variable_policy_saves_devices(tmp_path, policy, key):
    m = tf.Module()
    with tf.device("/CPU:0"):
        m.v = tf.Variable([1.0, 2.0], name="v")
    m.f = tf.function(lambda: m.v * 2.0, input_signature=[])
    tf.saved_model.save(m, str(tmp_path / "m"), options=tf.saved_model.SaveOptions(
        experimental_variable_policy=policy))
    mg = _meta_graph(tmp_path / "m")
    node = next(n for n in mg.object_graph_def.nodes if n.WhichOneof("kind") == "variable")
    assert node.variable.device == EXPECTED[key]["saved_variable_device"]
    assert [n.device for n in mg.graph_def.node if n.op == "VarHandleOp"] == \
        EXPECTED[key]["var_handle_devices"]
    np.testing.assert_array_equal(tf.saved_model.load(str(tmp_path / "m")).f(), [2.0, 4.0])

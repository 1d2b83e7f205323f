"""`keras.models.clone_model` with `input_tensors`, `clone_function`, `call_function` and
`recursive`, against Keras 3.15 on TF 2.21 (the values and messages below were printed by
the oracle for the same models; each test names what it compared)."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras.layers.base_layer import reset_names

keras = tf.keras
layers = keras.layers


def _mlp():
    i = keras.Input((3,), name="x")
    h = layers.Dense(4, activation="relu", name="d1")(i)
    return keras.Model(i, layers.Dense(2, name="d2")(h), name="m")


def _two_heads():
    a, b = keras.Input((4,), name="a"), keras.Input((4,), name="b")
    shared = layers.Dense(5, activation="tanh", name="shared")
    ha, hb = shared(a), shared(b)
    merged = layers.Add(name="add")([ha, hb])
    out1 = layers.Dense(2, name="out1")(merged)
    out2 = layers.Dense(1, activation="sigmoid", name="out2")(hb)
    model = keras.Model([a, b], [out1, out2], name="two_heads")
    model.set_weights([np.linspace(-1, 1, w.size).reshape(w.shape).astype("float32")
                       for w in model.get_weights()])
    return model


def test_input_tensors_functional():
    # Keras 3: the clone is built on the given Input; layers cloned under their names
    model = _mlp()
    j = keras.Input((3,), name="y")
    clone = keras.models.clone_model(model, input_tensors=j)
    assert [x.name for x in clone.layers] == ["y", "d1", "d2"]
    assert clone.input is j and clone.name == "m" and type(clone).__name__ == "Functional"
    assert [w.path for w in clone.weights] == ["d1/kernel", "d1/bias", "d2/kernel", "d2/bias"]
    assert clone.layers[1] is not model.layers[1]


def test_input_tensors_dict_and_list_structures():
    a, b = keras.Input((2,), name="a"), keras.Input((3,), name="b")
    cat = layers.Concatenate(name="cat")([a, b])
    md = keras.Model({"a": a, "b": b}, {"out": layers.Dense(1, name="dd")(cat)})
    na, nb = keras.Input((2,), name="na"), keras.Input((3,), name="nb")
    with pytest.warns(UserWarning, match="all keys in the dict must match"):
        cd = keras.models.clone_model(md, input_tensors={"a": na, "b": nb})
    assert [x.name for x in cd.layers] == ["na", "nb", "cat", "dd"]
    assert list(cd.input) == ["a", "b"] and cd.input["a"] is na
    assert isinstance(cd.output, dict)
    with pytest.raises(ValueError, match="`input_tensors` must have the same structure as "
                                         "model.input\nReference structure: {'a': "):
        keras.models.clone_model(md, input_tensors=[na, nb])
    ml = keras.Model([a, b], layers.Dense(1, name="dl")(cat))
    cl = keras.models.clone_model(ml, input_tensors=[na, nb])
    assert [x.name for x in cl.layers] == ["na", "nb", "cat", "dl"]
    with pytest.raises(ValueError, match="must have the same structure"):   # tuple vs list
        keras.models.clone_model(ml, input_tensors=(na, nb))


def test_input_tensors_errors():
    model = _mlp()
    with pytest.raises(ValueError, match=r"All entries in `input_tensors` must be "
                                         r"KerasTensors. Received invalid values: "
                                         r"inputs_tensors=\[\[1. 1. 1.\]\]"):
        keras.models.clone_model(model, input_tensors=np.ones((1, 3)))
    with pytest.raises(ValueError, match="Received structure: \\[<KerasTensor"):
        keras.models.clone_model(model, input_tensors=[keras.Input((3,), name="z")])
    with pytest.raises(ValueError, match=r"Unexpected keyword argument\(s\): \('foo',\)"):
        keras.models.clone_model(model, foo=1)
    with pytest.raises(TypeError, match="'int' object is not callable"):
        keras.models.clone_model(model, clone_function=3)


def test_clone_function_shares_or_rebuilds_layers():
    model = _mlp()
    shared = keras.models.clone_model(model, clone_function=lambda layer: layer)
    assert shared.layers[1] is model.layers[1] and shared.layers[0] is not model.layers[0]
    assert [x.name for x in shared.layers] == ["x", "d1", "d2"]

    def wider(layer):
        config = layer.get_config()
        config["units"], config["name"] = config["units"] * 2, config["name"] + "_x"
        return layer.__class__.from_config(config)

    clone = keras.models.clone_model(model, clone_function=wider)
    assert [x.name for x in clone.layers] == ["x", "d1_x", "d2_x"]
    assert clone.output.shape == (None, 4)


def test_shared_layer_cloned_once_and_unnamed_input_name():
    i = keras.Input((3,))
    shared = layers.Dense(3, name="sh")
    model = keras.Model(i, shared(shared(i)))
    clone = keras.models.clone_model(model)
    # Keras 3 names the new Input after the input tensor
    assert [x.name for x in clone.layers] == [i.name, "sh"]
    assert i.name.startswith("keras_tensor")
    assert clone.layers[1] is not shared and len(clone.weights) == 2


def test_call_function_inserts_layers_in_keras_order():
    reset_names()
    model = _two_heads()
    calls = []

    def clone_function(layer):
        calls.append(layer.name)
        return layer

    def call_function(layer, *args, **kwargs):
        out = layer(*args, **kwargs)
        return layers.Rescaling(2.0)(out) if isinstance(layer, layers.Dense) else out

    clone = keras.models.clone_model(
        model, input_tensors=[keras.Input((4,), name="a2"), keras.Input((4,), name="b2")],
        clone_function=clone_function, call_function=call_function)
    assert calls == ["shared", "add", "out2", "out1"]
    assert [x.name for x in clone.layers] == [
        "a2", "b2", "shared", "rescaling_1", "rescaling", "add", "out1", "out2", "rescaling_3",
        "rescaling_2"]
    xa = np.linspace(0, 1, 8).reshape(2, 4).astype("float32")
    o1, o2 = clone([xa, xa[::-1].copy()])
    np.testing.assert_allclose(o1, [[13.158045768737793, 18.954465866088867]] * 2, rtol=1e-5)
    np.testing.assert_allclose(o2, [[1.9607369899749756], [1.9154889583587646]], rtol=1e-5)


def test_sequential_clone():
    reset_names()
    model = keras.Sequential([keras.Input((3,), name="in"), layers.Dense(2, name="sd")],
                             name="s")
    clone = keras.models.clone_model(model, input_tensors=keras.Input((3,), name="q"))
    assert [x.name for x in clone.layers] == ["sd"] and clone._layers[0].name == "in"
    assert clone.inputs[0].name == "q" and clone.built
    shared = keras.models.clone_model(model, clone_function=lambda layer: layer)
    assert shared.layers[0] is model.layers[0] and shared.name == "s"
    with pytest.raises(ValueError, match="`call_function` argument is not supported with "
                                         "Sequential models.  In a Sequential model"):
        keras.models.clone_model(model, call_function=lambda layer, *a, **k: layer(*a, **k))
    with pytest.raises(ValueError, match="Argument `input_tensors` must contain a single "
                                         "tensor."):
        keras.models.clone_model(model, input_tensors=[keras.Input((3,)), keras.Input((3,))])
    with pytest.raises(ValueError, match="Argument `input_tensors` must be a KerasTensor. "
                                         "Received invalid value: input_tensors="):
        keras.models.clone_model(model, input_tensors=np.ones((1, 3)))
    unbuilt = keras.Sequential([layers.Dense(2, name="sd2")])
    clone = keras.models.clone_model(unbuilt, input_tensors=keras.Input((5,), name="q5"))
    assert clone.built and clone.outputs[0].shape == (None, 2)
    # a new, automatically named InputLayer (two unnamed Inputs were made above)
    assert [x.name for x in clone._layers] == ["input_layer_2", "sd2"]
    clone = keras.models.clone_model(unbuilt)
    assert not clone.built and [x.name for x in clone._layers] == ["sd2"]


def test_recursive_clones_nested_models_layer_by_layer():
    inner = keras.Sequential([keras.Input((3,)), layers.Dense(2, name="in_d")], name="inner")
    i = keras.Input((3,), name="oi")
    outer = keras.Model(i, layers.Dense(1, name="od")(inner(i)), name="outer")
    seen = []

    def clone_function(layer):
        seen.append(layer.name)
        return layer.__class__.from_config(layer.get_config())

    clone = keras.models.clone_model(outer, clone_function=clone_function, recursive=True)
    assert seen == ["in_d", "od"]
    assert [x.name for x in clone.layers] == ["oi", "inner", "od"]
    assert clone.layers[1].layers[0] is not inner.layers[0]
    seen.clear()
    keras.models.clone_model(outer, clone_function=clone_function)
    assert seen == ["inner", "od"]


def test_compiled_model_clone_is_compiled():
    model = _mlp()
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    clone = keras.models.clone_model(model)
    assert clone.compiled and type(clone.optimizer).__name__ == "Adam" and clone.loss == "mse"


def test_subclassed_models_and_layers():
    class Sub(keras.Model):
        def __init__(self, units=2, **kwargs):
            super().__init__(**kwargs)
            self.units, self.d = units, layers.Dense(units)

        def call(self, x):
            return self.d(x)

        def get_config(self):
            return {"units": self.units, "name": self.name}

    model = Sub(3, name="subm")
    clone = keras.models.clone_model(model)
    assert type(clone) is Sub and clone.units == 3 and clone.name == "subm"
    assert clone is not model
    with pytest.raises(ValueError, match="Arguments `clone_function` and `input_tensors` are "
                                         "only supported for Sequential models or Functional "
                                         "models. Received model of type 'Sub', with "
                                         "clone_function=<function"):
        keras.models.clone_model(model, clone_function=lambda layer: layer)
    with pytest.raises(TypeError, match="A symbolic KerasTensor cannot be used as a boolean"):
        keras.models.clone_model(model, input_tensors=keras.Input((3,)))
    with pytest.raises(ValueError, match="Argument `call_function` is only supported for "
                                         "Functional models. Received model of type 'Sub', "
                                         "with call_function=None"):
        keras.models.clone_model(model, call_function=lambda layer, *a, **k: layer(*a, **k))
    # Keras 3 clones a plain layer from its config as well
    dense = layers.Dense(2, name="dd")
    clone = keras.models.clone_model(dense)
    assert type(clone) is layers.Dense and clone.name == "dd" and clone is not dense


def test_intermediate_tensors_as_inputs_are_cloned_as_keras():
    # Keras 3.15: a model from an intermediate tensor starts at a new Input named
    # "<tensor>CLONE"; its outputs are copies "<tensor>_clone"; the layers gain a node
    i = keras.Input((3,), name="x")
    h = layers.Dense(4, name="d1", kernel_initializer="ones")(i)
    o = layers.Dense(2, name="d2", kernel_initializer="ones")(layers.Activation(
        "relu", name="r")(h))
    model = keras.Model(h, o)
    assert [x.name for x in model.layers] == [f"{h.name}CLONE", "r", "d2"]
    assert model.inputs[0].name == f"{h.name}CLONE" and model.outputs[0] is not o
    assert model.outputs[0].name == f"{o.name}_clone" and len(model.layers[1]._inbound_nodes) == 2
    np.testing.assert_allclose(model(np.ones((1, 4), "float32")), [[4.0, 4.0]])
    assert model.get_config()["input_layers"] == [f"{h.name}CLONE", 0, 0]
    assert [x.name for x in keras.Model(i, o).layers] == ["x", "d1", "r", "d2"]
    # clone_model on an intermediate tensor (Keras: ['keras_tensor_12CLONE', 'sh'])
    j = keras.Input((3,))
    shared = layers.Dense(3, name="sh")
    t = layers.Dense(3, name="pre")(keras.Input((4,), name="i4"))
    clone = keras.models.clone_model(keras.Model(j, shared(shared(j))), input_tensors=t)
    assert [x.name for x in clone.layers] == [f"{t.name}CLONE", "sh"]
    assert clone(np.ones((2, 3), "float32")).shape == (2, 3)

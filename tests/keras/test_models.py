"""Keras models: the functional API (multi-input/output, shared layers, nesting), Sequential,
subclassed models, summary() and get_config() against Keras 3's (fixture from
tests/fixtures/keras_models/generate.py), masks, mixed-precision policies, bad input."""

import json
import pathlib

import numpy as np
import pytest

import ndflow as tf

keras = tf.keras
layers = keras.layers
FIXTURES = pathlib.Path(__file__).parent.parent / "fixtures" / "keras_models"
KERAS = json.loads((FIXTURES / "keras_models.json").read_text())
ARRAYS = np.load(FIXTURES / "keras_models.npz")
RNG = np.random.default_rng(11)


def _summary(model, **kwargs) -> str:
    lines = []
    model.summary(print_fn=lines.append, **kwargs)
    return "\n".join(lines).rstrip("\n")


def _two_heads():
    a, b = keras.Input((4,), name="a"), keras.Input((4,), name="b")
    shared = layers.Dense(5, activation="tanh", name="shared")
    ha, hb = shared(a), shared(b)
    merged = layers.Add(name="add")([ha, hb])
    out1 = layers.Dense(2, name="out1")(merged)
    out2 = layers.Dense(1, activation="sigmoid", name="out2")(hb)
    return keras.Model([a, b], [out1, out2], name="two_heads")


def _mlp():
    return keras.Sequential([keras.Input((8,), name="features"),
                             layers.Dense(16, activation="relu", name="hidden"),
                             layers.Dropout(0.5, name="drop"),
                             layers.Dense(3, activation="softmax", name="probs")], name="mlp")


def test_functional_shared_layer_matches_keras_outputs():
    model = _two_heads()
    assert [type(x).__name__ for x in model.layers] == ["InputLayer", "InputLayer", "Dense",
                                                       "Add", "Dense", "Dense"]
    weights = [ARRAYS[f"func_w{i}"] for i in range(6)]
    model.set_weights(weights)
    xa, xb = ARRAYS["func_xa"], ARRAYS["func_xb"]
    p1, p2 = model.predict([xa, xb], verbose=0)
    np.testing.assert_allclose(p1, ARRAYS["func_p1"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(p2, ARRAYS["func_p2"], rtol=1e-5, atol=1e-6)
    # and against NumPy float64
    w, b, w1, b1, w2, b2 = (np.float64(x) for x in weights)
    ha, hb = np.tanh(xa @ w + b), np.tanh(xb @ w + b)
    np.testing.assert_allclose(p1, (ha + hb) @ w1 + b1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(p2, 1 / (1 + np.exp(-(hb @ w2 + b2))), rtol=1e-5, atol=1e-6)
    out = model({"a": xa, "b": xb})  # inputs by name
    np.testing.assert_allclose(out[0].numpy(), p1, rtol=1e-6)


@pytest.mark.parametrize("name, build", [("mlp", _mlp), ("func", _two_heads)])
def test_summary_is_keras_summary(name, build, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert _summary(build()) == KERAS[f"{name}_summary"].rstrip("\n")


def _normalize(config):
    """JSON's view of a config (tuples become lists)."""
    return json.loads(json.dumps(config))


@pytest.mark.parametrize("name, build", [("mlp", _mlp), ("func", _two_heads)])
def test_get_config_is_keras_config_and_round_trips(name, build):
    model = build()
    config = _normalize(model.get_config())
    expected = KERAS[f"{name}_config"]
    assert config == expected
    clone = type(model).from_config(model.get_config())
    assert [x.name for x in clone.layers] == [x.name for x in model.layers]
    clone.set_weights(model.get_weights())
    x = [RNG.normal(size=(3, 4)).astype(np.float32)] * 2 if name == "func" else \
        RNG.normal(size=(3, 8)).astype(np.float32)
    for got, want in zip(tf.nest.flatten(clone(x)), tf.nest.flatten(model(x))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="Could not locate class 'Mystery'"):
        bad = model.get_config()
        bad["layers"][-1]["class_name"] = "Mystery"
        type(model).from_config(bad)


def test_nested_models_and_subclassed_models_track_weights_and_training():
    inner = keras.Sequential([layers.Dense(3, name="in_dense"), layers.Dropout(0.99)],
                             name="inner")
    x = keras.Input((2,))
    outer = keras.Model(x, layers.Dense(1)(inner(x)))
    assert len(outer.weights) == 4 and outer.layers[1] is inner

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.body = [layers.Dense(4, activation="tanh"), layers.Dense(4)]
            self.drop = layers.Dropout(0.5, seed=3)
            self.head = layers.Dense(1)

        def call(self, inputs, training=None):
            h = inputs
            for layer in self.body:
                h = layer(h)
            return self.head(self.drop(h))  # training reaches Dropout from the outer call

    net = Net()
    data = RNG.normal(size=(64, 2)).astype(np.float32)
    np.testing.assert_allclose(net(data).numpy(), net(data, training=False).numpy())
    assert not np.allclose(net(data, training=True).numpy(), net(data).numpy())
    assert len(net.trainable_weights) == 6
    net.body[0].trainable = False
    assert len(net.trainable_weights) == 4 and len(net.non_trainable_weights) == 2
    net.trainable = False
    assert net.trainable_weights == [] and len(net.non_trainable_weights) == 6


def test_add_loss_and_regularizers_feed_losses():
    class Penalized(layers.Layer):
        def call(self, x):
            self.add_loss(tf.reduce_sum(x) * 0.0 + 2.0)
            return x

    x = keras.Input((3,))
    h = layers.Dense(2, kernel_regularizer=keras.regularizers.L2(0.1), name="reg")(x)
    model = keras.Model(x, Penalized()(h))
    data = RNG.normal(size=(4, 3)).astype(np.float32)
    model(data)
    model(data)  # losses are those of the last call, not accumulated
    kernel = model.get_layer("reg").kernel.numpy()
    values = sorted(float(v.numpy()) for v in model.losses)
    np.testing.assert_allclose(values, sorted([2.0, 0.1 * float((kernel ** 2).sum())]),
                               rtol=1e-5)


def test_mixed_precision_policy_layers():
    dense = layers.Dense(4, dtype="mixed_float16")
    out = dense(np.ones((2, 3), np.float32))
    assert out.dtype == tf.float16 and dense.kernel.dtype == tf.float32
    assert dense.compute_dtype == "float16" and dense.dtype == "float32"
    final = layers.Activation("linear", dtype="float32")(out)
    assert final.dtype == tf.float32
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
        assert model.layers[0].compute_dtype == "bfloat16"
        assert model(np.ones((1, 3), np.float32)).dtype == tf.bfloat16
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.cast(model(np.ones((1, 3), np.float32)), tf.float32))
        grads = tape.gradient(loss, model.trainable_variables)
        assert [g.dtype for g in grads] == [tf.float32, tf.float32]
    finally:
        keras.mixed_precision.set_global_policy("float32")


def test_bad_inputs_get_keras_errors():
    model = _mlp()
    with pytest.raises(ValueError, match=r"Input 0 with name 'None' of layer 'hidden' is "
                                         r"incompatible with the layer: expected axis -1 of "
                                         r"input shape to have value 8, but received input "
                                         r"with shape \(2, 5\)"):
        model(np.ones((2, 5), np.float32))
    assert model(np.ones((2, 8), np.float32)).shape == (2, 3)  # still usable
    dense = layers.Dense(2)
    dense(np.ones((1, 3), np.float32))
    with pytest.raises(ValueError, match=r"expected axis -1 of input shape to have value 3"):
        dense(np.ones((1, 4), np.float32))
    func = _two_heads()
    with pytest.raises(ValueError, match=r"Input 1 with name 'b' of layer 'two_heads' is "
                                         r"incompatible.*expected shape=\(None, 4\), found "
                                         r"shape=\(2, 3\)"):
        func([np.ones((2, 4), np.float32), np.ones((2, 3), np.float32)])
    # an intermediate input is cloned as Keras does; an output not computed from the inputs
    # is a ValueError (Keras 3: "Output with path `` is not connected to `inputs`")
    with pytest.raises(ValueError, match="^Output with path `` is not connected to `inputs`$"):
        keras.Model(layers.Dense(2)(keras.Input((2,))), keras.Input((2,)))
    with pytest.raises(ValueError, match="KerasTensors created by `keras.Input` or by layers"):
        keras.Model(keras.KerasTensor((None, 2)), layers.Dense(2)(keras.Input((2,))))
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to Dense"):
        layers.Dense(2, kernel_size=3)
    with pytest.raises(ValueError, match="Only instances of `keras.Layer`"):
        keras.Sequential().add(lambda x: x)
    with pytest.raises(ValueError, match="No such layer: nope"):
        model.get_layer("nope")


def test_weight_paths_follow_keras_nesting():
    """Keras 3's variable paths (what .weights.h5 files and optimizer slots are named by)."""
    keras.backend.clear_session()
    seq = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    assert [v.path for v in seq.weights] == ["sequential/dense/kernel", "sequential/dense/bias"]
    by_call = keras.Sequential([layers.Dense(2)])
    by_call(np.ones((1, 3), np.float32))
    assert [v.path for v in by_call.weights] == ["sequential_1/dense_1/kernel",
                                                 "sequential_1/dense_1/bias"]
    x = keras.Input((3,))
    func = keras.Model(x, layers.Dense(2)(x))
    assert [v.path for v in func.weights] == ["dense_2/kernel", "dense_2/bias"]

    class M(keras.Model):
        def __init__(self):
            super().__init__()
            self.d = layers.Dense(2)

        def call(self, x):
            return self.d(x)

    sub = M()
    sub(np.ones((1, 3), np.float32))
    assert [v.path for v in sub.weights] == ["m/dense_3/kernel", "m/dense_3/bias"]


def test_clone_model_and_seeds():
    keras.utils.set_random_seed(7)
    model = _two_heads()
    clone = keras.models.clone_model(model)
    assert clone is not model and [x.name for x in clone.layers] == [x.name for x in model.layers]
    assert not np.allclose(clone.get_weights()[0], model.get_weights()[0])  # fresh weights
    keras.utils.set_random_seed(7)
    again = _two_heads()
    np.testing.assert_array_equal(again.get_weights()[0], model.get_weights()[0])
    # Keras 3 clones a layer that is not a model from its config
    assert type(keras.models.clone_model(layers.Dense(2))) is layers.Dense


def test_functional_model_is_initialized_once_and_named_as_keras():
    # TF 2.21: a named model takes no automatic name; the first unnamed one is "functional"
    from ndflow.keras.layers.base_layer import reset_names
    reset_names()
    k = tf.keras
    i = k.Input((3,))
    named = k.Model(i, k.layers.Dense(2)(i), name="named")
    first = k.Model(i, k.layers.Dense(2)(i))
    second = k.Model(i, named(i))
    assert (named.name, first.name, second.name) == ("named", "functional", "functional_1")
    assert type(first).__name__ == "Functional"


def test_sequential_rebuilds_take_functional_names_as_keras():
    # TF 2.21: each rebuild of a Sequential with an Input makes an unnamed Functional (a
    # Sequential of Input + 3 layers takes functional .. functional_2)
    from ndflow.keras.layers.base_layer import reset_names
    reset_names()
    k = tf.keras
    seq = k.Sequential()
    seq.add(k.layers.Input((3,)))
    for _ in range(3):
        seq.add(k.layers.Dense(2))
    i = k.Input((3,))
    assert k.Model(i, seq(i)).name == "functional_3" and seq.name == "sequential"


def test_sparse_input_runs_through_a_functional_dense_layer():
    # the sparse-tensors guide: Input(sparse=True) -> Dense, called on a SparseTensor with
    # int values (autocast to the kernel's float32, as Keras 3)
    k = tf.keras
    x = k.Input(shape=(4,), sparse=True)
    dense = k.layers.Dense(4)
    model = k.Model(x, dense(x))
    sp = tf.sparse.SparseTensor(indices=[(0, 0), (0, 1), (4, 3)], values=[1, 2, 3],
                                dense_shape=(6, 4))
    got = model(sp).numpy()
    want = tf.sparse.to_dense(sp).numpy().astype(np.float32) @ dense.kernel.numpy() \
        + dense.bias.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_layer_named_with_a_leading_underscore():
    # Keras 3 builds models symbolically, so any layer name works; ndflow's ops at the root
    # scope would be named "_d/MatMul", which no op name may be. Nested in the model's scope
    # the name stays, as TensorFlow's graph keeps it ("net_1/_d_1/MatMul").
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, name="_d")],
                                name="net")
    x = np.ones((4, 2), np.float32)
    assert model(x).shape == (4, 1)
    assert [w.path for w in model.weights] == ["net/_d/kernel", "net/_d/bias"]
    model.compile("sgd", "mse")
    model.fit(x, np.ones((4, 1), np.float32), verbose=0)
    traced = tf.function(lambda t: model(t)).get_concrete_function(
        tf.TensorSpec([4, 2], tf.float32))
    names = [op.name for op in traced.graph.get_operations()]
    assert any("/_d" in n and n.endswith("/MatMul") for n in names), names


def test_dict_inputs_are_matched_by_name_whatever_the_insertion_order():
    # the model's inputs dict is not in sorted order and the inputs differ in dtype: a
    # positional mix-up would feed the strings to the float branch
    number = tf.keras.Input((1,), name="b_number", dtype="float32")
    word = tf.keras.Input((1,), name="a_word", dtype="string")
    lookup = tf.keras.layers.StringLookup(vocabulary=["x", "y"])
    encoded = tf.keras.layers.CategoryEncoding(3, output_mode="multi_hot")(lookup(word))
    model = tf.keras.Model({"b_number": number, "a_word": word},
                           tf.keras.layers.Concatenate()([number, encoded]))
    data = {"b_number": tf.constant([[5.0], [7.0]]), "a_word": tf.constant([["y"], ["q"]])}
    want = [[5.0, 0.0, 0.0, 1.0], [7.0, 1.0, 0.0, 0.0]]
    np.testing.assert_array_equal(model(data).numpy(), want)
    np.testing.assert_array_equal(model.predict(data, verbose=0), want)


def test_sequential_takes_the_same_layer_twice():
    """Keras 3: a layer object added again (a repeated block) shares its weights; another
    layer of the same name is still refused."""
    d = layers.Dense(4, activation="relu", name="block")
    m = keras.Sequential([keras.Input((4,)), d, d, layers.Dense(1)])
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert [layer.name for layer in m.layers] == ["block", "block", m.layers[2].name]
    assert len(m.weights) == 4
    w, b = d.get_weights()
    h = np.maximum(np.maximum(x @ w + b, 0) @ w + b, 0)
    wo, bo = m.layers[2].get_weights()
    np.testing.assert_allclose(m(x).numpy(), h @ wo + bo, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="should have unique names"):
        keras.Sequential([d, layers.Dense(4, name="block")])


def test_outputs_not_connected_to_the_inputs_name_their_path_as_keras():
    """Keras 3 (Function._run_through_graph): an output that needs an `Input` the model was
    not given is "Output with path `<keys joined by .>` is not connected to `inputs`"."""
    a, b = keras.Input((3,)), keras.Input((3,))
    o1, o2 = layers.Dense(2)(a), layers.Dense(2)(b)
    for outputs, path in ((o2, ""), ([o1, o2], "1"), ({"x": o1, "y": o2}, "y"),
                          ({"x": [o1, {"z": o2}]}, "x.1.z"),
                          (layers.Add()([layers.Dense(3)(a), b]), "")):
        with pytest.raises(ValueError, match=f"^Output with path `{path}` is not connected "
                                             "to `inputs`$"):
            keras.Model(a, outputs)
    assert keras.Model([a, b], o1).outputs == [o1]     # an unused input is fine


def test_sequential_inputs_and_outputs_before_it_is_built():
    """Keras 3: `inputs`/`outputs` are an AttributeError until the Sequential is built;
    `input`/`output` are the Layer's, defined only once it was called on a KerasTensor."""
    model = keras.Sequential([layers.Dense(2)])
    for attr in ("inputs", "outputs", "input_shape", "output_shape"):
        what = attr.replace("_", " ")
        with pytest.raises(AttributeError, match=f"^Sequential model '{model.name}' has no "
                                                 f"defined {what} yet.$"):
            getattr(model, attr)
    for attr in ("input", "output"):
        with pytest.raises(AttributeError, match=f"^The layer {model.name} has never been "
                                                 f"called and thus has no defined {attr}.$"):
            getattr(model, attr)
    built = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    assert [t.shape for t in built.inputs] == [(None, 3)]
    assert [t.shape for t in built.outputs] == [(None, 2)]
    with pytest.raises(AttributeError, match="has never been called and thus has no defined "
                                             "input"):
        _ = built.input
    x = keras.Input((3,))
    y = built(x)
    assert built.input is x and built.output is y

"""keras.Operation, keras.Function, keras.SymbolicScope and keras.Quantizer
(ndflow/keras/operation.py, keras_function.py, symbolic_scope.py, quantizer_classes.py)
against Keras 3 on TF 2.21 (tests/fixtures/keras_operation_function) and NumPy."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras import quantizer_classes, symbolic_scope
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_operation_function"
CONFIGS = fixture_modules.load("keras_operation_function")
KERAS = np.load(HERE / "values.npz")
KERAS_CONFIGS = json.loads((HERE / "configs.json").read_text())
ScaledRelu, Blend, WithArray, TwoOutputs = CONFIGS.classes(keras)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_operation_runs_on_tensors_and_records_nodes_on_keras_tensors():
    op = ScaledRelu(2.0)
    x = np.array([[-1.0, 0.5, 3.0]], np.float32)
    np.testing.assert_allclose(op(tf.constant(x)).numpy(), np.maximum(x, 0) * 2.0)
    kt = keras.KerasTensor((None, 3))
    out = op(kt)
    assert isinstance(out, keras.KerasTensor) and out.shape == (None, 3)
    assert op.input is kt and op.output is out
    assert out._keras_history.operation is op
    assert isinstance(keras.layers.Dense(2), keras.Operation)   # layers are Operations
    assert not isinstance(object(), keras.Operation)
    assert repr(op) == f"<Operation name={op.name}>"


def test_operation_configs_follow_keras_auto_config():
    assert ScaledRelu(3.0, name="s").get_config() == KERAS_CONFIGS["op/scaled_relu"]
    assert Blend(0.5).get_config() == KERAS_CONFIGS["op/blend"]   # no `name` in __init__
    with pytest.raises(NotImplementedError, match=KERAS_CONFIGS["op/with_array_error"]):
        WithArray(np.ones(3)).get_config()
    again = ScaledRelu.from_config(ScaledRelu(4.0, name="t").get_config())
    assert (again.factor, again.name) == (4.0, "t")
    with pytest.raises(TypeError, match="Error when deserializing class 'Blend'"):
        Blend.from_config({"weight": 1.0, "bogus": 2})


def test_operation_name_must_be_a_string_without_slash():
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        ScaledRelu(name="a/b")


def test_failed_shape_inference_says_which_operation():
    class Broken(keras.Operation):
        def call(self, x):
            return tf.reshape(x, [7, 5])

    with pytest.raises(Exception, match="Could not automatically infer the output shape"):
        Broken()(keras.KerasTensor((2, 3)))


def test_function_matches_keras():
    fn = CONFIGS.build_function(keras)
    a, b = CONFIGS.function_inputs()
    out = fn([a, b])
    np.testing.assert_allclose(out["sum"].numpy(), KERAS["function/sum"], rtol=1e-6)
    np.testing.assert_allclose(out["parts"]["low"].numpy(), KERAS["function/low"], rtol=1e-6)
    np.testing.assert_allclose(out["parts"]["high"].numpy(), KERAS["function/high"], rtol=1e-6)
    # float64 NumPy reference of the same graph
    blend = np.tanh(a.astype(np.float64) * 0.25 + b * 0.75)
    np.testing.assert_allclose(out["sum"].numpy(), _sigmoid(np.maximum(a + b, 0.0) * 1.5),
                               rtol=1e-5)
    np.testing.assert_allclose(out["parts"]["low"].numpy(), np.minimum(blend, 0), atol=1e-6)
    # Keras' operation order (depth, then first met); ndflow's keras.ops.add node is its own
    # KerasOpLayer (Keras' `Add` name is the merging layer's), so it is named by position
    names = [type(op).__name__ for op in fn.operations]
    assert len(names) == len(KERAS_CONFIGS["function/operations"])
    assert [n for n in names if n != "KerasOpLayer"] == \
        [n for n in KERAS_CONFIGS["function/operations"] if n != "Add"]
    assert names.index("KerasOpLayer") == KERAS_CONFIGS["function/operations"].index("Add")
    spec = fn.compute_output_spec([keras.KerasTensor((7, 2, 3)), keras.KerasTensor((7, 2, 3))])
    assert [list(spec["sum"].shape), list(spec["parts"]["low"].shape)] == \
        KERAS_CONFIGS["function/spec"]


def test_function_is_an_operation_usable_symbolically_and_in_models():
    fn = CONFIGS.build_function(keras)
    a, b = keras.Input((2, 3)), keras.Input((2, 3))
    model = keras.Model([a, b], fn([a, b])["sum"])
    x, y = CONFIGS.function_inputs()
    np.testing.assert_allclose(model([x, y]).numpy(), KERAS["function/sum"], rtol=1e-6)
    inner = keras.KerasTensor((None, 3))
    scaled = ScaledRelu(3.0)(inner)
    fn2 = keras.Function(inner, keras.ops.sum(scaled, axis=-1))
    np.testing.assert_allclose(fn2(np.array([[1.0, -2.0, 4.0]], np.float32)).numpy(), [15.0])
    assert fn2.compute_output_shape((5, 3)) == (5,)


def test_function_errors_are_keras():
    a = keras.KerasTensor((None, 3))
    b = keras.KerasTensor((None, 3))
    with pytest.raises(ValueError, match="`inputs` argument cannot be empty"):
        keras.Function([], a)
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Function(a, ScaledRelu()(a + b))
    fn = keras.Function(a, ScaledRelu()(a))
    with pytest.raises(ValueError, match="invalid input structure"):
        fn([np.ones((1, 3)), np.ones((1, 3))])
    with pytest.raises(ValueError, match=r"expected shape \(None, 3\), but received instead a "
                                         r"tensor with shape \(2, 4\)"):
        fn(np.ones((2, 4), np.float32))


def test_symbolic_scope_is_entered_while_shapes_are_inferred():
    seen = []

    class Spy(keras.layers.Layer):
        def call(self, x):
            seen.append(symbolic_scope.in_symbolic_scope())
            return x

    class SpyOp(keras.Operation):
        def call(self, x):
            seen.append(symbolic_scope.in_symbolic_scope())
            return x

    assert not symbolic_scope.in_symbolic_scope()
    Spy()(keras.Input((3,)))
    SpyOp()(keras.KerasTensor((2, 3)))
    Spy()(np.ones((1, 3), np.float32))
    assert seen == [True, True, False]
    with keras.SymbolicScope() as scope:
        assert symbolic_scope.get_symbolic_scope() is scope
        with keras.SymbolicScope():
            assert symbolic_scope.in_symbolic_scope()
        assert symbolic_scope.get_symbolic_scope() is scope
    assert not symbolic_scope.in_symbolic_scope()


def test_quantizer_base_is_keras():
    q = keras.Quantizer(output_dtype="int4")
    x = tf.constant([1.0, 2.0])
    assert q(x) is x and q.output_dtype == "int4"
    with pytest.raises(NotImplementedError, match="does not implement get_config"):
        q.get_config()

    class Halve(keras.Quantizer):
        def __call__(self, x):
            return x / 2

        def get_config(self):
            return {"output_dtype": self.output_dtype}

    again = Halve.from_config(Halve("int8").get_config())
    np.testing.assert_allclose(again(x).numpy(), [0.5, 1.0])


@pytest.mark.parametrize("name", sorted(CONFIGS.QUANTIZE))
def test_abs_max_quantizer_matches_keras(name):
    kwargs, shape, axis = CONFIGS.QUANTIZE[name]
    q = quantizer_classes.AbsMaxQuantizer(**kwargs)
    x = CONFIGS.quantize_input(shape, sorted(CONFIGS.QUANTIZE).index(name))
    values, scale = q(x, axis=axis)
    assert values.dtype == tf.int8
    np.testing.assert_array_equal(values.numpy(), KERAS[f"quantize/{name}/values"])
    np.testing.assert_allclose(scale.numpy(), KERAS[f"quantize/{name}/scale"], rtol=1e-6)
    assert json.loads(json.dumps(q.get_config(), default=list)) == \
        KERAS_CONFIGS[f"quantize/{name}"]
    with pytest.raises(ValueError, match="requires value_range to be within"):
        quantizer_classes.AbsMaxQuantizer(value_range=(-200, 127))


def test_a_model_with_an_operation_step_trains_and_summarizes_it_as_keras_does():
    class Square(keras.Operation):
        def call(self, x):
            return x * x

    x = keras.Input((3,))
    model = keras.Model(x, keras.layers.Dense(2)(Square(name="sq")(x)))
    assert [type(op).__name__ for op in model.layers] == ["InputLayer", "Dense"]
    model.compile(optimizer="sgd", loss="mse")
    data = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
    kernel, bias = (w.numpy() for w in model.weights)
    np.testing.assert_allclose(model.predict(data, verbose=0), data ** 2 @ kernel + bias,
                               rtol=1e-5)
    model.fit(data, np.zeros((8, 2), np.float32), epochs=1, verbose=0)
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    # Keras 3.15's row for the operation: no parameters
    assert "│ sq (Square)                     │ (None, 3)              │             0 │" in text
    assert "Trainable params: 8 (32.00 B)" in text

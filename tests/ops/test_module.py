"""tf.Module as TensorFlow 2.21 has it (expected names and orders checked with TF 2.21), and
eager name scopes naming variables."""

import numpy as np
import pytest

import ndflow as tf


class Dense(tf.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal([n_in, n_out]), name="w")
        self.b = tf.Variable(tf.zeros([n_out]), name="b")

    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


class MLP(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.layers = [Dense(3, 4), Dense(4, 2)]
            self.step = tf.Variable(0, trainable=False, name="step")

    @tf.Module.with_name_scope
    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_variables_and_submodules_are_found_through_attributes():
    m = MLP()
    assert m.name == "mlp" and m.name_scope.name == "mlp/"
    # Sorted attribute order, depth first: 'layers' (its modules later), then 'step'.
    assert [v.name for v in m.variables] == ["mlp/step:0", "mlp/b:0", "mlp/w:0", "mlp/b:0",
                                             "mlp/w:0"]
    assert m.variables[1] is m.layers[0].b and m.variables[4] is m.layers[1].w
    assert m.trainable_variables == m.variables[1:]
    assert m.non_trainable_variables == (m.step,)
    assert m.submodules == tuple(m.layers)
    assert m(tf.ones([2, 3])).shape.as_list() == [2, 2]


def test_graph_mode_names_are_unique_and_methods_run_in_the_scope():
    with tf.Graph().as_default():
        m = MLP()
        assert [v.name for v in m.variables] == ["mlp/step:0", "mlp/b:0", "mlp/w:0",
                                                 "mlp/b_1:0", "mlp/w_1:0"]
        assert m(tf.ones([2, 3])).name == "mlp/Relu_1:0"
        assert MLP().name_scope.name == "mlp_1/"


def test_containers_shared_values_and_cycles():
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    m = tf.Module()
    m.params = {"y": [b, a], "x": (a,)}   # dict keys sorted: x first; `a` listed once
    m.child = tf.Module(name="child")
    m.child.parent = m                    # a cycle does not loop
    m.child.c = tf.Variable(3.0, name="c")
    assert [v.name for v in m.variables] == ["a:0", "b:0", "c:0"]
    assert m.submodules == (m.child,)
    paths = [p for p, _ in m._flatten(predicate=lambda v: isinstance(v, tf.Variable),
                                      with_path=True)]
    # With paths nothing is de-duplicated: the cycle is walked once more, not forever (TF).
    assert paths == [("params", "x", 0), ("params", "y", 0), ("params", "y", 1),
                     ("child", "c"), ("child", "parent", "params", "x", 0),
                     ("child", "parent", "params", "y", 0),
                     ("child", "parent", "params", "y", 1)]


def test_training_a_module_with_a_tape():
    model = Dense(2, 1, name="linear")
    x, y = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), np.array([[1.0], [2.0]], np.float32)
    opt = tf.keras.optimizers.SGD(0.01)
    losses = []
    for _ in range(20):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, model.w) + model.b - y))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
        losses.append(float(loss.numpy()))
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("name", ["my model", "1abc", "a-b", ""])
def test_invalid_names_are_refused(name):
    with pytest.raises(ValueError, match=r"is not a valid module name\. Module names must be "
                                         r"valid Python identifiers"):
        tf.Module(name=name)


def test_default_names_are_the_class_name_in_snake_case():
    class MyHTTPModel(tf.Module):
        pass
    assert tf.Module().name == "module"
    assert MyHTTPModel().name == "my_http_model"
    assert MLP(name="x").name == "x"


def test_eager_name_scopes_nest_and_name_variables():
    with tf.name_scope("outer") as outer:
        with tf.name_scope("inner") as inner:
            v = tf.Variable(1.0, name="v")
        with tf.name_scope("outer/") as again:  # absolute: re-enters exactly
            w = tf.Variable(1.0)
    assert (outer, inner, again) == ("outer/", "outer/inner/", "outer/")
    assert v.name == "outer/inner/v:0" and w.name == "outer/Variable:0"
    assert tf.Variable(1.0, name="top").name == "top:0"

"""tf.function: tracing and retracing rules, captures, structures, side effects, gradients."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.autodiff.gradients import gradients
from ndflow.autodiff.tape import GradientTape
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops import state
from ndflow.ops.nn_activation import relu
from ndflow.ops.reduction import reduce_sum
from ndflow.runtime.func_graph import FuncGraph
from ndflow.runtime.function import function, run_functions_eagerly
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import RuntimeContext


def _t(a, dtype=np.float32):
    return tf.constant(np.asarray(a, dtype))


def _np(x):
    return np.asarray(x.numpy())


# -- tracing and retracing ------------------------------------------------------------------------

def test_traces_once_per_signature_and_side_effects_run_at_trace_time():
    trace_log = []

    @function
    def f(x, y):
        trace_log.append(1)
        return tf.add(tf.matmul(x, y), x)

    a, b = _t(np.eye(2)), _t([[1, 2], [3, 4]])
    for _ in range(3):
        np.testing.assert_allclose(_np(f(a, b)), np.eye(2) @ [[1, 2], [3, 4]] + np.eye(2))
    assert f.experimental_get_tracing_count() == 1
    assert len(trace_log) == 1
    f(_t(np.ones((3, 3))), _t(np.ones((3, 3))))          # new shape -> retrace
    assert f.experimental_get_tracing_count() == 2
    f(_t(np.eye(2), np.float64), _t(np.eye(2), np.float64))  # new dtype -> retrace
    assert f.experimental_get_tracing_count() == 3
    f(_t(2 * np.eye(2)), b)                               # new values, same spec: no retrace
    assert f.experimental_get_tracing_count() == 3
    assert len(trace_log) == 3


def test_python_arguments_are_traced_by_value():
    @function
    def f(x, n, mode="a"):
        out = x
        for _ in range(n):
            out = tf.add(out, x)
        return out

    x = _t([1.0, 2.0])
    np.testing.assert_allclose(_np(f(x, 2)), [3.0, 6.0])
    np.testing.assert_allclose(_np(f(x, n=2)), [3.0, 6.0])  # same binding: no retrace
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(_np(f(x, 3)), [4.0, 8.0])
    assert f.experimental_get_tracing_count() == 2
    f(x, 3, mode="b")
    assert f.experimental_get_tracing_count() == 3


def test_input_signature_gives_one_trace_for_all_batch_sizes():
    @function(input_signature=[TensorSpec(shape=[None, 28, 28, 1], dtype=tf.float32)])
    def f(images):
        return reduce_sum(images, [1, 2, 3])

    for batch in (1, 4, 7):
        x = np.random.default_rng(batch).normal(size=(batch, 28, 28, 1)).astype(np.float32)
        np.testing.assert_allclose(_np(f(tf.constant(x))), x.sum(axis=(1, 2, 3)), rtol=1e-4)
    assert f.experimental_get_tracing_count() == 1
    # TF returns the specs as a tuple, however they were given
    assert f.input_signature == (TensorSpec(shape=[None, 28, 28, 1], dtype=tf.float32),)
    cf = f.get_concrete_function()
    assert isinstance(cf.graph, FuncGraph)
    assert cf.graph.arg_inputs[0].shape.as_list() == [None, 28, 28, 1]
    with pytest.raises(TypeError):
        f(tf.constant(np.ones((2, 28, 28, 3), np.float32)))
    with pytest.raises(TypeError):
        f(tf.constant(np.ones((2, 28, 28, 1), np.float64)))


def test_get_concrete_function_with_spec_is_reused_for_compatible_calls():
    @function
    def f(x):
        return tf.add(x, x)

    cf = f.get_concrete_function(TensorSpec([None, 2], tf.float32))
    assert f.experimental_get_tracing_count() == 1
    assert [op.type for op in cf.graph.get_operations()] == ["Placeholder", "AddV2", "Identity"]
    np.testing.assert_allclose(_np(cf(_t(np.ones((3, 2))))), 2 * np.ones((3, 2)))
    f(_t(np.ones((5, 2))))        # accepted by the [None, 2] trace
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError):
        cf(_t(np.ones((5, 3))))


def test_reduce_retracing_relaxes_shapes():
    @function(reduce_retracing=True)
    def f(x):
        return tf.add(x, 1.0)

    f(_t(np.ones(2)))
    f(_t(np.ones(3)))             # second shape: traced with shape [None]
    f(_t(np.ones(4)))
    f(_t(np.ones(9)))
    assert f.experimental_get_tracing_count() == 2


def test_numpy_arguments_are_tensors():
    @function
    def f(x):
        return tf.add(x, x)

    np.testing.assert_allclose(_np(f(np.ones(3, np.float32))), 2 * np.ones(3))
    f(np.full(3, 5, np.float32))
    assert f.experimental_get_tracing_count() == 1


# -- structures ------------------------------------------------------------------------------------

def test_nested_structures_in_and_out():
    @function
    def f(inputs, scale):
        a, b = inputs["pair"]
        return {"sum": tf.add(a, b), "parts": [a, (b, None)], "scale": scale, "none": None}

    x, y = _t([1.0]), _t([2.0])
    out = f({"pair": (x, y)}, 3)
    assert set(out) == {"sum", "parts", "scale", "none"}
    np.testing.assert_allclose(_np(out["sum"]), [3.0])
    assert isinstance(out["parts"], list) and isinstance(out["parts"][1], tuple)
    np.testing.assert_allclose(_np(out["parts"][1][0]), [2.0])
    assert out["parts"][1][1] is None and out["none"] is None
    assert isinstance(out["scale"], EagerTensor) and int(out["scale"]) == 3  # TF: tensor
    f({"pair": (y, x)}, 3)
    assert f.experimental_get_tracing_count() == 1
    f({"pair": [y, x]}, 3)        # list instead of tuple: a new structure
    assert f.experimental_get_tracing_count() == 2


def test_returns_none_and_python_objects():
    marker = object()

    @function
    def f(x):
        tf.add(x, x)
        return None

    @function
    def g(x):
        return marker, x

    assert f(_t(1.0)) is None
    m, x = g(_t(1.0))
    assert m is marker and float(x) == 1.0


# -- captures -----------------------------------------------------------------------------------

def test_captures_eager_tensors_as_placeholders_fed_each_call():
    c = _t([[1.0, 2.0], [3.0, 4.0]])

    @function
    def f(x):
        return tf.matmul(x, c)

    x = _t(np.eye(2))
    np.testing.assert_allclose(_np(f(x)), c.numpy())
    cf = f.get_concrete_function(x)
    assert cf.captured_inputs == [c]
    assert len(cf.graph.captures) == 1
    (ext, ph), = cf.graph.captures
    assert ext is c and ph.op.type == "Placeholder"
    assert not any(op.type == "Const" for op in cf.graph.get_operations())


def test_returning_a_captured_tensor():
    c = _t([5.0])

    @function
    def f():
        return c

    np.testing.assert_allclose(_np(f()), [5.0])


def test_variable_capture_and_stateful_ops_run_when_not_returned():
    v = tf.Variable(np.zeros(2, np.float32)) if hasattr(tf, "Variable") else None
    if v is None:
        from ndflow.ops.variables import Variable
        v = Variable(np.zeros(2, np.float32))

    @function
    def step(x):
        v.assign_add(x)          # nothing returned depends on it: still runs

    @function
    def read():
        return v.read_value()

    step(_t([1.0, 2.0]))
    step(_t([1.0, 2.0]))
    np.testing.assert_allclose(v.numpy(), [2.0, 4.0])
    np.testing.assert_allclose(_np(read()), [2.0, 4.0])
    v.assign(np.array([10.0, 0.0], np.float32))    # variables are captured by reference
    np.testing.assert_allclose(_np(read()), [10.0, 0.0])
    assert step.experimental_get_tracing_count() == 1
    cf = read.get_concrete_function()
    assert cf.variables == (v,)
    assert cf.captured_inputs[0] is v.handle


def test_low_level_resource_handle_capture():
    h = state.var_handle_op(tf.float32, [], shared_name="test_function_resource_capture")
    state.assign_variable_op(h, _t(1.0))

    @function
    def bump():
        state.assign_add_variable_op(h, _t(1.0))
        return state.read_variable_op(h, tf.float32)

    assert float(bump()) == 2.0
    assert float(bump()) == 3.0


# -- errors ----------------------------------------------------------------------------------------

def test_runtime_errors_carry_tf_error_types():
    @function(input_signature=[TensorSpec([None, None]), TensorSpec([None, None])])
    def f(a, b):
        return tf.matmul(a, b)

    with pytest.raises(InvalidArgumentError) as e:
        f(_t(np.ones((2, 3))), _t(np.ones((2, 3))))
    assert "MatMul" in str(e.value)


def test_trace_time_errors_propagate():
    @function
    def f(a, b):
        return tf.matmul(a, b)

    with pytest.raises(ValueError, match="Dimensions must be equal"):
        f(_t(np.ones((2, 3))), _t(np.ones((2, 3))))


# -- nesting and graph mode ---------------------------------------------------------------------

def test_nested_functions_inline_and_trace_once():
    inner_traces = []

    @function
    def inner(z, w):
        inner_traces.append(1)
        return tf.add(z, w)

    @function
    def outer(x):
        y = tf.add(x, x)

        @function
        def closes_over_outer(z):
            return tf.add(z, y)        # captures a tensor of the outer graph

        return inner(closes_over_outer(x), y)

    x = _t([1.0, 2.0])
    np.testing.assert_allclose(_np(outer(x)), [1 + 2 + 2, 2 + 4 + 4])
    assert len(inner_traces) == 1
    g = outer.get_concrete_function(x).graph
    assert all(op.graph is g for op in g.get_operations())
    assert any(op.name.startswith("inner") for op in g.get_operations())


def test_function_called_in_a_v1_graph_is_inlined():
    @function
    def f(x):
        return relu(x)

    g = Graph()
    with g.as_default():
        x = tf.constant(np.array([-1.0, 2.0], np.float32))
        y = f(x)
    (out,) = Plan(g, [], [y], [], RuntimeContext()).run([])
    np.testing.assert_allclose(out.numpy(), [0.0, 2.0])


def test_method_decorator_binds_per_instance():
    class Model:
        def __init__(self, k):
            self.k = _t(k)

        @function
        def __call__(self, x):
            return tf.add(x, self.k)

    m1, m2 = Model(1.0), Model(10.0)
    assert float(m1(_t(1.0))) == 2.0
    assert float(m2(_t(1.0))) == 11.0


def test_run_functions_eagerly():
    calls = []

    @function
    def f(x):
        calls.append(1)
        return tf.add(x, x)

    run_functions_eagerly(True)
    try:
        f(_t(1.0))
        f(_t(1.0))
    finally:
        run_functions_eagerly(False)
    assert len(calls) == 2 and f.experimental_get_tracing_count() == 0
    f(_t(1.0))
    f(_t(1.0))
    assert len(calls) == 3


# -- gradients ------------------------------------------------------------------------------------

def _numeric_grad(fn, x: np.ndarray, eps=1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d.reshape(-1)[i] = eps
        g.reshape(-1)[i] = (float(fn(x + d)) - float(fn(x - d))) / (2 * eps)
    return g


def test_tape_around_function_call_matches_finite_differences():
    w = tf.constant(np.array([[0.5, -1.0], [2.0, 0.25]]))

    @function
    def loss(x):
        return reduce_sum(relu(tf.matmul(x, w)), [0, 1])

    x0 = np.array([[0.3, -0.7], [1.1, 0.4]])
    x = tf.constant(x0)
    with GradientTape() as tape:
        tape.watch(x)
        y = loss(x)
    g = tape.gradient(y, x)
    num = _numeric_grad(lambda a: loss(tf.constant(a)), x0)
    np.testing.assert_allclose(g.numpy(), num, rtol=1e-6, atol=1e-6)
    # Unwatched calls run the plan and give the same value.
    np.testing.assert_allclose(float(loss(x)), float(y))


def test_tape_around_function_watches_captured_variables():
    from ndflow.ops.variables import Variable
    v = Variable(np.array([1.0, -2.0]))

    @function
    def f(x):
        return relu(tf.add(x, v))

    x = tf.constant(np.array([0.5, 3.0]))
    with GradientTape() as tape:
        y = f(x)
    assert tape.watched_variables() == (v,)
    (gv,) = tape.gradient(y, [v])
    np.testing.assert_allclose(gv.numpy(), [1.0, 1.0])  # relu(0.5 + 1, 3 - 2) both active


def test_tape_inside_function():
    @function
    def grad_of_relu_sum(x):
        with GradientTape() as tape:
            tape.watch(x)
            y = reduce_sum(relu(tf.add(x, x)), [0])
        return tape.gradient(y, x)

    np.testing.assert_allclose(_np(grad_of_relu_sum(_t([-1.0, 2.0]))), [0.0, 2.0])


def test_tf_gradients_inside_function():
    @function
    def f(x, w):
        y = tf.matmul(x, w)
        return gradients(y, [x, w])

    x, w = _t([[1.0, 2.0]]), _t([[3.0], [4.0]])
    gx, gw = f(x, w)
    np.testing.assert_allclose(_np(gx), [[3.0, 4.0]])
    np.testing.assert_allclose(_np(gw), [[1.0], [2.0]])


def test_second_order_through_function_with_nested_tapes():
    @function
    def cube(x):
        return x * x * x

    x = tf.constant(np.array(1.5))
    with GradientTape() as outer:
        outer.watch(x)
        with GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    np.testing.assert_allclose(float(dy), 3 * 1.5 ** 2)
    np.testing.assert_allclose(float(d2y), 6 * 1.5)


def test_tape_and_tf_gradients_inside_function_reach_captured_variables():
    from ndflow.ops.variables import Variable
    v = Variable(np.array([1.0, -2.0]))

    @function
    def grads(x):
        with GradientTape() as tape:
            y = reduce_sum(relu(tf.add(x, v)), [0])
        (gt,) = tape.gradient(y, [v])
        (gs,) = gradients(y, [v])
        return gt, gs, tape.watched_variables()[0] is v

    gt, gs, watched = grads(tf.constant(np.array([0.5, 1.0])))
    np.testing.assert_allclose(_np(gt), [1.0, 0.0])
    np.testing.assert_allclose(_np(gs), [1.0, 0.0])
    assert bool(watched)


def test_pretty_printed_signatures_as_tensorflow_prints_them():
    """The text TF 2.21 printed for this very function (run in the fixture environment)."""
    @tf.function
    def f(x, y=2):
        return x + 1

    f(tf.constant(1))
    f(tf.constant([1.0]), y=3)
    assert f.pretty_printed_concrete_signatures() == (
        "Input Parameters:\n"
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.int32, name=None)\n"
        "  y (POSITIONAL_OR_KEYWORD): Literal[2]\n"
        "Output Type:\n"
        "  TensorSpec(shape=(), dtype=tf.int32, name=None)\n"
        "Captures:\n"
        "  None\n\n"
        "Input Parameters:\n"
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(1,), dtype=tf.float32, name=None)\n"
        "  y (POSITIONAL_OR_KEYWORD): Literal[3]\n"
        "Output Type:\n"
        "  TensorSpec(shape=(1,), dtype=tf.float32, name=None)\n"
        "Captures:\n"
        "  None")
    v = tf.Variable(1.0)
    text = tf.function(lambda x: x * v).get_concrete_function(
        tf.TensorSpec([None], tf.float32)).pretty_printed_signature()
    assert "TensorSpec(shape=(None,), dtype=tf.float32, name=None)" in text
    assert text.endswith("TensorSpec(shape=(), dtype=tf.resource, name=None)")


def test_functions_and_arguments_named_with_a_leading_underscore():
    # An op name may not start with "_": a parameter `_x` takes TF's fallback placeholder
    # name, and a nested function `_helper` (or a lambda) is inlined under a scope without
    # the underscores; both once raised "'_x' is not a valid node name".
    @tf.function
    def scaled(_x):
        return _x * 2.0

    @tf.function
    def _helper(x):
        return x + 1.0

    twice_plus_one = tf.function(lambda p: p * 2.0 + 1.0)

    @tf.function
    def outer(x):
        return _helper(x) * twice_plus_one(x)

    assert scaled(tf.constant(1.5)).numpy() == 3.0
    assert outer(tf.constant(2.0)).numpy() == 15.0
    ops = outer.get_concrete_function(tf.constant(2.0)).graph.get_operations()
    assert {op.name.split("/")[0] for op in ops} >= {"helper", "lambda_"}
    mapped = tf.data.Dataset.range(3).map(lambda v: twice_plus_one(tf.cast(v, tf.float32)))
    assert list(mapped.as_numpy_iterator()) == [1.0, 3.0, 5.0]


def test_concrete_function_output_shapes_and_dtypes():
    """TF's `output_shapes` / `output_dtypes`: the structured outputs' static shapes and
    dtypes (a Python value returned becomes a tensor; None has an unknown shape)."""
    @tf.function
    def f(x):
        return {"a": x, "b": (x[0], tf.cast(x, tf.int32)), "c": 3}

    cf = f.get_concrete_function(tf.TensorSpec([None, 3]))
    assert cf.output_shapes == {"a": tf.TensorShape([None, 3]),
                                "b": (tf.TensorShape([3]), tf.TensorShape([None, 3])),
                                "c": tf.TensorShape([])}
    assert cf.output_dtypes == {"a": tf.float32, "b": (tf.float32, tf.int32), "c": tf.int32}

    @tf.function
    def g(x):
        return None

    none = g.get_concrete_function(tf.TensorSpec([2]))
    assert none.output_shapes.rank is None and none.output_dtypes is None


def test_concrete_function_str_repr_and_literal_arguments_as_tf():
    """TF 2.21: str is the pretty-printed signature, repr the one-line one; the Python values
    a trace took are its parameters' defaults and must be passed unchanged; a tensor of
    another dtype is the executor's InvalidArgumentError."""
    @tf.function
    def power(a, b):
        return a ** b

    square = power.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    assert str(square) == (
        "ConcreteFunction Input Parameters:\n"
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)\n"
        "  b (POSITIONAL_OR_KEYWORD): Literal[2]\nOutput Type:\n"
        "  TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)\nCaptures:\n  None")
    assert repr(square).startswith(
        "<ConcreteFunction (a: TensorSpec(shape=<unknown>, dtype=tf.float32, name=None), b: "
        "Literal[2]) -> TensorSpec(shape=<unknown>, dtype=tf.float32, name=None) at 0x")
    for result in (square(tf.constant(3.0)), square(a=tf.constant(3.0)),
                   square(tf.constant(3.0), 2)):
        assert float(result) == 9.0
    with pytest.raises(TypeError, match=r"failed due to `Can not cast 3 to Literal\[2\]`"):
        square(tf.constant(3.0), b=3)
    with pytest.raises(TypeError, match="failed due to `too many positional arguments`"):
        square(1, 2, 3)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"input #0\(zero-based\) was expected to be a float tensor but is "
                             r"a int32 tensor"):
        square(tf.constant(1))


def test_concrete_function_def_is_tfs_proto():
    """`ConcreteFunction.function_def`: TF's FunctionDef message, with the args, returns and
    body TF 2.21 gives for the same functions (printed by TF 2.21 for these two)."""
    @tf.function
    def f(x, y):
        return x * 2.0 + y, tf.reduce_sum(x)
    spec = tf.TensorSpec([3], tf.float32)
    fd = f.get_concrete_function(spec, spec).function_def
    assert type(fd).__name__ == "FunctionDef"
    assert [a.name for a in fd.signature.input_arg] == ["x", "y"]
    assert [a.type for a in fd.signature.input_arg] == [1, 1]
    assert dict(fd.ret) == {"identity": "Identity:output:0", "identity_1": "Identity_1:output:0"}
    assert sorted(n.op for n in fd.node_def) == ["AddV2", "Const", "Const", "Identity",
                                                 "Identity", "Mul", "Sum"]
    v = tf.Variable(2.0)

    @tf.function
    def g(x):
        return {"a": x * v}
    fd = g.get_concrete_function(tf.TensorSpec([2])).function_def
    assert [(a.name, a.type) for a in fd.signature.input_arg] == [
        ("x", 1), ("mul_readvariableop_resource", 20)]
    assert dict(fd.ret) == {"identity": "Identity:output:0"}
    reads = [n for n in fd.node_def if n.op == "ReadVariableOp"]
    assert [list(n.input) for n in reads] == [["mul_readvariableop_resource"]]

"""tf.switch_case: eager, tf.function and Session (Case/StatelessCase ops), default and
out-of-range branches, captures, gradients (finite differences), GraphDef round trip, errors
(messages as TensorFlow 2.21 gives them)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1


def _t(a, dtype=np.float64):
    return tf.constant(np.asarray(a, dtype))


def _i(i):
    return tf.constant(i, tf.int32)


def _branches(x):
    return [lambda: tf.reduce_sum(x * x * x), lambda: tf.reduce_sum(tf.tanh(x) * 2.0),
            lambda: tf.reduce_sum(x) * 0.5]


def _numpy_branches(x):
    return [np.sum(x ** 3), np.sum(np.tanh(x) * 2.0), np.sum(x) * 0.5]


def _numeric(fn, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        g.flat[i] = (fn(x + d) - fn(x - d)) / (2 * eps)
    return g


def _case_types(fn, *args) -> list:
    return [op.type for op in fn.get_concrete_function(*args).graph.get_operations()]


# -- values ------------------------------------------------------------------------------------

def test_eager_calls_only_the_chosen_branch_and_out_of_range_takes_the_last():
    calls = []

    def branch(k):
        def fn():
            calls.append(k)
            return tf.constant(float(k))
        return fn

    fns = [branch(0), branch(1), branch(2)]
    assert tf.switch_case(_i(1), fns).numpy() == 1.0
    assert tf.switch_case(_i(7), fns).numpy() == 2.0
    assert tf.switch_case(_i(-1), fns).numpy() == 2.0
    assert tf.switch_case(_i(-1), fns, default=branch(9)).numpy() == 9.0
    assert tf.switch_case(_i(0), fns, default=branch(9)).numpy() == 0.0
    assert tf.switch_case(tf.constant(1, tf.int64), fns).numpy() == 1.0
    assert calls == [1, 2, 2, 9, 0, 1]


@pytest.mark.parametrize("index", [0, 1, 2, 3, -4])
def test_function_builds_stateless_case_matching_numpy(index):
    @tf.function
    def f(i, x):
        return tf.switch_case(i, _branches(x))

    x = np.array([0.3, -1.2, 2.0])
    want = _numpy_branches(x)[index if 0 <= index < 3 else -1]
    np.testing.assert_allclose(f(_i(index), _t(x)).numpy(), want, rtol=1e-12)
    assert "StatelessCase" in _case_types(f, _i(0), _t(x))


def test_dict_and_pairs_are_ordered_by_key_and_default_runs_out_of_range():
    g = tf.Graph()
    with g.as_default():
        i = v1.placeholder(tf.int32, [])
        x = tf.constant(2.0)
        by_dict = tf.switch_case(i, {1: lambda: x * 2.0, 0: lambda: x * 3.0},
                                 default=lambda: x + 100.0)
        by_pairs = v1.switch_case(i, [(1, lambda: {"a": x - 1.0}), (0, lambda: {"a": x})])
        names = [(op.name, op.type) for op in g.get_operations()][:4]
        with v1.Session() as s:
            got = [s.run([by_dict, by_pairs["a"]], {i: k}) for k in (0, 1, 2, -5)]
    assert names[2] == ("switch_case/indexed_case", "StatelessCase")
    assert [float(a) for a, _ in got] == [6.0, 4.0, 102.0, 102.0]
    assert [float(b) for _, b in got] == [2.0, 1.0, 1.0, 1.0]


def test_nested_structures_and_multiple_outputs():
    @tf.function
    def f(i):
        return tf.switch_case(i, [lambda: (tf.constant(1.0), {"k": tf.constant([1, 2])}),
                                  lambda: (tf.constant(2.0), {"k": tf.constant([3, 4])})])

    a, d = f(_i(1))
    assert a.numpy() == 2.0 and d["k"].numpy().tolist() == [3, 4]


def test_variable_updated_only_in_the_taken_branch():
    v = tf.Variable(1.0)
    w = tf.Variable(10.0)

    @tf.function
    def f(i):
        return tf.switch_case(i, [lambda: v.assign_add(5.0), lambda: w.assign_add(1.0),
                                  lambda: v.read_value() + w.read_value()])

    assert "Case" in _case_types(f, _i(0))
    assert f(_i(0)).numpy() == 6.0
    assert (v.numpy(), w.numpy()) == (6.0, 10.0)
    assert f(_i(1)).numpy() == 11.0
    assert (v.numpy(), w.numpy()) == (6.0, 11.0)
    assert f(_i(2)).numpy() == 17.0
    assert (v.numpy(), w.numpy()) == (6.0, 11.0)


def test_session_branch_returning_an_op_runs_it_only_when_taken():
    g = tf.Graph()
    with g.as_default():
        i = v1.placeholder(tf.int32, [])
        v = tf.Variable(1.0)
        r = tf.switch_case(i, [lambda: v.assign_add(1.0).op, tf.no_op])
        with v1.Session() as s:
            s.run(v.initializer)
            s.run(r, {i: 1})
            assert s.run(v) == 1.0
            assert s.run(r, {i: 0}) == 0
            assert s.run(v) == 2.0


# -- gradients -----------------------------------------------------------------------------------

@pytest.mark.parametrize("index", [0, 1, 2, 5])
def test_gradient_with_tape_inside_function(index):
    @tf.function
    def grad(x, i):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.switch_case(i, _branches(x))
        return tape.gradient(y, x)

    x = np.array([0.3, -1.2, 2.0])
    k = index if index < 3 else 2
    want = _numeric(lambda a: _numpy_branches(a)[k], x)
    np.testing.assert_allclose(grad(_t(x), _i(index)).numpy(), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("index", [0, 1])
def test_gradient_in_session_with_captured_variable_used_by_one_branch(index):
    g = tf.Graph()
    with g.as_default():
        i = v1.placeholder(tf.int32, [])
        x = v1.placeholder(tf.float64, [3])
        w = tf.Variable(np.array([1.0, 2.0, -1.0]), dtype=tf.float64)
        y = tf.switch_case(i, [lambda: tf.reduce_sum(tf.tanh(x) * w),
                               lambda: tf.reduce_sum(x * x)])
        gx, gw = v1.gradients(y, [x, w])
        with v1.Session() as s:
            s.run(w.initializer)
            xv = np.array([0.5, -0.7, 1.1])
            got_x, got_w = s.run([gx, gw], {i: index, x: xv})
    wv = np.array([1.0, 2.0, -1.0])
    fwd = [lambda a: np.sum(np.tanh(a) * wv), lambda a: np.sum(a * a)][index]
    np.testing.assert_allclose(got_x, _numeric(fwd, xv), rtol=1e-6, atol=1e-8)
    want_w = np.tanh(xv) if index == 0 else np.zeros(3)
    np.testing.assert_allclose(got_w, want_w, rtol=1e-12)


def test_eager_tape_gradient_through_the_chosen_branch():
    x = _t([0.5, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.switch_case(_i(0), [lambda: tf.reduce_sum(x * x), lambda: tf.reduce_sum(x)])
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0, 4.0])


# -- GraphDef ------------------------------------------------------------------------------------

def test_graph_def_round_trip_with_list_of_funcs_attr():
    g = tf.Graph()
    with g.as_default():
        i = v1.placeholder(tf.int32, [], name="i")
        x = tf.constant(2.0)
        r = tf.switch_case(i, [lambda: x * 2.0, lambda: x * 3.0, lambda: x * x + 1.0])
        gd = g.as_graph_def()
    node = next(n for n in gd.node if n.op == "StatelessCase")
    names = [f.name for f in node.attr["branches"].list.func]
    assert len(names) == 3
    assert set(names) <= {f.signature.name for f in gd.library.function}
    g2 = tf.Graph()
    with g2.as_default():
        i2 = v1.placeholder(tf.int32, [])
        (r2,) = v1.import_graph_def(gd, input_map={"i:0": i2}, return_elements=[r.name])
        with v1.Session() as s:
            assert [float(s.run(r2, {i2: k})) for k in (0, 1, 2, 3)] == [4.0, 6.0, 5.0, 5.0]


# -- errors -------------------------------------------------------------------------------------

def _graph_errors():
    x = tf.constant(1.0)
    i = _i(0)
    return [
        (lambda: tf.switch_case(1, [lambda: x]), TypeError,
         "'branch_index' must be a Tensor, got <class 'int'>"),
        (lambda: tf.switch_case(tf.constant(1.0), [lambda: x]), TypeError,
         "'branch_index' must be an integer Tensor, got <dtype: 'float32'>"),
        (lambda: tf.switch_case(i, []), ValueError,
         "Must provide at least one item in 'branch_fns'"),
        (lambda: tf.switch_case(i, "ab"), TypeError,
         "'branch_fns' must be a list, tuple, or dict"),
        (lambda: tf.switch_case(i, [1]), TypeError,
         "Each entry in 'branch_fns' must be a 2-tuple. Received 1."),
        (lambda: tf.switch_case(i, {0: lambda: x, 2: lambda: x}), ValueError,
         "branch indices (keys) must form contiguous range of [0 to 2) but found {0,2}"),
        (lambda: tf.switch_case(i, {"a": lambda: x}), TypeError,
         "key must be a Python `int`, got <class 'str'>"),
        (lambda: tf.switch_case(i, {0: 5}), TypeError, "fn for key 0 must be callable."),
        (lambda: tf.switch_case(i, [lambda: x, lambda: tf.constant(1)]), TypeError,
         "branches[0] and branches[1] arguments to tf.switch_case must have the same number, "
         "type, and overall structure of return values."),
        (lambda: tf.switch_case(i, [lambda: x, lambda: x, lambda: (x, x)]), TypeError,
         "branches[0] and branches[2] arguments to tf.switch_case"),
        (lambda: tf.switch_case(tf.constant(1, tf.int64), [lambda: x]), TypeError,
         "Input 'branch_index' of 'StatelessCase' Op has type int64 that does not match "
         "expected type of int32"),
    ]


@pytest.mark.parametrize("case", range(len(_graph_errors())))
def test_errors_as_tensorflow_gives_them(case):
    with tf.Graph().as_default():
        fn, exc, msg = _graph_errors()[case]
        with pytest.raises(exc) as info:
            fn()
        assert msg in str(info.value)


def test_eager_errors():
    with pytest.raises(TypeError, match="'branch_index' must be a Tensor"):
        tf.switch_case(1, [lambda: 1])
    with pytest.raises(ValueError, match="at least one item"):
        tf.switch_case(_i(0), {})

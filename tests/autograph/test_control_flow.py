"""AutoGraph: Python control flow on tensors inside tf.function becomes graph control flow.

Each converted function is checked against the same Python function run eagerly (Python's own
semantics on concrete values: the reference AutoGraph must reproduce) on several inputs, and
the traced graph is checked for the staged ops (If/While) or their absence where the condition
is a Python value. Error cases compare with TensorFlow 2.21's messages.
"""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf


def _op_types(fn, *args) -> set:
    cf = fn.get_concrete_function(*args)
    return {op.type for op in cf.graph.get_operations()}


def _same_as_eager(py_fn, *arg_sets):
    """tf.function(py_fn) gives what py_fn gives eagerly, for every argument set."""
    graph_fn = tf.function(py_fn)
    for args in arg_sets:
        want = py_fn(*[tf.constant(a) for a in args])
        got = graph_fn(*[tf.constant(a) for a in args])
        for w, g in zip(tf.nest.flatten(want), tf.nest.flatten(got)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    return graph_fn


# -- if ------------------------------------------------------------------------------------------

def test_if_elif_else_on_a_tensor_becomes_cond():
    def f(x):
        if x > 10:
            y = x * 2
        elif x > 0:
            y = x + 100
        else:
            y = -x
        return y
    g = _same_as_eager(f, (20.0,), (5.0,), (-3.0,))
    assert {"If", "StatelessIf"} & _op_types(g, tf.TensorSpec([], tf.float32))


def test_if_on_a_python_value_stays_python():
    def f(x, flag):
        if flag:
            x = x * 3.0
        return x
    g = tf.function(f)
    assert float(g(tf.constant(2.0), True)) == 6.0
    assert float(g(tf.constant(2.0), False)) == 2.0
    types = _op_types(g, tf.TensorSpec([], tf.float32), True)
    assert not {"If", "StatelessIf"} & types


def test_early_return_in_one_branch():
    def f(x):
        if x > 0:
            return x * 2
        return -x
    _same_as_eager(f, (3.0,), (-4.0,))


def test_variable_defined_in_one_branch_only_is_tfs_error():
    @tf.function
    def f(x):
        if x > 0:
            y = x
        return y  # noqa: F821 - undefined on the else path, as TF's test
    with pytest.raises(ValueError, match="'y' must also be initialized in the else branch"):
        f(tf.constant(1.0))


def test_branch_dtype_mismatch_is_tfs_error():
    @tf.function
    def f(x):
        if x > 0:
            y = 1
        else:
            y = tf.constant(2.0)
        return y
    with pytest.raises(TypeError, match="'y' has dtype int32 in the main branch, but dtype "
                                        "float32 in the else branch"):
        f(tf.constant(1.0))


def test_temporaries_of_one_branch_are_not_outputs():
    def f(x):
        if x > 0:
            t = x * x  # only used inside the branch
            x = t + 1
        return x
    _same_as_eager(f, (3.0,), (-2.0,))


# -- while ---------------------------------------------------------------------------------------

def test_while_on_a_tensor_becomes_while_loop():
    def f(n):
        i = tf.constant(0)
        total = tf.constant(0)
        while i < n:
            total += i * i
            i += 1
        return total
    g = _same_as_eager(f, (0,), (1,), (7,))
    assert {"While", "StatelessWhile"} & _op_types(g, tf.TensorSpec([], tf.int32))


def test_while_with_break_and_continue():
    def f(n):
        i = 0
        acc = 0
        while i < n:
            i += 1
            if i % 2 == 0:
                continue
            if acc > 20:
                break
            acc += i
        return i, acc
    _same_as_eager(f, (0,), (5,), (30,))


def test_while_else_runs_without_break():
    def f(n):
        x = 0
        while x < n:
            x += 1
        else:
            x += 100
        return x
    _same_as_eager(f, (3,), (0,))


def test_loop_variable_changing_shape_is_tfs_error():
    @tf.function
    def f(x):
        for _ in tf.range(3):
            x = tf.concat([x, x], 0)
        return x
    with pytest.raises(ValueError, match=r"'x' has shape \(1,\) before the loop, but shape "
                                         r"\(2,\) after one iteration"):
        f(tf.constant([1.0]))


def test_set_loop_options_shape_invariants():
    @tf.function
    def f(x):
        for _ in tf.range(3):
            tf.autograph.experimental.set_loop_options(
                shape_invariants=[(x, tf.TensorShape([None]))])
            x = tf.concat([x, x], 0)
        return x
    np.testing.assert_array_equal(f(tf.constant([1.0])).numpy(), np.ones(8))


def test_loop_variable_changing_dtype_is_an_error():
    @tf.function
    def f(n):
        s = 0
        for _ in tf.range(n):
            s += 0.5
        return s
    with pytest.raises(TypeError, match="AddV2"):
        f(tf.constant(3))


# -- for -----------------------------------------------------------------------------------------

def test_for_over_tf_range_and_range_of_a_tensor():
    def f(n):
        s = 0
        for i in tf.range(n):
            s += i
        t = 0
        for j in range(n):
            t += 2 * j
        return s, t
    g = _same_as_eager(f, (0,), (4,), (9,))
    assert {"While", "StatelessWhile"} & _op_types(g, tf.TensorSpec([], tf.int32))


def test_for_over_tensor_rows_with_break():
    def f(x):
        s = tf.constant(0.0)
        for row in x:
            s += tf.reduce_sum(row)
            if s > 5:
                break
        return s
    _same_as_eager(f, (np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32),),
                   (np.zeros((2, 2), np.float32),))


def test_for_over_a_python_list_is_unrolled():
    def f(x):
        out = []
        for k in [1.0, 2.0, 3.0]:
            out.append(x * k)
        return tf.stack(out)
    g = _same_as_eager(f, (2.0,))
    assert not {"While", "StatelessWhile"} & _op_types(g, tf.TensorSpec([], tf.float32))


def test_return_inside_a_tensor_loop_as_tensorflow():
    @tf.function
    def first(n):
        for i in tf.range(n):
            return i * 10
        return -1
    assert int(first(tf.constant(3))) == 0
    with pytest.raises(tf.errors.InvalidArgumentError, match="loop must iterate at least once "
                                                             "to initialize the function "
                                                             "return value"):
        first(tf.constant(0))

    @tf.function
    def conditional(n):
        for i in tf.range(n):
            if i > 2:
                return i
        return -1
    with pytest.raises(NotImplementedError, match="a return statement cannot be placed inside "
                                                  "this TensorFlow loop"):
        conditional(tf.constant(10))


def test_iterate_used_after_the_loop():
    def f(n):
        i = -1
        for i in tf.range(n):  # noqa: B007 - the iterate is what is tested
            pass
        return i
    _same_as_eager(f, (3,))


def test_variable_first_defined_in_the_loop_is_initialized_as_tf_does():
    @tf.function
    def f(n):
        for i in tf.range(n):
            last = i * 10
        return last  # noqa: F821
    assert int(f(tf.constant(4))) == 30


def test_nested_loops_and_conditionals():
    def f(n):
        total = 0
        for i in tf.range(n):
            j = 0
            while j < i:
                if (i + j) % 3 == 0:
                    total += i * j
                j += 1
        return total
    _same_as_eager(f, (6,), (1,))


# -- expressions ---------------------------------------------------------------------------------

def test_and_or_not_and_conditional_expression_on_tensors():
    def f(x):
        a = x > 0 and x < 10
        b = x < -5 or x > 5
        c = not x > 0
        d = x if x > 0 else -x
        return a, b, c, d
    _same_as_eager(f, (3.0,), (-7.0,), (12.0,))


def test_len_of_a_tensor():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def f(x):
        return len(x)
    assert int(f(tf.constant([1, 2, 3]))) == 3


# -- conversion ----------------------------------------------------------------------------------

def _helper_abs(x):
    if x < 0:
        return -x
    return x


def test_called_user_functions_are_converted_recursively():
    @tf.function
    def f(x):
        return _helper_abs(x) + 1.0
    assert float(f(tf.constant(-3.0))) == 4.0
    assert float(f(tf.constant(2.0))) == 3.0


def test_methods_closures_and_super():
    class Base:
        def scale(self, x):
            return x * 2.0

    class Model(Base):
        def __init__(self):
            self.calls = 0

        @tf.function
        def __call__(self, x):
            if x > 0:
                x = super().scale(x)
            return x

    m = Model()
    assert float(m(tf.constant(3.0))) == 6.0
    assert float(m(tf.constant(-3.0))) == -3.0

    offset = tf.constant(10.0)

    @tf.function
    def g(x):
        if x > 0:
            x = x + offset
        return x
    assert float(g(tf.constant(1.0))) == 11.0


def test_autograph_false_leaves_python_control_flow():
    @tf.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        f(tf.constant(1.0))


def test_do_not_convert():
    @tf.autograph.experimental.do_not_convert
    def helper(x):
        if x > 0:
            return x
        return -x

    @tf.function
    def f(x):
        return helper(x)
    with pytest.raises(TypeError, match="as a Python `bool`"):
        f(tf.constant(1.0))


def test_to_code_shows_the_functional_form():
    def f(x):
        while x > 0:
            x -= 1
        return x
    code = tf.autograph.to_code(f)
    assert "ag__.while_stmt(" in code and "def loop_body():" in code
    assert "nonlocal x" in code
    converted = tf.autograph.to_graph(f)
    assert int(converted(5)) == 0  # Python values: Python semantics


def test_errors_name_the_users_file_and_line():
    @tf.function
    def f(x):
        if x > 0:
            y = x
        return y  # noqa: F821
    with pytest.raises(ValueError) as info:
        f(tf.constant(1.0))
    text = str(info.value)
    assert text.startswith("in user code:")
    assert f'File "{__file__}"' in text and "if x > 0:" in text


def test_assert_and_print_with_tfs_optional_features(capfd):
    features = [tf.autograph.experimental.Feature.ASSERT_STATEMENTS,
                tf.autograph.experimental.Feature.BUILTIN_FUNCTIONS]

    @tf.function(experimental_autograph_options=features)
    def f(x):
        assert x > 0, "must be positive"
        print("value", x)
        return x
    assert float(f(tf.constant(2.0))) == 2.0
    assert float(f(tf.constant(5.0))) == 5.0
    out = capfd.readouterr().out
    assert "value 2" in out and "value 5" in out  # printed when the graph runs
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"assertion failed: "
                                                             r"\[must be positive\]"):
        f(tf.constant(-1.0))

    @tf.function
    def g(x):  # without the feature, as TensorFlow: a Python assert on a symbolic tensor
        assert x > 0
        return x
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        g(tf.constant(1.0))


def test_gradient_through_a_converted_loop():
    w = tf.Variable(0.5)

    @tf.function
    def loss(x):
        y = x
        for _ in tf.range(4):
            if y > 0:
                y = y * w + 1.0
            else:
                y = y - w
        return y

    with tf.GradientTape() as tape:
        value = loss(tf.constant(2.0))
    grad = float(tape.gradient(value, w))

    def ref(wv: float) -> float:  # float64 reference and central differences
        y = 2.0
        for _ in range(4):
            y = y * wv + 1.0 if y > 0 else y - wv
        return y
    assert float(value) == pytest.approx(ref(0.5), rel=1e-6)
    eps = 1e-6
    assert grad == pytest.approx((ref(0.5 + eps) - ref(0.5 - eps)) / (2 * eps), rel=1e-4)


def test_tensor_array_accumulates_in_a_converted_loop():
    x = tf.Variable(2.0)

    @tf.function
    def powers(n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        y = tf.ones([])
        for i in tf.range(n):
            y = y * x
            ta = ta.write(i, y)
        return ta.stack()

    with tf.GradientTape() as tape:
        p = powers(tf.constant(4))
        total = tf.reduce_sum(p)
    np.testing.assert_allclose(p.numpy(), [2.0, 4.0, 8.0, 16.0])
    # d/dx (x + x^2 + x^3 + x^4) at 2
    assert float(tape.gradient(total, x)) == pytest.approx(1 + 4 + 12 + 32)


_CALLS = 0


def test_python_constructs_inside_converted_code():
    @tf.function
    def f(x, *rest, scale=2.0):
        global _CALLS
        total = x
        for r in rest:  # a Python tuple: unrolled
            total = total + r
        if total > 0:
            _CALLS += 1  # as TF: a global assigned in a staged branch is restored after it
            total = total * scale
        with tf.name_scope("block"):
            if total > 100:
                total = total - 100
        try:
            parts = [total * k for k in range(3)]
        except ValueError:
            parts = []
        acc = 0.0

        def add(v):  # a nested function converted with its parent, closing over `acc`
            nonlocal acc
            acc = acc + v
        for v in parts:
            add(v)
        in_range = (lambda t: t > 0 and t < 1000)(total)
        return acc, in_range

    acc, in_range = f(tf.constant(3.0), tf.constant(1.0), scale=3.0)
    assert float(acc) == 36.0 and bool(in_range) and _CALLS == 0

    def numbers(n):  # a generator runs as is
        yield from range(n)

    @tf.function
    def g(x):
        for i in numbers(3):
            x += i
        return x
    assert int(g(tf.constant(1))) == 4

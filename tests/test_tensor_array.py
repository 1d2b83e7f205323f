"""tf.TensorArray eagerly and in graphs (TensorLists in `flow`), as tf.while_loop loop
variables, differentiated by GradientTape and tf.gradients; TF 2.21's errors (types and
messages checked with TensorFlow); and the While gradient's TensorList accumulators."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors

v1 = tf.compat.v1


def _numeric(fn, a, eps=1e-6):
    a = np.array(a, np.float64)
    g = np.zeros_like(a)
    for i in range(a.size):
        d = np.zeros_like(a)
        d.flat[i] = eps
        g.flat[i] = (fn(a + d) - fn(a - d)) / (2 * eps)
    return g


def _rnn(x, w, steps=4):
    """A loop writing every state into a TensorArray carried by the loop."""
    ta = tf.TensorArray(tf.float64, size=steps)

    def body(i, h, ta):
        h = tf.tanh(h * w + 0.1)
        return i + 1, h, ta.write(i, h)

    _, _, ta = tf.while_loop(lambda i, h, ta: i < steps, body, (tf.constant(0), x, ta))
    return tf.reduce_sum(ta.stack() ** 2)


X = np.array([0.5, -1.0, 2.0])
W = 0.7


def test_eager_write_read_stack_gather_concat_split_scatter():
    ta = tf.TensorArray(tf.float32, 3)
    ta = ta.write(0, [1.0, 2.0]).write(2, [5.0, 6.0])
    np.testing.assert_array_equal(ta.stack().numpy(), [[1, 2], [0, 0], [5, 6]])
    assert ta.element_shape == [2] and int(ta.size()) == 3 and ta.dtype is tf.float32
    np.testing.assert_array_equal(ta.gather([2, 0]).numpy(), [[5, 6], [1, 2]])
    np.testing.assert_array_equal(ta.concat().numpy(), [1, 2, 0, 0, 5, 6])
    np.testing.assert_array_equal(ta.read(2).numpy(), [5, 6])
    sp = tf.TensorArray(tf.float32, 2, infer_shape=False).split([1.0, 2.0, 3.0], [1, 2])
    np.testing.assert_array_equal(sp.read(1).numpy(), [2, 3])
    sc = tf.TensorArray(tf.float32, 0, dynamic_size=True).scatter([3, 1], [[1.0], [2.0]])
    np.testing.assert_array_equal(sc.stack().numpy(), [[0], [2], [0], [1]])
    un = tf.TensorArray(tf.float32, 3).unstack(tf.constant([[1.0], [2.0], [3.0]]))
    np.testing.assert_array_equal(un.read(1).numpy(), [2])
    assert tf.TensorArray(tf.float32, 0, element_shape=[2]).stack().shape == [0, 2]
    assert un.identity() is un


def test_eager_errors_match_tensorflow():
    ta = tf.TensorArray(tf.float32, 3)
    with pytest.raises(errors.OutOfRangeError,
                       match=r"^Tried to write to index 3 but array is not resizeable and size "
                             r"is: 3 $"):
        ta.write(3, 1.0)
    with pytest.raises(errors.OutOfRangeError,
                       match=r"Writing to negative indices \(index -1\) is not allowed\."):
        ta.write(-1, 1.0)
    with pytest.raises(errors.OutOfRangeError,
                       match="Tried to read from index 5 but array size is: 3 "):
        ta.read(5)
    with pytest.raises(ValueError, match="Cannot convert a partially known TensorShape "
                                         "<unknown> to a Tensor."):
        ta.read(1)
    ta = ta.write(0, [1.0])
    ta.read(0)
    with pytest.raises(errors.InvalidArgumentError, match=r"Could not read index 0 twice "
                       r"because it was cleared after a previous read \(perhaps try setting "
                       r"clear_after_read = false\?\)"):
        ta.read(0)
    keep = tf.TensorArray(tf.float32, 1, clear_after_read=False).write(0, [1.0])
    keep.read(0)
    np.testing.assert_array_equal(keep.read(0).numpy(), [1.0])
    ta = tf.TensorArray(tf.float32, 3).write(0, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"Incompatible shape for value \(\(1,\)\), expected "
                                         r"\(\(2,\)\)"):
        ta.write(1, [1.0])
    with pytest.raises(errors.InvalidArgumentError, match="TensorArray dtype is float32 but Op "
                       "is trying to write dtype int32 "):
        ta.write(1, tf.constant([1, 2]))
    with pytest.raises(ValueError, match="Size must be declared for TensorArrays when eager "
                                         "execution is enabled."):
        tf.TensorArray(tf.float32)
    with pytest.raises(ValueError, match="Cannot unstack 3 tensors into a TensorArray of "
                                         "static size 2 "):
        tf.TensorArray(tf.float32, 2).unstack([1.0, 2.0, 3.0])
    with pytest.raises(errors.InvalidArgumentError, match="Expected sum of lengths to be equal "
                       r"to values.shape\[0\], but sum of lengths is 2 and value's shape is: "
                       r"\[3\] "):
        tf.TensorArray(tf.float32, 2).split([1.0, 2.0, 3.0], [1, 1])
    # Writing twice is allowed (TF2 TensorArrays overwrite).
    np.testing.assert_array_equal(
        tf.TensorArray(tf.float32, 1).write(0, [1.0]).write(0, [2.0]).read(0).numpy(), [2.0])


def test_graph_tensor_array_is_a_tensor_list_with_tf_errors():
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True).unstack(x)
        out = tf.TensorArray(tf.float32, size=3)
        out = out.write(0, ta.read(2) * 2.0).write(1, ta.read(0))
        out = out.write(2, ta.read(1) * ta.read(1))
        assert out.flow.dtype is tf.variant and out.element_shape == []
        s = out.stack()
        assert s.shape == [3]
        return s, ta.size(), out.size(), out.gather([2, 0])

    s, n_dyn, n, g = f(tf.constant([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(s.numpy(), [6, 1, 4])
    assert int(n_dyn) == 3 and int(n) == 3
    np.testing.assert_array_equal(g.numpy(), [4, 6])

    @tf.function
    def oob():
        return tf.TensorArray(tf.float32, size=3).write(3, 1.0).stack()

    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Trying to modify element 3 in a list with 3 elements\."):
        oob()

    @tf.function
    def inconsistent():
        return tf.TensorArray(tf.float32, 3).write(0, [1.0, 2.0]).write(1, [1.0])

    with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(1,\) but expected \(2,\)"):
        inconsistent()

    @tf.function
    def grows():
        ta = tf.TensorArray(tf.float32, 0, dynamic_size=True).write(2, [1.0])
        return ta.stack(), ta.size()

    s, n = grows()
    np.testing.assert_array_equal(s.numpy(), [[0], [0], [1]])
    assert int(n) == 3


def test_tensor_array_through_while_loop_gradients_eager_function_and_session():
    x, w = tf.constant(X), tf.constant(W, tf.float64)
    want_x = _numeric(lambda a: float(_rnn(tf.constant(a), w)), X)
    want_w = _numeric(lambda a: float(_rnn(x, tf.constant(a))), W)

    @tf.function
    def in_function(x, w):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = _rnn(x, w)
        return tape.gradient(y, [x, w])

    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = _rnn(x, w)
    for dx, dw in (in_function(x, w), tape.gradient(y, [x, w])):
        np.testing.assert_allclose(dx.numpy(), want_x, rtol=1e-6)
        np.testing.assert_allclose(float(dw), want_w, rtol=1e-6)
    g = tf.Graph()
    with g.as_default():
        xp = v1.placeholder(tf.float64, [3])
        y = _rnn(xp, W)
        (dx,) = v1.gradients(y, [xp])
        with v1.Session() as s:
            np.testing.assert_allclose(s.run(dx, {xp: X}), want_x, rtol=1e-6)


def test_loop_reads_a_captured_tensor_array_and_writes_another():
    """The read-only TensorArray is a loop-invariant list input: its gradient is a list
    accumulated over the iterations (AddN of TensorLists)."""
    def f(x):
        src = tf.TensorArray(tf.float64, 3).unstack(x)
        out = tf.TensorArray(tf.float64, 3)

        def body(i, out):
            v = src.read(i)
            return i + 1, out.write(i, v * v * tf.cast(i + 1, tf.float64))

        _, out = tf.while_loop(lambda i, out: i < 3, body, (tf.constant(0), out))
        return tf.reduce_sum(out.stack())

    @tf.function
    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x)

    x = np.array([[1.0, 2.0], [3.0, 0.5], [-1.0, 4.0]])
    np.testing.assert_allclose(grad(tf.constant(x)).numpy(),
                               2 * x * np.array([[1.0], [2.0], [3.0]]), rtol=1e-9)


def test_while_gradient_pops_accumulated_states_instead_of_recomputing():
    """O(N): the backward loop pops the states a forward copy pushed (TensorLists); no loop
    nested in the backward body re-runs the forward prefix."""
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float64, [4])
        _, y = tf.while_loop(lambda i, x: i < 20, lambda i, x: (i + 1, x * 0.6 + 0.5 * tf.sin(x)),
                             (tf.constant(0), x))
        (dx,) = v1.gradients(tf.reduce_sum(y), [x])
        whiles = [op for op in g.get_operations() if op.type in ("While", "StatelessWhile")]
        assert len(whiles) == 3  # forward, accumulating forward, backward
        bodies = [op.attrs["body"] for op in whiles]
        pushes = [b for b in bodies if any(o.type == "TensorListPushBack"
                                           for o in b.get_operations())]
        pops = [b for b in bodies if any(o.type == "TensorListPopBack"
                                         for o in b.get_operations())]
        assert len(pushes) == 1 and len(pops) == 1
        assert not any(o.type in ("While", "StatelessWhile") for o in pops[0].get_operations())
        with v1.Session() as s:
            x0 = np.array([0.1, 0.5, -0.3, 1.0])
            got = s.run(dx, {x: x0})

    def f(a):
        for _ in range(20):
            a = a * 0.6 + 0.5 * np.sin(a)
        return float(np.sum(a))

    np.testing.assert_allclose(got, _numeric(f, x0), rtol=1e-5)


def test_nested_while_gradient():
    def f(x):
        def outer(i, x):
            _, x = tf.while_loop(lambda j, x: j < 3, lambda j, x: (j + 1, tf.sin(x) * 1.1),
                                 (tf.constant(0), x))
            return i + 1, x * x * 0.5 + x
        return tf.reduce_sum(tf.while_loop(lambda i, x: i < 2, outer, (tf.constant(0), x))[1])

    @tf.function
    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x)

    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(grad(tf.constant(x)).numpy(),
                               _numeric(lambda a: float(f(tf.constant(a))), x), rtol=1e-6)


def test_cond_returns_tensor_arrays_and_differentiates_through_them():
    @tf.function
    def f(p, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            ta = tf.TensorArray(tf.float32, size=2)
            ta = tf.cond(p, lambda: ta.write(0, x * x), lambda: ta.write(1, x * 3.0))
            s = ta.stack()
            y = tf.reduce_sum(s)
        return s, tape.gradient(y, x)

    x = tf.constant([1.0, 2.0])
    s, g = f(tf.constant(True), x)
    np.testing.assert_array_equal(s.numpy(), [[1, 4], [0, 0]])
    np.testing.assert_array_equal(g.numpy(), [2, 4])
    s, g = f(tf.constant(False), x)
    np.testing.assert_array_equal(s.numpy(), [[0, 0], [3, 6]])
    np.testing.assert_array_equal(g.numpy(), [3, 3])


def test_element_shape_inferred_from_writes_in_a_loop_body():
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=3)
        _, ta = tf.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, ta.write(i, x)),
                              (0, ta))
        s = ta.stack()
        assert s.shape == [3, 2], s.shape
        return s

    np.testing.assert_array_equal(f(tf.constant([1.0, 2.0])).numpy(), [[1, 2]] * 3)


def test_while_gradient_zero_trips_growing_shapes_and_maximum_iterations():
    @tf.function
    def powers(x, n):
        with tf.GradientTape() as tape:
            tape.watch(x)
            _, y = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * y), (0, x))
            s = tf.reduce_sum(y * 3.0)
        return tape.gradient(s, x)

    x = tf.constant([1.0, 2.0])
    np.testing.assert_array_equal(powers(x, tf.constant(0)).numpy(), [3, 3])
    np.testing.assert_array_equal(powers(x, tf.constant(2)).numpy(), [12, 96])  # 3 x^4

    @tf.function
    def growing(x, w):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            _, y = tf.while_loop(
                lambda i, y: i < 3, lambda i, y: (i + 1, tf.concat([y, y[-1:] * w], 0)),
                (0, x), shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))
            s = tf.reduce_sum(y)
        return s, tape.gradient(s, [x, w])

    s, (dx, dw) = growing(x, tf.constant(2.0))  # y = [1, 2, 2w, 2w^2, 2w^3]
    assert float(s) == 31.0
    np.testing.assert_array_equal(dx.numpy(), [1, 15])
    assert float(dw) == 34.0

    @tf.function
    def capped(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.while_loop(lambda y: tf.reduce_sum(y) < 1e9, lambda y: y * 2.0, [x],
                              maximum_iterations=5)[0]
        return tape.gradient(y, x)

    np.testing.assert_array_equal(capped(x).numpy(), [32, 32])


def test_while_gradient_to_a_variable_read_inside_a_nested_cond():
    w = tf.Variable(0.5)

    @tf.function
    def loss(x):
        def body(i, y):
            return i + 1, tf.cond(y > 0, lambda: y * w.read_value() + 1.0, lambda: y - w)
        return tf.while_loop(lambda i, y: i < 4, body, (0, x))[1]

    with tf.GradientTape() as tape:
        value = loss(tf.constant(2.0))
    # y -> 0.5 y + 1 four times from 2: d/dw of y4 where y_{k+1} = w y_k + 1
    ys = [2.0]
    for _ in range(4):
        ys.append(0.5 * ys[-1] + 1.0)
    want = sum(ys[k] * 0.5 ** (3 - k) for k in range(4))
    np.testing.assert_allclose(float(tape.gradient(value, w)), want, rtol=1e-6)


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_tensor_arrays_lists_and_while_gradients_on_the_gpu():
    with tf.device("/GPU:0"):
        x, w = tf.constant(X), tf.constant(W, tf.float64)
        lst = tf.TensorArray(tf.float64, 3).write(1, x).stack()  # eager: zeros on the GPU
        assert lst.device.endswith("GPU:0")

        @tf.function
        def grad(x, w):
            with tf.GradientTape() as tape:
                tape.watch([x, w])
                y = _rnn(x, w)
            return tape.gradient(y, [x, w])

        dx, dw = grad(x, w)
    want_x = _numeric(lambda a: float(_rnn(tf.constant(a), tf.constant(W, tf.float64))), X)
    np.testing.assert_allclose(dx.numpy(), want_x, rtol=1e-6)
    np.testing.assert_array_equal(lst.numpy()[1], X)


def test_bfloat16_rewrite_keeps_a_tensor_list_cluster_in_one_type():
    """A MatMul (allowlisted) writing into a TensorArray: the list ops joined by the handle
    keep float32 together (the written value is cast back), as TF colours list clusters."""
    from tests.ops.harness import pipeline_session_config

    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [4, 8])
        w = tf.constant(np.full((8, 8), 0.125, np.float32))
        ta = tf.TensorArray(tf.float32, size=3)
        for i in range(3):
            ta = ta.write(i, tf.matmul(x, w) * float(i))
        out = tf.identity(ta.stack())
        with v1.Session(config=pipeline_session_config(True)) as s:
            got = s.run(out, {x: np.ones((4, 8), np.float32)})
    np.testing.assert_allclose(got, np.arange(3.0)[:, None, None] * np.ones((3, 4, 8)))


def test_a_function_returns_a_tensor_array_as_its_flow():
    @tf.function
    def make(x):
        ta = tf.TensorArray(tf.float32, 3).write(0, x).write(2, x * 2.0)
        return ta, ta.size()

    ta, n = make(tf.constant([1.0, 2.0]))  # eagerly: a TensorList-backed TensorArray, as TF
    assert isinstance(ta, tf.TensorArray) and ta.flow.dtype is tf.variant and int(n) == 3
    ta = ta.write(1, tf.constant([5.0, 5.0]))
    np.testing.assert_array_equal(ta.stack().numpy(), [[1, 2], [5, 5], [2, 4]])

    @tf.function
    def outer(x):
        return make(x)[0].stack()

    np.testing.assert_array_equal(outer(tf.constant([1.0, 2.0])).numpy(),
                                  [[1, 2], [0, 0], [2, 4]])

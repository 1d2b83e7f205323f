"""TensorFlow's behaviour at the edges, each case checked against TF 2.21: typed errors before
anything is allocated instead of leaked Python/torch exceptions or hangs, and TF's values
where ATen's differ (NaN rules, zero-size reshapes, integer overflow, one-element batches)."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError

v1 = tf.compat.v1
X4 = np.zeros([1, 4, 4, 1], np.float32)


@pytest.mark.parametrize("call,message", [
    (lambda: tf.nn.max_pool2d(X4, 2, 0, "VALID"), "Stride must be > 0, but got 0"),
    (lambda: tf.nn.avg_pool2d(X4, 2, 0, "SAME"), "Stride must be > 0, but got 0"),
    (lambda: tf.nn.conv2d(X4, np.zeros([2, 2, 1, 1], np.float32), 0, "VALID"),
     "Stride must be > 0, but got 0"),
    (lambda: tf.range(1, 1e30, 2), r"Requires \(\(limit - start\) / delta\) <= "
                                   "9223372036854775807"),
    (lambda: tf.reduce_sum(tf.ones([2, 3]), [0, -2]),
     "Invalid reduction arguments: Axes contains duplicate dimension: 0"),
    (lambda: tf.reduce_max(tf.ones([2, 3]), [1, -1]),
     "Invalid reduction arguments: Axes contains duplicate dimension: 1"),
    (lambda: tf.nn.softmax_cross_entropy_with_logits(tf.ones([2, 3]), tf.ones([2, 3]), axis=5),
     "out of range"),
    (lambda: tf.pow(tf.constant([2]), tf.constant([-1])),
     "Integers to negative integer powers are not allowed"),
])
def test_bad_arguments_are_invalid_argument_errors_eagerly(call, message):
    with pytest.raises(InvalidArgumentError, match=message):
        call()


def test_graph_mode_reports_them_at_build_time():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Stride must be > 0, but got 0 for "
                                             r"'\{\{node MaxPool2d\}\} = MaxPool"):
            tf.nn.max_pool2d(tf.zeros([1, 4, 4, 1]), 2, 0, "VALID")
        with pytest.raises(ValueError, match="Requires .* <= 9223372036854775807 for "):
            tf.range(1, 1e30, 2)


def test_a_reduction_axis_given_as_a_tensor_is_checked_when_the_graph_runs():
    @tf.function
    def f(x, axis):
        return tf.reduce_sum(x, axis)

    with pytest.raises(InvalidArgumentError,
                       match=r"Invalid reduction dimension \(5 for input with 2 dimension\(s\)"):
        f(tf.ones([2, 3]), tf.constant(5))
    assert f(tf.ones([2, 3]), tf.constant(-1)).numpy().tolist() == [3.0, 3.0]


def test_too_many_outputs_are_refused_before_building_them():
    with pytest.raises(ValueError, match="Number of outputs is too big: 2147483648"):
        tf.split(tf.zeros([4]), 2**31)


def test_strings_and_fractions_are_not_numbers():
    # "0" is a string tensor now; as an axis it is TF's dtype error: InvalidArgumentError
    # eagerly, TypeError in graph mode
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="attr 'Tidx' of string is not in the list of allowed values: "
                             "int32, int64"):
        tf.reduce_sum(tf.ones([2, 3]), "0")
    with tf.Graph().as_default(), pytest.raises(
            TypeError, match="string not in list of allowed values: int32, int64"):
        tf.reduce_sum(tf.ones([2, 3]), "0")
    with pytest.raises(TypeError, match="Cannot convert '3' to EagerTensor of dtype int32"):
        tf.constant("3", tf.int32)
    with tf.Graph().as_default():
        with pytest.raises(TypeError):
            tf.zeros("3")
        with pytest.raises(TypeError, match="Dimension value must be integer or None"):
            tf.TensorShape([1.5])


def test_values_where_tensorflow_differs_from_aten():
    nan = np.nan
    # TF's comparisons never pick a NaN in argmax/argmin.
    assert int(tf.argmax([1.0, nan, 3.0])) == 2 and int(tf.argmin([1.0, nan, 0.0])) == 2
    # Max pooling never picks a NaN either (a window of NaNs gives the lowest value).
    pooled = tf.nn.max_pool2d(np.array([[[[nan], [1.0]], [[2.0], [3.0]]]], np.float32), 2, 2,
                              "VALID")
    assert pooled.numpy().ravel().tolist() == [3.0]
    x = tf.constant(np.array([[[[nan], [1.0]], [[2.0], [3.0]]]], np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.nn.max_pool2d(x, 2, 2, "VALID"))
    assert tape.gradient(y, x).numpy().ravel().tolist() == [0.0, 0.0, 0.0, 1.0]
    # A window of -infs or NaNs pools to the dtype's lowest finite value (TF starts each
    # window there); bfloat16's pools give -inf, as TF's oneDNN ones do.
    lowest32 = float(np.finfo(np.float32).min)
    ones = np.array([[[[-np.inf], [1.0]], [[-np.inf], [-np.inf]]]], np.float32)
    assert tf.nn.max_pool2d(ones, 1, 1, "VALID").numpy().ravel().tolist() == [
        lowest32, 1.0, lowest32, lowest32]
    assert tf.nn.max_pool2d(tf.fill([1, 3, 3, 1], -np.inf), 2, 2, "SAME").numpy().ravel() \
        .tolist() == [lowest32] * 4
    assert tf.nn.max_pool2d(tf.fill([1, 2, 2, 1], nan), 2, 2, "VALID").numpy().tolist() == [
        [[[lowest32]]]]
    assert tf.nn.max_pool1d(tf.fill([1, 4, 1], -np.inf), 2, 2, "VALID").numpy().ravel() \
        .tolist() == [lowest32] * 2
    assert tf.nn.max_pool3d(tf.fill([1, 2, 2, 2, 1], nan), 2, 2, "VALID").numpy().ravel() \
        .tolist() == [lowest32]
    half = tf.fill([1, 2, 2, 1], tf.constant(-np.inf, tf.float16))
    assert float(tf.reshape(tf.nn.max_pool2d(half, 2, 2, "VALID"), [])) == -65504.0
    double = tf.fill([1, 2, 2, 1], tf.constant(-np.inf, tf.float64))
    assert float(tf.reshape(tf.nn.max_pool2d(double, 2, 2, "VALID"), [])) == float(
        np.finfo(np.float64).min)
    bf16 = tf.cast(tf.fill([1, 2, 2, 1], -np.inf), tf.bfloat16)
    assert float(tf.reshape(tf.cast(tf.nn.max_pool2d(bf16, 2, 2, "VALID"), tf.float32),
                            [])) == -np.inf
    # Integer means do not overflow.
    assert int(tf.reduce_mean(tf.constant([2**30] * 3, tf.int32))) == 2**30
    # A zero-size reshape with -1 infers the dimension from the non-zero sizes.
    assert tf.reshape(tf.zeros([0, 3]), [0, -1]).shape.as_list() == [0, 3]
    # The batch variance of one value per channel is 0, not NaN.
    _, _, variance = v1.nn.fused_batch_norm(tf.ones([1, 1, 1, 2]), tf.ones([2]), tf.zeros([2]))
    assert variance.numpy().tolist() == [0.0, 0.0]
    # A bool axis is an int (True is 1), as TF's int attrs take it.
    assert len(tf.unstack(tf.zeros([2, 3]), axis=True)) == 3


def test_a_scalars_numpy_value_is_a_numpy_scalar():
    """TF: tf.constant(3.0).numpy() is np.float32(3.0), not a 0-d array (printing a list of
    them shows np.int64(0), ...); NumPy still converts scalar tensors and variables to arrays,
    and numpy_function hands its function arrays, 0-d ones too."""
    value = tf.constant(3.0).numpy()
    assert type(value) is np.float32 and value == 3.0
    assert type(tf.constant(3).numpy()) is np.int32
    assert type(next(iter(tf.data.Dataset.range(2))).numpy()) is np.int64
    assert tf.constant(b"x").numpy() == b"x"
    assert isinstance(tf.constant([1.0]).numpy(), np.ndarray)
    assert np.asarray(tf.constant(2.0)).shape == () and np.asarray(tf.Variable(2.0)) == 2.0
    seen = []
    tf.numpy_function(lambda x: seen.append(type(x)) or x, [tf.constant(1.0)], tf.float32)
    assert seen == [np.ndarray]


def test_format_of_a_tensor_is_its_numpy_values():
    """TF's EagerTensor.__format__: "{}".format(t) formats the NumPy value (the tf.data guide's
    "'survived': {}".format(labels) prints [0 1 0 0]); str() keeps the tf.Tensor text."""
    labels = tf.constant([0, 1, 0, 0])
    assert "'survived': {}".format(labels) == "'survived': [0 1 0 0]"  # noqa: UP032 - format() is what is tested
    assert f"{tf.constant(2.5):.2f}" == "2.50"
    assert str(labels).startswith("tf.Tensor([0 1 0 0]")


def test_a_list_attr_shorter_than_its_minimum_is_refused():
    """IdentityN's `T: list(type) >= 1` (TF 2.21's messages, eager and in a graph)."""
    with pytest.raises(InvalidArgumentError,
                       match="Length for attr 'T' of 0 must be at least minimum 1"):
        tf.identity_n([])

    @tf.function
    def f():
        return tf.identity_n([])
    with pytest.raises(ValueError, match="Attr 'T' of 'IdentityN' Op passed list of length 0 "
                                         "less than minimum 1."):
        f()


@pytest.mark.parametrize("training", [False, True])
def test_fused_batch_norm_of_an_empty_batch_has_nan_statistics(training):
    """TF 2.21: y is empty and the batch mean and variance are NaN, given statistics or not."""
    kwargs = {} if training else {"mean": tf.zeros([3]), "variance": tf.ones([3])}
    y, mean, var = v1.nn.fused_batch_norm(tf.zeros([0, 2, 2, 3]), tf.ones([3]), tf.zeros([3]),
                                          is_training=training, **kwargs)
    assert y.shape == (0, 2, 2, 3)
    assert np.isnan(mean.numpy()).all() and np.isnan(var.numpy()).all()
    assert mean.shape == var.shape == (3,)


def test_integer_convolution_wraps_as_tensorflows_int32_arithmetic():
    rng = np.random.default_rng(3)
    x = rng.integers(-2**20, 2**20, (2, 5, 5, 3)).astype(np.int32)
    w = rng.integers(-2**13, 2**13, (3, 3, 3, 2)).astype(np.int32)
    got = tf.nn.conv2d(x, w, 1, "VALID").numpy()
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.int64), (3, 3), axis=(1, 2))
    want = np.einsum("nhwcij,ijco->nhwo", windows, w.astype(np.int64))
    assert np.abs(want).max() > 2**31    # the sums overflow int32
    np.testing.assert_array_equal(got, want.astype(np.int32))   # NumPy's narrowing wraps

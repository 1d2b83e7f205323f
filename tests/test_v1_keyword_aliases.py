"""tf.compat.v1's spellings: TF1 keyword aliases and the TF1 variants of functions.

Values are checked against NumPy (or the TF2 function), errors against TensorFlow 2.21's
messages (`deprecation.deprecated_argument_lookup`, `make_tensor_proto`).
"""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1
rng = np.random.default_rng(3)
X = rng.uniform(-1.0, 1.0, (3, 4))


@pytest.mark.parametrize("name, ref", [
    ("reduce_sum", np.sum), ("reduce_mean", np.mean), ("reduce_max", np.max),
    ("reduce_min", np.min), ("reduce_prod", np.prod),
])
def test_reductions_take_reduction_indices_and_keep_dims(name, ref):
    fn = getattr(v1, name)
    got = fn(tf.constant(X), reduction_indices=1, keep_dims=True).numpy()
    np.testing.assert_allclose(got, ref(X.astype(np.float32), 1, keepdims=True), rtol=1e-6)
    assert getattr(v1.math, name) is fn
    with pytest.raises(ValueError, match="Cannot specify both 'reduction_indices' and 'axis'."):
        fn(tf.constant(X), axis=0, reduction_indices=1)
    with pytest.raises(TypeError):
        getattr(tf, name)(tf.constant(X), keep_dims=True)  # TF2 has no keep_dims


def test_boolean_reductions_logsumexp_and_count_nonzero():
    b = tf.constant(X > 0)
    np.testing.assert_array_equal(v1.reduce_all(b, reduction_indices=[0]).numpy(),
                                  np.all(X > 0, 0))
    np.testing.assert_array_equal(v1.reduce_any(b, keep_dims=True).numpy(),
                                  np.any(X > 0, keepdims=True))
    lse = np.log(np.exp(X).sum(1))
    np.testing.assert_allclose(v1.reduce_logsumexp(tf.constant(X), reduction_indices=1).numpy(),
                               lse, rtol=1e-5)
    counts = v1.count_nonzero(input=tf.constant(X > 0), reduction_indices=1, keep_dims=True)
    np.testing.assert_array_equal(counts.numpy(), (X > 0).sum(1, keepdims=True))


def test_argmax_dimension_and_arg_max():
    np.testing.assert_array_equal(v1.argmax(tf.constant(X), dimension=1).numpy(),
                                  X.argmax(1))
    np.testing.assert_array_equal(v1.arg_min(tf.constant(X), 0).numpy(), X.argmin(0))
    with pytest.raises(ValueError, match="Cannot specify both 'dimension' and 'axis'."):
        v1.argmax(tf.constant(X), axis=0, dimension=1)


def test_expand_dims_dim_and_squeeze_dims():
    x = tf.constant(X)
    assert v1.expand_dims(x, dim=1).shape.as_list() == [3, 1, 4]
    assert v1.squeeze(tf.constant(X[None, :, None]), squeeze_dims=[2]).shape.as_list() == \
        [1, 3, 4]
    with pytest.raises(ValueError, match="Must specify an axis argument"):
        v1.expand_dims(x)


def test_constant_verify_shape():
    assert v1.constant([[1.0, 2.0]], shape=[1, 2], verify_shape=True).shape.as_list() == [1, 2]
    np.testing.assert_array_equal(v1.constant(1.0, shape=[2, 2]).numpy(), np.ones((2, 2)))
    with pytest.raises(TypeError, match=r"Expected Tensor's shape: \(2, 2\), but got \(\)."):
        v1.constant(1.0, shape=[2, 2], verify_shape=True)


def test_v1_where_is_select_and_v2_where_broadcasts():
    cond = np.array([True, False, True])
    y = -X
    rows = v1.where(tf.constant(cond), tf.constant(X), tf.constant(y)).numpy()
    np.testing.assert_allclose(rows, np.where(cond[:, None], X, y).astype(np.float32))
    with pytest.raises(Exception, match="Incompatible shapes|must be equal"):
        tf.where(tf.constant(cond), tf.constant(X), tf.constant(y))
    assert v1.where_v2 is tf.where
    np.testing.assert_array_equal(v1.where(tf.constant(cond)).numpy(), [[0], [2]])


def test_like_functions_and_layout():
    with tf.Graph().as_default():
        t = v1.placeholder(tf.float32, [2, 3])
        folded = v1.zeros_like(t, dtype=tf.int32)
        kept = v1.zeros_like(tensor=t, dtype=tf.int32, optimize=False)
        assert folded.op.type == "Const" and kept.op.type == "Fill"
    np.testing.assert_array_equal(v1.ones_like(tensor=tf.constant(X)).numpy(), np.ones((3, 4)))
    with pytest.raises(ValueError, match="layout"):
        tf.zeros([2], layout=object())
    assert tf.ones([2], layout=None).shape.as_list() == [2]


def test_get_static_value_partial():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [None, 3])
        shape = tf.shape(x)
        assert tf.get_static_value(shape) is None
        partial = tf.get_static_value(shape, partial=True)
        assert partial.dtype == object and list(partial) == [None, 3]


def test_convert_to_tensor_preferred_dtype_and_device_functions():
    assert v1.convert_to_tensor(3, preferred_dtype=tf.int64).dtype is tf.int64
    assert v1.convert_to_tensor(3.5, preferred_dtype=tf.int64).dtype is tf.float32
    with pytest.raises(ValueError, match="Cannot specify both"):
        v1.convert_to_tensor(3, preferred_dtype=tf.int64, dtype_hint=tf.int64)
    with pytest.raises(RuntimeError, match="does not support functions when eager"):
        v1.device(lambda op: "/CPU:0")


def test_nn_v1_spellings():
    x = tf.constant(rng.uniform(-1, 1, (1, 6, 6, 2)).astype(np.float32))
    f = tf.constant(rng.uniform(-1, 1, (3, 3, 2, 1)).astype(np.float32))
    np.testing.assert_allclose(
        v1.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "SAME", rate=[2, 2]).numpy(),
        tf.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "SAME", dilations=[2, 2]).numpy())
    g = tf.constant(rng.uniform(-1, 1, (1, 3, 3, 4)).astype(np.float32))
    w = tf.constant(rng.uniform(-1, 1, (3, 3, 2, 4)).astype(np.float32))
    want = tf.nn.conv2d_transpose(g, w, [1, 6, 6, 2], [1, 2, 2, 1]).numpy()
    np.testing.assert_allclose(
        v1.nn.conv2d_transpose(value=g, filter=w, output_shape=[1, 6, 6, 2],
                               strides=[1, 2, 2, 1]).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(
        v1.nn.conv2d_backprop_input([1, 6, 6, 2], None, g, [1, 2, 2, 1], "SAME",
                                    filters=w).numpy(), want, rtol=1e-6)
    labels = tf.constant([[0.0, 1.0], [1.0, 0.0]])
    logits = tf.constant([[0.5, 1.5], [0.3, -0.2]])
    np.testing.assert_allclose(
        v1.nn.softmax_cross_entropy_with_logits_v2(labels, logits, dim=-1).numpy(),
        tf.nn.softmax_cross_entropy_with_logits(labels, logits).numpy())


def test_variables_and_optimizers():
    with tf.Graph().as_default():
        local = v1.get_local_variable("counter", [], tf.int32, v1.zeros_initializer(),
                                      trainable=True)
        assert local in v1.local_variables() and local not in v1.trainable_variables()
        w = v1.Variable([1.0, 2.0], expected_shape=[2], name="w")
        loss = tf.reduce_sum(w * w)
        v1.train.AdamOptimizer(0.1, use_own_namescope_for_non_slot_vars=True).minimize(loss)
        # TensorFlow 2.21 names the same graph's variables exactly so.
        assert [v.name for v in v1.global_variables()] == [
            "w:0", "Adam/beta1_power:0", "Adam/beta2_power:0", "w/Adam:0", "w/Adam_1:0"]
    lso = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), name="lso")
    assert lso.name == "lso"


def test_nest_accepts_expand_composites():
    s = {"b": [1, 2], "a": 3}
    assert tf.nest.flatten(s, expand_composites=True) == [3, 1, 2]
    assert tf.nest.pack_sequence_as(s, [4, 5, 6], expand_composites=True) == \
        {"b": [5, 6], "a": 4}
    assert tf.nest.is_nested(seq=[1]) and not tf.nest.is_nested(seq=1)

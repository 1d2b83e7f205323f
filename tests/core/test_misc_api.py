"""Everyday top-level names with TensorFlow 2.21's behaviour: tf.get_logger and
tf.compat.v1.logging (TF's 'LEVEL:tensorflow:msg' lines and verbosity), tf.version and
tf.__version__, tf.is_tensor, tf.inside_function / tf.get_current_name_scope / tf.init_scope
inside tf.function, tf.VariableAggregation / tf.VariableSynchronization, tf.DeviceSpec."""

import logging

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1


def test_python_logging_as_tensorflow(capfd):
    logger = tf.get_logger()
    assert logger is logging.getLogger("tensorflow") and logger is tf.get_logger()
    v1.logging.set_verbosity(v1.logging.INFO)
    assert v1.logging.get_verbosity() == v1.logging.INFO == 20 and v1.logging.WARN == 30
    v1.logging.info("hello %d", 3)
    v1.logging.warning("careful")
    for _ in range(5):
        v1.logging.log_every_n(v1.logging.INFO, "every %s", 2, "other")
        v1.logging.log_first_n(v1.logging.INFO, "first", 1)
    v1.logging.set_verbosity(v1.logging.ERROR)
    v1.logging.warning("hidden")
    err = capfd.readouterr().err.splitlines()
    assert err[:2] == ["INFO:tensorflow:hello 3", "WARNING:tensorflow:careful"]
    assert err.count("INFO:tensorflow:every other") == 3 and err.count("INFO:tensorflow:first") == 1
    assert "WARNING:tensorflow:hidden" not in err
    v1.logging.set_verbosity(v1.logging.WARN)


def test_versions():
    assert tf.__version__ == tf.version.VERSION == "2.21.0"
    assert tf.version.GRAPH_DEF_VERSION == 2474 == v1.GRAPH_DEF_VERSION


def test_function_context_queries():
    seen = {}

    @tf.function
    def f(x):
        with tf.name_scope("outer"):
            seen["inside"] = tf.inside_function()
            seen["scope"] = tf.get_current_name_scope()
            with tf.init_scope():
                seen["eager_in_init_scope"] = tf.executing_eagerly()
        return x + 1

    f(tf.constant(1))
    assert seen == {"inside": True, "scope": "outer", "eager_in_init_scope": True}
    assert not tf.inside_function() and tf.get_current_name_scope() == ""
    with tf.Graph().as_default() as g:
        with tf.init_scope():  # a TF1 graph stays the default
            assert not tf.executing_eagerly() and v1.get_default_graph() is g


def test_small_types():
    assert tf.is_tensor(tf.constant(1)) and not tf.is_tensor(1) and not tf.is_tensor([1])
    assert not tf.is_symbolic_tensor(tf.constant(1))
    assert [m.name for m in tf.VariableAggregation] == ["NONE", "SUM", "MEAN",
                                                       "ONLY_FIRST_REPLICA"]
    assert tf.VariableSynchronization.ON_READ.value == 3
    spec = tf.DeviceSpec(job="worker", device_type="GPU", device_index=1)
    assert spec.to_string() == "/job:worker/device:GPU:1"


def test_eager_set_shape_checks_compatibility():
    """`EagerTensor.set_shape` is TF's check (the time-series tutorial's split_window calls it
    on eager tensors): compatible shapes pass, others are TF's ValueError."""
    t = tf.zeros([2, 3])
    t.set_shape([None, 3])
    t.set_shape([2, None])
    assert t.shape == (2, 3)
    with pytest.raises(ValueError, match=r"Tensor's shape \(2, 3\) is not compatible with "
                                         r"supplied shape \(2, 4\)"):
        t.set_shape([2, 4])


def test_is_tensor_is_true_for_tf_native_types():
    """TF 2.21's tf.is_tensor (tensor_util.is_tf_type): True for Tensor, SparseTensor,
    RaggedTensor, IndexedSlices, variables and objects with `is_tensor_like`; False for NumPy
    arrays, specs, datasets, ExtensionTypes and TensorArrays (each checked in TF 2.21)."""
    class Extension(tf.experimental.ExtensionType):
        x: tf.Tensor

    class Like:
        is_tensor_like = True

    native = [tf.sparse.SparseTensor([[0]], [1.0], [2]), tf.ragged.constant([[1], [2, 3]]),
              tf.IndexedSlices(tf.ones([1, 2]), [0], [3, 2]), tf.Variable(1.0), Like()]
    assert [tf.is_tensor(x) for x in native] == [True] * 5
    assert tf.compat.v1.is_tensor(tf.Variable(1.0))
    other = [np.array(1), tf.TensorSpec([1]), tf.data.Dataset.range(2),
             Extension(tf.ones([1])), tf.TensorArray(tf.float32, 2)]
    assert [tf.is_tensor(x) for x in other] == [False] * 5

    @tf.function
    def traced(x):
        return tf.is_tensor(x) and tf.is_tensor(tf.sparse.from_dense(x))

    assert traced(tf.ones([2]))

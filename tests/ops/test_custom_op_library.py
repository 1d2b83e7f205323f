"""examples/custom_op/: the C++ op library built with PyTorch's extension tooling and loaded with
`tf.load_op_library` — eagerly, in tf.function, in a Session, through a GraphDef, with its
gradient against finite differences. Compiling takes ~20-80 s: CI's slow pass."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_op"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                                 reason="needs a C++ compiler")]


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"custom_op_example_{name}",
                                                  EXAMPLE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    path = _module("build").build(tmp_path_factory.mktemp("custom_op_build"))
    return _module("example").load(str(path))


def test_module_has_snake_case_op_functions(lib):
    assert {n for n in dir(lib) if not n.startswith("_")} == {
        "zero_out", "fused_bias_relu", "fused_bias_relu_grad"}
    assert tf.load_op_library(lib.__file__) is lib


def test_eager_tf_function_and_session(lib):
    np.testing.assert_array_equal(lib.zero_out([[5, 2], [3, 4]]).numpy(), [[5, 0], [0, 0]])
    x = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32)
    b = np.array([0.5, 1.0], np.float32)
    expect = np.maximum(x + b, 0)
    np.testing.assert_array_equal(lib.fused_bias_relu(x, b).numpy(), expect)
    np.testing.assert_array_equal(tf.function(lib.fused_bias_relu)(x, b).numpy(), expect)
    g = tf.Graph()
    with g.as_default():
        feed = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        y = lib.fused_bias_relu(feed, b, name="y")
        assert y.shape.as_list() == [None, 2]
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(g.as_graph_def(), name="")
    with tf.compat.v1.Session(graph=g2) as sess:
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": x}), expect)


def test_gradient_matches_finite_differences(lib):
    x0 = np.array([[-1.0, 2.0, 0.3], [3.0, -4.0, 1.5]])
    b0 = np.array([0.5, 1.0, -0.2])

    def loss(x, b):
        return (np.maximum(x + b, 0) ** 2).sum()
    eps = 1e-6
    num_b = np.array([(loss(x0, b0 + eps * e) - loss(x0, b0 - eps * e)) / (2 * eps)
                      for e in np.eye(3)])
    x, b = tf.Variable(x0), tf.Variable(b0)
    with tf.GradientTape() as tape:
        y = lib.fused_bias_relu(x, b)
        total = tf.reduce_sum(y * y)
    dx, db = tape.gradient(total, [x, b])
    np.testing.assert_allclose(db.numpy(), num_b, rtol=1e-5)
    np.testing.assert_allclose(dx.numpy(), 2 * np.maximum(x0 + b0, 0), rtol=1e-6)


def test_kernel_errors_are_invalid_argument(lib):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"FusedBiasRelu .*x's last dimension \(2\) must equal bias's "
                             r"size \(3\) \[Op:FusedBiasRelu\]"):
        lib.fused_bias_relu(tf.ones([2, 2]), tf.ones([3]))
    # a disallowed type: TF's kernel-lookup error eagerly, the builder's TypeError in graphs
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Value for attr 'T' of int32 is not in the list of allowed"):
        lib.fused_bias_relu(tf.ones([2], tf.int32), tf.ones([2], tf.int32))
    with tf.Graph().as_default(), pytest.raises(TypeError,
                                                match="not in list of allowed values"):
        lib.fused_bias_relu(tf.ones([2], tf.int32), tf.ones([2], tf.int32))

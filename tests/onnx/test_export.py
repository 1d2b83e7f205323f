"""ndflow.onnx.export on whole models: a Keras model with Dense, Conv2D, BatchNormalization,
pooling, Flatten and Dropout, and (CI's slow pass) the MNIST example's model and the CIFAR-10
tutorial model run in ONNX Runtime with ndflow's outputs; bad input. The default suite's
single-op table (test_single_ops.py) holds every op those models use."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ndflow as tf

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
ndflow_onnx = pytest.importorskip("ndflow.onnx")


def _session(model):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module")
def mnist_function():
    from ndflow.models.image.mnist import model as mnist

    params = mnist.build_variables(tf.float32)

    @tf.function(input_signature=[tf.TensorSpec([None, 28, 28, 1], tf.float32, name="images")])
    def predict(images):
        return tf.nn.softmax(mnist.model(params, images))
    return predict


@pytest.mark.slow  # ~1 s: 1.7M weights to initialize, serialize and check
def test_mnist_model_runs_in_onnx_runtime_with_any_batch(mnist_function, tmp_path):
    path = tmp_path / "mnist.onnx"
    model = ndflow_onnx.export(mnist_function, str(path))
    loaded = onnx.load(str(path))            # the file is a valid, checkable model
    onnx.checker.check_model(loaded)
    assert oct(os.stat(path).st_mode & 0o777) != oct(0o600)  # not mkstemp's private mode
    assert [i.name for i in loaded.graph.input] == ["images"]
    # weights are initializers with the variables' values, not graph inputs
    assert len(loaded.graph.initializer) >= 8
    session = _session(model)
    for batch in (1, 5):
        x = np.random.RandomState(batch).rand(batch, 28, 28, 1).astype(np.float32)
        got = session.run(None, {"images": x})[0]
        np.testing.assert_allclose(got, mnist_function(x).numpy(), rtol=1e-5, atol=1e-6)


def test_keras_model_exports_inference_branches():
    k = tf.keras
    model = k.Sequential([
        k.Input((8, 8, 3)),
        k.layers.Conv2D(4, 3, padding="same", activation="relu"),
        k.layers.BatchNormalization(),
        k.layers.MaxPooling2D(),
        k.layers.AveragePooling2D(2),
        k.layers.Flatten(),
        k.layers.Dropout(0.5),
        k.layers.Dense(5, activation="softmax"),
    ])
    bn = model.layers[1]
    bn.moving_mean.assign(np.linspace(-0.5, 0.5, 4).astype(np.float32))
    bn.moving_variance.assign(np.linspace(0.5, 2.0, 4).astype(np.float32))
    proto = ndflow_onnx.export(model)
    x = np.random.RandomState(0).rand(3, 8, 8, 3).astype(np.float32)
    got = _session(proto).run(None, {proto.graph.input[0].name: x})[0]
    want = model(x, training=False).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_saved_model_signature_exports(tmp_path):
    """A loaded SavedModel's serving signature exports as TF's (a ConcreteFunction there) does
    with tf2onnx: the restored graph's variable reads have no static shapes, so the exporter
    freezes them first (a convolution needs its input's channels)."""
    k = tf.keras
    model = k.Sequential([k.Input((8, 8, 3), name="images"), k.layers.Conv2D(4, 3, use_bias=False),
                          k.layers.BatchNormalization(), k.layers.ReLU(),
                          k.layers.GlobalAveragePooling2D(), k.layers.Dense(5)])
    model.export(str(tmp_path / "saved"), verbose=False)
    signature = tf.saved_model.load(str(tmp_path / "saved")).signatures["serving_default"]
    proto = ndflow_onnx.export(signature, str(tmp_path / "model.onnx"))
    # the signature's input and output names
    assert [i.name for i in proto.graph.input] == ["images"]
    assert [o.name for o in proto.graph.output] == ["output_0"]
    x = np.random.RandomState(0).rand(2, 8, 8, 3).astype(np.float32)
    got = _session(proto).run(None, {"images": x})[0]
    want = signature(images=x)["output_0"].numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_unsupported_op_names_the_op_and_its_type():
    f = tf.function(lambda x: tf.math.lgamma(x) + 1.0,
                    input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    with pytest.raises(ndflow_onnx.UnsupportedOpError,
                       match=r"op 'Lgamma' of type 'Lgamma' is not supported"):
        ndflow_onnx.export(f)


def test_bad_arguments(tmp_path):
    f = tf.function(tf.nn.relu, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    with pytest.raises(ValueError, match="opset >= 13"):
        ndflow_onnx.export(f, opset=11)
    with pytest.raises(TypeError, match="ConcreteFunction, a tf.function, a SavedModel "
                                        "signature or a Keras model"):
        ndflow_onnx.export(42)
    path = tmp_path / "bad.onnx"
    with pytest.raises(ndflow_onnx.UnsupportedOpError):
        ndflow_onnx.export(tf.function(tf.math.lgamma, input_signature=[
            tf.TensorSpec([2], tf.float32)]), str(path))
    assert not path.exists() and os.listdir(tmp_path) == []  # nothing half-written


@pytest.mark.slow
def test_cifar10_model_runs_in_onnx_runtime():
    from ndflow.models.image.cifar10 import cifar10

    # the TF1 model's get_variable calls made once (a template), as tf.function's variable
    # rule asks: its second trace creates none
    inference = tf.compat.v1.make_template("cifar10", cifar10.inference)

    @tf.function(input_signature=[tf.TensorSpec([None, 24, 24, 3], tf.float32, name="x")])
    def logits(x):
        return inference(x)
    model = ndflow_onnx.export(logits)
    types = {n.op_type for n in model.graph.node}
    assert {"Conv", "MaxPool", "LRN", "Gemm", "Relu"} <= types
    x = np.random.RandomState(0).rand(4, 24, 24, 3).astype(np.float32) * 255
    got = _session(model).run(None, {"x": x})[0]
    want = logits(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())

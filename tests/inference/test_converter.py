"""tf.experimental.tensorrt.Converter on ONNX Runtime: convert -> save -> tf.saved_model.load
gives the original SavedModel's outputs; batch norms fold into convolutions; ops the engine
cannot take stay in ndflow with a log line; TF-TRT's errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

Converter = tf.experimental.tensorrt.Converter
v1 = tf.compat.v1
_RNG = np.random.RandomState(3)


def _var(*shape, positive=False):
    a = _RNG.uniform(-1, 1, shape).astype(np.float32)
    return tf.Variable(np.abs(a) + 0.5 if positive else a)


class _ConvNet(tf.Module):
    """Conv2D -> FusedBatchNormV3 (inference) -> Relu -> MaxPool -> Reshape -> MatMul ->
    BiasAdd -> Softmax."""

    def __init__(self):
        super().__init__()
        self.w, self.scale, self.offset = _var(3, 3, 2, 4), _var(4), _var(4)
        self.mean, self.var = _var(4), _var(4, positive=True)
        self.fc, self.b = _var(16 * 4, 3), _var(3)

    @tf.function(input_signature=[tf.TensorSpec([None, 8, 8, 2], tf.float32, name="images")])
    def __call__(self, images):
        y = tf.nn.conv2d(images, self.w, 1, "SAME")
        y = v1.nn.fused_batch_norm(y, self.scale, self.offset, mean=self.mean,
                                   variance=self.var, is_training=False)[0]
        y = tf.nn.max_pool2d(tf.nn.relu(y), 2, 2, "VALID")
        y = tf.reshape(y, [-1, 16 * 4])
        return {"probs": tf.nn.softmax(tf.nn.bias_add(tf.matmul(y, self.fc), self.b))}


class _WithUnsupportedOp(tf.Module):
    """Two engine-friendly runs around Lgamma, which ONNX has no op for."""

    def __init__(self):
        super().__init__()
        self.a, self.b = _var(4, 4), _var(4, 2)

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.a)) + 1.0
        h = tf.math.lgamma(h)
        return {"y": tf.tanh(tf.matmul(h, self.b)) * 2.0}


def _save(module, path):
    tf.saved_model.save(module, str(path), signatures=module.__call__.get_concrete_function())
    return str(path)


@pytest.fixture(scope="module")
def conv_model(tmp_path_factory):
    module = _ConvNet()
    return module, _save(module, tmp_path_factory.mktemp("conv") / "saved")


def _engine_ops(cf):
    return [op for op in cf.graph.get_operations() if op.type == "OnnxEngineOp"]


def test_convert_save_load_round_trip(conv_model, tmp_path):
    module, path = conv_model
    x = np.random.RandomState(0).rand(3, 8, 8, 2).astype(np.float32)
    want = module(x)["probs"].numpy()
    converter = Converter(input_saved_model_dir=path)
    converted = converter.convert()
    assert len(converter.segments) == 1 and converter.ops_left_in_ndflow == []
    assert len(_engine_ops(converted)) == 1
    seg_types = {op.type for op in converter.segments[0].ops}
    assert "FusedBatchNormV3" not in seg_types and "Conv2D" in seg_types  # BN was folded
    np.testing.assert_allclose(converted(images=x)["probs"].numpy(), want, rtol=1e-5,
                               atol=1e-6)
    converter.build(lambda: iter([(x[:1],)]))
    out = tmp_path / "converted"
    converter.save(str(out))
    loaded = tf.saved_model.load(str(out))
    got = loaded.signatures["serving_default"](images=x)["probs"].numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    batch1 = loaded.signatures["serving_default"](images=x[:1])["probs"].numpy()
    np.testing.assert_allclose(batch1, want[:1], rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def lgamma_model(tmp_path_factory):
    module = _WithUnsupportedOp()
    return module, _save(module, tmp_path_factory.mktemp("lgamma") / "saved")


def test_ops_the_engine_cannot_take_stay_in_ndflow(lgamma_model, capfd):
    module, path = lgamma_model
    converter = Converter(input_saved_model_dir=path, minimum_segment_size=2)
    converted = converter.convert()
    err = capfd.readouterr().err
    assert "not converted to the inference engine: Lgamma(1)" in err
    assert [op.type for op in converter.ops_left_in_ndflow] == ["Lgamma"]
    assert len(converter.segments) == 2
    types = [op.type for op in converted.graph.get_operations()]
    assert types.count("OnnxEngineOp") == 2 and "Lgamma" in types
    x = np.random.RandomState(1).rand(5, 4).astype(np.float32)
    np.testing.assert_allclose(converted(x=x)["y"].numpy(), module(x)["y"].numpy(),
                               rtol=1e-5, atol=1e-6)


class _Float64Lrn(tf.Module):
    """LRN in float64: ONNX has it, ONNX Runtime's CPU kernels do not (float32 only)."""

    @tf.function(input_signature=[tf.TensorSpec([None, 4, 4, 8], tf.float64, name="x")])
    def __call__(self, x):
        return {"y": tf.nn.relu(tf.nn.lrn(tf.nn.relu(x) * 2.0 + 1.0, 2)) + 1.0}


def test_op_the_engine_rejects_is_left_in_ndflow(tmp_path, capfd):
    module = _Float64Lrn()
    path = _save(module, tmp_path / "saved")
    converter = Converter(input_saved_model_dir=path, minimum_segment_size=2)
    converted = converter.convert()
    assert "(LRN) stays in ndflow: ONNX Runtime" in capfd.readouterr().err
    assert [op.type for op in converter.ops_left_in_ndflow] == ["LRN"]
    assert len(converter.segments) == 2
    x = np.random.RandomState(2).rand(2, 4, 4, 8)
    np.testing.assert_allclose(converted(x=x)["y"].numpy(), module(x)["y"].numpy(),
                               rtol=1e-12)


def test_minimum_segment_size_leaves_short_runs_in_ndflow(lgamma_model):
    converter = Converter(input_saved_model_dir=lgamma_model[1], minimum_segment_size=10)
    converter.convert()
    assert converter.segments == [] and len(converter.ops_left_in_ndflow) >= 5


def test_int8_needs_calibration_data(conv_model):
    _, path = conv_model
    converter = Converter(input_saved_model_dir=path, precision_mode="INT8")
    with pytest.raises(ValueError, match="Should specify calibration_input_fn because INT8 "
                                         "calibration is needed"):
        converter.convert()
    fp32 = Converter(input_saved_model_dir=path)
    with pytest.raises(ValueError, match="Should not specify calibration_input_fn"):
        fp32.convert(calibration_input_fn=lambda: iter([]))


@pytest.mark.slow  # ~1 s: onnxruntime.quantization's import and calibration
def test_int8_quantizes_segments_from_calibration_data(conv_model, tmp_path):
    module, path = conv_model
    calls = []

    def calibration_input_fn():
        calls.append(1)
        for seed in range(2):
            yield (np.random.RandomState(seed).rand(4, 8, 8, 2).astype(np.float32),)
    int8 = Converter(input_saved_model_dir=path, precision_mode="INT8")
    converted = int8.convert(calibration_input_fn=calibration_input_fn)
    assert calls == [1]
    types = {n.op_type for n in int8.segments[0].model.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= types  # int8 engine, not FP32
    x = np.random.RandomState(5).rand(6, 8, 8, 2).astype(np.float32)
    want = module(x)["probs"].numpy()
    got = converted(images=x)["probs"].numpy()
    assert np.abs(got - want).max() < 0.05  # int8 rounding, not a different function
    int8.save(str(tmp_path / "int8"))
    loaded = tf.saved_model.load(str(tmp_path / "int8"))
    np.testing.assert_allclose(loaded.signatures["serving_default"](images=x)["probs"], got,
                               rtol=1e-6, atol=1e-6)


def test_bad_input(tmp_path):
    missing = tmp_path / "no_such_model"
    with pytest.raises(tf.errors.NotFoundError, match="no_such_model"):
        Converter(input_saved_model_dir=str(missing)).convert()
    with pytest.raises(ValueError, match="precision mode 'FP8' is not supported"):
        Converter(input_saved_model_dir=str(tmp_path), precision_mode="FP8")
    with pytest.raises(ValueError, match="minimum segment size should be positive or -1"):
        Converter(input_saved_model_dir=str(tmp_path), minimum_segment_size=0)
    params = tf.experimental.tensorrt.ConversionParams(precision_mode="FP16")
    assert params.minimum_segment_size == 3 and params.maximum_cached_engines == 1
    converter = Converter(input_saved_model_dir=str(tmp_path), conversion_params=params)
    with pytest.raises(RuntimeError, match="Need to call convert\\(\\) before build"):
        converter.build(lambda: iter([]))
    with pytest.raises(RuntimeError, match="Need to call convert\\(\\) before save"):
        converter.save(str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_unreadable_saved_model_is_an_error_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "saved_model.pb").write_bytes(b"\x00not a proto")
    with pytest.raises((tf.errors.OpError, OSError, ValueError)):
        Converter(input_saved_model_dir=str(bad)).convert()


@pytest.mark.slow
def test_mnist_round_trip(tmp_path):
    from ndflow.models.image.mnist import model as mnist

    class Mnist(tf.Module):
        def __init__(self):
            super().__init__()
            self.p = mnist.build_variables(tf.float32)

        @tf.function(input_signature=[tf.TensorSpec([None, 28, 28, 1], tf.float32,
                                                    name="images")])
        def __call__(self, images):
            return {"probs": tf.nn.softmax(mnist.model(self.p, images))}
    module = Mnist()
    path = _save(module, tmp_path / "mnist")
    converter = Converter(input_saved_model_dir=path)
    converter.convert()
    converter.save(str(tmp_path / "converted"))
    loaded = tf.saved_model.load(str(tmp_path / "converted"))
    x = np.random.RandomState(0).rand(4, 28, 28, 1).astype(np.float32)
    np.testing.assert_allclose(loaded.signatures["serving_default"](images=x)["probs"],
                               module(x)["probs"].numpy(), rtol=1e-5, atol=1e-6)

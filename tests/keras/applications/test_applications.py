"""`tf.keras.applications` against Keras 3.15 (tests/fixtures/keras_applications): each
model's layers, weight paths and shapes, parameter count and output shape equal Keras' (so
Keras' ImageNet weight files load by order and name), and with deterministic weights the
outputs equal Keras'; ImageNet preprocessing modes; decode_predictions from a cached class
index; weights="imagenet" offline names the file; Keras' argument errors."""

from __future__ import annotations

import gzip
import json
import os
import re

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "keras_applications")
GEN = fixture_modules.load("keras_applications")
with gzip.open(os.path.join(HERE, "structure.json.gz"), "rt") as _f:
    STRUCTURE = json.load(_f)
OUT = np.load(os.path.join(HERE, "outputs.npz"))
A = tf.keras.applications


_AUTO = re.compile(r"^(input_layer|conv2d|batch_normalization|activation|add|concatenate|"
                   r"re_lu|dropout|flatten|multiply|layer_normalization|custom_scale_layer|"
                   r"cropping2d|"
                   r"rescaling|normalization|"
                   r"average_pooling2d|max_pooling2d|zero_padding2d|global_average_pooling2d|"
                   r"global_max_pooling2d)(_\d+)?(/|$)")


_UNNAMED_WEIGHT = re.compile(r"/variable(_\d+)?$")


def _auto(name: str) -> str:
    """Names Keras gives unnamed layers ("conv2d_37") and unnamed weights ("variable_17", as
    ConvNeXt's LayerScale has) are numbered per process: the number goes (also as the first
    part of a weight path)."""
    return _UNNAMED_WEIGHT.sub("/variable", _AUTO.sub(lambda m: m.group(1) + m.group(3), name))


def _layer_row(name, kind):
    return [_auto(name), kind]


def _build(key):
    builder, kwargs = GEN.CONFIGS[key]
    return getattr(A, builder)(weights=None, **kwargs)


# the deep variants: CI's slow pass
_DEEP = {"resnet101_notop", "densenet169_notop", "resnet101v2_notop", "efficientnetb3_notop",
         "efficientnetv2s_notop", "nasnet_large_notop"}


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.slow) if k in _DEEP else k
                                 for k in sorted(GEN.CONFIGS)])
def test_structure_equals_keras(key):
    model, want = _build(key), STRUCTURE[key]
    assert model.name == want["name"]
    assert [_layer_row(layer.name, type(layer).__name__) for layer in model.layers] == \
        [_layer_row(*row) for row in want["layers"]]
    assert [[_auto(w.path), list(w.shape)] for w in model.weights] == \
        [[_auto(p), shape] for p, shape in want["weights"]]
    assert model.count_params() == want["params"]
    assert list(model.output_shape) == want["output_shape"]


# the numeric checks of the largest models (over ~1.3 s each): CI's slow pass; their structure
# checks above stay in the default suite
_HEAVY = {"resnet50", "densenet121", "inception_v3", "xception_notop", "resnet50v2",
          "efficientnetb0", "inception_resnet_v2", "nasnet_mobile", "efficientnetv2b2_notop",
          "vgg16_notop"}


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.slow) if k in _HEAVY else k
                                 for k in GEN.NUMERIC])
def test_outputs_equal_keras_with_the_same_weights(key):
    model = _build(key)
    model.set_weights([GEN.fill(w.path, tuple(w.shape), i) for i, w in enumerate(model.weights)])
    got = model.predict(GEN.images(GEN.CONFIGS[key][1]["input_shape"]) / 127.5 - 1.0, verbose=0)
    np.testing.assert_allclose(got, OUT[key], rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("mode", ["caffe", "tf", "torch"])
def test_preprocess_input_modes(mode):
    x = OUT["x"][:, :4, :4]
    np.testing.assert_allclose(A.imagenet_utils.preprocess_input(x.copy(), mode=mode),
                               OUT[f"preprocess_{mode}"], rtol=1e-6)
    as_tensor = A.imagenet_utils.preprocess_input(tf.constant(x), mode=mode)
    np.testing.assert_allclose(as_tensor.numpy(), OUT[f"preprocess_{mode}"], rtol=1e-5)
    module = {"caffe": A.vgg16, "tf": A.mobilenet_v2, "torch": None}[mode]
    if module is not None:
        np.testing.assert_allclose(module.preprocess_input(x.copy()), OUT[f"preprocess_{mode}"],
                                   rtol=1e-6)
    inputs = tf.keras.Input((4, 4, 3))             # in a functional model, as the tutorials
    model = tf.keras.Model(inputs, A.imagenet_utils.preprocess_input(inputs, mode=mode))
    np.testing.assert_allclose(model.predict(x, verbose=0), OUT[f"preprocess_{mode}"],
                               rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="Expected mode to be one of `caffe`, `tf` or `torch`"):
        A.imagenet_utils.preprocess_input(x, mode="keras")


def test_decode_predictions_from_the_cached_class_index(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setattr(tf.keras.applications._imagenet_utils, "_CLASS_INDEX", {})
    (tmp_path / "models").mkdir()
    index = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    path = tmp_path / "models" / "imagenet_class_index.json"
    path.write_text(json.dumps(index))
    preds = np.zeros((2, 1000), np.float32)
    preds[0, [3, 7]] = [0.9, 0.1]
    preds[1, 999] = 1.0
    with monkeypatch.context() as m:   # the published file's hash is not this small one's
        m.setattr(tf.keras.utils, "get_file", lambda *a, **k: str(path))
        m.setattr(tf.keras.applications._imagenet_utils.file_downloads, "get_file",
                  lambda *a, **k: str(path))
        out = A.resnet50.decode_predictions(preds, top=2)
    assert out[0][0][:2] == ("n00000003", "class_3") and out[0][1][:2] == ("n00000007", "class_7")
    assert out[1][0][:2] == ("n00000999", "class_999")
    with pytest.raises(ValueError, match=r"expects a batch of predictions .* \(samples, 1000\)"):
        A.resnet50.decode_predictions(np.zeros((2, 10)))


def test_imagenet_weights_offline_name_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(Exception, match="vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5"):
        A.VGG16(include_top=False, input_shape=(32, 32, 3))


def test_weights_from_a_path_and_errors(tmp_path):
    model = A.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3))
    path = str(tmp_path / "vgg.weights.h5")
    model.save_weights(path)
    again = A.VGG16(weights=path, include_top=False, input_shape=(32, 32, 3))
    for a, b in zip(again.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="`classes` should be 1000"):
        A.ResNet50(weights="imagenet", classes=10)
    with pytest.raises(ValueError, match="The `weights` argument should be either"):
        A.ResNet50(weights="nowhere.h5")
    with pytest.raises(ValueError, match="Input size must be at least 32x32"):
        A.VGG19(weights=None, include_top=False, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="If imagenet weights are being loaded, alpha must be"):
        A.MobileNetV2(alpha=0.6, include_top=False)
    base = A.MobileNetV2(weights=None, include_top=False, input_shape=(32, 32, 3))
    base.trainable = False                         # the transfer-learning tutorial's setup
    inputs = tf.keras.Input((32, 32, 3))
    x = tf.keras.layers.GlobalAveragePooling2D()(base(inputs, training=False))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(x))
    assert len(model.trainable_variables) == 2


def test_convnext_stochastic_depth_drops_whole_samples_in_training():
    """ConvNeXt's StochasticDepth (kept for models saved with it): each sample's branch is
    dropped or kept whole, kept ones scaled by 1 / keep; the identity in inference."""
    from ndflow.keras.applications._convnext import StochasticDepth
    layer = StochasticDepth(0.5)
    x = np.ones((400, 3, 2), np.float32)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    out = layer(x, training=True).numpy()
    per_sample = out.reshape(400, -1)
    assert set(np.unique(per_sample)) <= {0.0, 2.0}
    assert (per_sample == per_sample[:, :1]).all()
    assert 120 < (per_sample[:, 0] == 0).sum() < 280
    assert StochasticDepth.from_config(layer.get_config()).drop_path_rate == 0.5

"""Activation layers (ReLU, LeakyReLU, PReLU, ELU, Softmax), regularization layers
(SpatialDropout1D/2D/3D, GaussianNoise, GaussianDropout, ActivityRegularization), Lambda and
Identity: Keras 3's outputs and configs (fixture), float64 NumPy references and
finite-difference gradients, training statistics, Lambda's safe loading, Keras' errors."""

import numpy as np
import pytest

import ndflow as tf
from tests.keras.layer_checks import META, check_gradients, normal_config, replay

layers = tf.keras.layers
RNG = np.random.default_rng(7)
CASES = sorted(n for n in META if META[n]["cls"] in (
    "ReLU", "LeakyReLU", "PReLU", "ELU", "Softmax", "SpatialDropout1D", "SpatialDropout2D",
    "GaussianNoise", "GaussianDropout", "ActivityRegularization", "Identity"))


@pytest.mark.parametrize("name", CASES)
def test_matches_keras_fixture(name):
    replay(name)


def _keras_relu(x, slope=0.0, cap=None, thr=0.0):
    y = np.where(x > thr, x, 0.0)
    if cap is not None:
        y = np.minimum(y, cap)
    return y - slope * np.maximum(thr - x, 0.0)


# inputs kept away from the kinks so that finite differences are smooth
X = np.concatenate([np.linspace(-3.05, 3.05, 14), [0.51, 0.49, 2.49, 2.51]]).reshape(2, 9)


@pytest.mark.parametrize("layer, ref", [
    (lambda: layers.ReLU(dtype="float64"), lambda x: np.maximum(x, 0)),
    (lambda: layers.ReLU(max_value=2.5, negative_slope=0.1, threshold=0.5, dtype="float64"),
     lambda x: _keras_relu(x, 0.1, 2.5, 0.5)),
    (lambda: layers.ReLU(max_value=6.0, dtype="float64"), lambda x: np.clip(x, 0, 6)),
    (lambda: layers.ReLU(negative_slope=0.2, max_value=1.0, dtype="float64"),
     lambda x: _keras_relu(x, 0.2, 1.0)),
    (lambda: layers.LeakyReLU(dtype="float64"), lambda x: np.where(x > 0, x, 0.3 * x)),
    (lambda: layers.ELU(alpha=0.5, dtype="float64"),
     lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    (lambda: layers.Softmax(dtype="float64"),
     lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    (lambda: layers.Softmax(axis=[0, 1], dtype="float64"), lambda x: np.exp(x) / np.exp(x).sum()),
], ids=["relu", "relu_full", "relu6", "relu_slope_cap", "leaky", "elu", "softmax",
        "softmax_axes"])
def test_activation_values_and_gradients(layer, ref):
    layer = layer()
    np.testing.assert_allclose(layer(X).numpy(), ref(X), rtol=1e-12, atol=1e-15)
    check_gradients(layer, X)


def test_relu_at_the_threshold_is_zero_as_in_keras():
    out = layers.ReLU(threshold=1.0)(np.array([[0.5, 1.0, 1.5]], np.float32)).numpy()
    np.testing.assert_array_equal(out, [[0.0, 0.0, 1.5]])


def test_prelu_values_shared_axes_and_gradients():
    layer = layers.PReLU(shared_axes=[1, 2], dtype="float64")
    x = RNG.normal(size=(2, 3, 4, 5))
    layer(x)
    assert layer.alpha.shape.as_list() == [1, 1, 5]
    np.testing.assert_array_equal(layer.alpha.numpy(), 0.0)   # "Zeros" by default
    alpha = RNG.normal(size=(1, 1, 5))
    layer.set_weights([alpha])
    np.testing.assert_allclose(layer(x).numpy(), np.where(x > 0, x, alpha * x), rtol=1e-12)
    check_gradients(layer, x[:1, :2, :2], [])
    small = layers.PReLU(shared_axes=1, dtype="float64")
    y = RNG.normal(size=(2, 3, 2))
    small(y)
    check_gradients(small, y, [small.alpha])
    with pytest.raises(ValueError, match="expected axis 2 of input shape to have value 2"):
        small(np.ones((2, 3, 4)))


def test_softmax_mask_as_keras():
    x = RNG.normal(size=(2, 3, 4))
    mask = RNG.uniform(size=(2, 3, 4)) < 0.6
    mask[0, 1] = False
    out = layers.Softmax(dtype="float64")(x, mask=tf.constant(mask))
    e = np.where(mask, np.exp(x - x.max(-1, keepdims=True)), 0.0)
    s = e.sum(-1, keepdims=True)
    want = np.where(mask, e / np.where(s > 0, s, 1), 0.0)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(out._keras_mask.numpy(), mask)
    # a float mask keeps the positions > 0.5; a broadcastable mask is accepted
    fmask = np.array([[0.2, 0.9, 0.7, 0.5]])
    out = layers.Softmax(dtype="float64")(x, mask=tf.constant(fmask)).numpy()
    keep = fmask > 0.5
    e = np.where(keep, np.exp(x), 0.0)
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("make, shape", [
    (lambda: layers.ReLU(max_value=1.0, threshold=0.2), (None, 3)),
    (lambda: layers.LeakyReLU(0.1), (None, 3)),
    (lambda: layers.PReLU(), (None, 3)),
    (lambda: layers.ELU(), (None, 3)),
    (lambda: layers.Softmax(axis=[1, 2]), (None, 2, 3)),
    (lambda: layers.SpatialDropout1D(0.5), (None, 2, 3)),
    (lambda: layers.GaussianNoise(0.5), (None, 3)),
    (lambda: layers.ActivityRegularization(0.1), (None, 3)),
    (lambda: layers.Lambda(lambda t: t * 2), (None, 3)),
    (lambda: layers.Identity(), (None, 3)),
])
def test_in_tf_function_with_unknown_batch(make, shape):
    layer = make()
    x = RNG.normal(size=(4,) + shape[1:]).astype(np.float32)
    want = layer(x).numpy()
    fn = tf.function(lambda t: layer(t), input_signature=[tf.TensorSpec(shape, tf.float32)])
    np.testing.assert_allclose(fn(x).numpy(), want, rtol=1e-6)
    assert fn.get_concrete_function().structured_outputs.shape.as_list() == list(shape)


def test_activation_errors():
    with pytest.raises(ValueError, match="max_value of a ReLU layer cannot be a negative value. "
                       "Received: max_value=-1"):
        layers.ReLU(max_value=-1)
    with pytest.raises(ValueError, match="negative_slope of a ReLU layer cannot be None or a "
                       "negative value. Received: negative_slope=-1"):
        layers.ReLU(negative_slope=-1)
    with pytest.raises(ValueError, match="threshold of a ReLU layer cannot be None"):
        layers.ReLU(threshold=None)
    with pytest.raises(ValueError, match="The negative_slope value of a Leaky ReLU layer cannot "
                       "be None or negative value. Expected a float. Received: "
                       "negative_slope=-1"):
        layers.LeakyReLU(negative_slope=-1)
    with pytest.warns(UserWarning, match="Argument `alpha` is deprecated"):
        assert layers.LeakyReLU(alpha=0.1).get_config()["negative_slope"] == 0.1
    with pytest.raises(ValueError, match=r"The `mask` must be broadcastable to `inputs`. Each "
                       r"mask dimension must be 1 or match the corresponding input dimension. "
                       r"Received: inputs.shape=\(2, 4, 3\), mask.shape=\(2, 5\)"):
        layers.Softmax()(np.ones((2, 4, 3)), mask=tf.ones((2, 5), tf.bool))
    with pytest.raises(ValueError, match="must not have more dimensions"):
        layers.Softmax()(np.ones((2, 3)), mask=tf.ones((1, 2, 3), tf.bool))


def test_spatial_dropout_drops_whole_channels():
    x = np.ones((40, 5, 30), np.float32)
    out = layers.SpatialDropout1D(0.4, seed=3)(x, training=True).numpy()
    per_channel = out[:, 0, :]
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.6)}
    assert (out == per_channel[:, None, :]).all()          # constant along the steps
    assert abs((per_channel == 0).mean() - 0.4) < 0.06
    img = np.ones((20, 6, 3, 3), np.float32)
    out = layers.SpatialDropout2D(0.5, data_format="channels_first")(img, training=True).numpy()
    assert (out == out[:, :, :1, :1]).all() and 0.3 < (out == 0).mean() < 0.7
    out = layers.SpatialDropout2D(0.5)(img, training=True).numpy()
    assert (out == out[:, :1, :1, :]).all()
    vol = np.ones((8, 2, 2, 2, 4), np.float32)
    out = layers.SpatialDropout3D(0.5)(vol, training=True).numpy()
    assert (out == out[:, :1, :1, :1, :]).all()
    np.testing.assert_array_equal(layers.SpatialDropout1D(0.4)(x).numpy(), x)
    # made outside: as in TF, its SeedGenerator's variable cannot be created in a tf.function
    spatial = layers.SpatialDropout1D(0.5)
    fn = tf.function(lambda t: spatial(t, training=True),
                     input_signature=[tf.TensorSpec([None, 5, 30], tf.float32)])
    out = fn(x).numpy()
    assert out.shape == x.shape and (out == out[:, :1, :]).all()


def test_gaussian_layers_statistics_in_training_only():
    x = np.full((200, 300), 2.0, np.float32)
    five_sigma = 5 / np.sqrt(x.size)   # the sample mean's standard error per unit of std
    noisy = layers.GaussianNoise(0.3, seed=1)(x, training=True).numpy()
    assert abs(noisy.mean() - 2.0) < 0.3 * five_sigma and abs(noisy.std() - 0.3) < 0.01
    dropped = layers.GaussianDropout(0.2, seed=2)(x, training=True).numpy()
    assert abs(dropped.mean() - 2.0) < 1.0 * five_sigma and abs(dropped.std() - 2 * 0.5) < 0.02
    for layer in (layers.GaussianNoise(0.3), layers.GaussianDropout(0.2)):
        np.testing.assert_array_equal(layer(x).numpy(), x)
        np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    assert layers.GaussianNoise(0.3, dtype="float64")(x, training=True).dtype == tf.float64


def test_activity_regularization_adds_the_penalty_per_sample():
    layer = layers.ActivityRegularization(l1=0.1, l2=0.5, dtype="float64")
    x = RNG.normal(size=(4, 3))
    np.testing.assert_array_equal(layer(x).numpy(), x)
    (loss,) = layer.losses
    np.testing.assert_allclose(float(loss), (0.1 * np.abs(x).sum() + 0.5 * (x ** 2).sum()) / 4,
                               rtol=1e-12)
    config = layer.get_config()
    assert "activity_regularizer" not in config and (config["l1"], config["l2"]) == (0.1, 0.5)


def test_regularization_errors_and_configs():
    with pytest.raises(ValueError, match=r"Invalid value received for argument `stddev`. "
                       r"Expected a float value between 0 and 1. Received: stddev=2.0"):
        layers.GaussianNoise(2.0)
    with pytest.raises(ValueError, match="Received: rate=-0.1"):
        layers.GaussianDropout(-0.1)
    with pytest.raises(ValueError, match="Received: rate=1.5"):
        layers.SpatialDropout1D(1.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'trainable'"):
        layers.SpatialDropout1D(0.5, trainable=False)
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        layers.SpatialDropout1D(0.5)(np.ones((2, 3), np.float32), training=True)
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        layers.SpatialDropout2D(0.5)(np.ones((2, 4, 3), np.float32))
    with pytest.raises(ValueError, match=r"The `data_format` argument must be one of "
                       r"\{'channels_first', 'channels_last'\}. Received: data_format=bad"):
        layers.SpatialDropout2D(0.5, data_format="bad")
    with pytest.raises(ValueError, match="Invalid value for argument l1"):
        layers.ActivityRegularization(l1=-1.0)
    for layer in (layers.SpatialDropout3D(0.2, seed=4), layers.GaussianNoise(0.1, seed=2),
                  layers.GaussianDropout(0.3), layers.ActivityRegularization(0.2),
                  layers.PReLU(shared_axes=[1]), layers.ELU(0.3), layers.Identity()):
        config = layer.get_config()
        assert normal_config(type(layer).from_config(config).get_config()) == \
            normal_config(config)


def double(x, factor=2):
    return x * factor


def test_lambda_calls_with_arguments_mask_and_training():
    layer = layers.Lambda(double, arguments={"factor": 3.0})
    np.testing.assert_allclose(layer(np.ones((2, 2), np.float32)).numpy(), 3.0)
    seen = {}

    def fn(x, mask=None, training=None):
        seen.update(mask=mask, training=training)
        return x

    masked = tf.constant(np.ones((1, 3), np.float32))
    masked._keras_mask = tf.constant([[True, False, True]])
    with pytest.warns(UserWarning, match="does not support masking and will therefore "
                      "destroy the mask information"):   # no `mask=` given to Lambda
        layers.Lambda(fn)(masked, training=True)
    assert seen["training"] is True and seen["mask"].numpy().tolist() == [[True, False, True]]
    with_mask = layers.Lambda(lambda x: x + 1, mask=lambda x, m: tf.not_equal(x, 0.0))
    out = with_mask(np.array([[0.0, 2.0]], np.float32))
    np.testing.assert_array_equal(out._keras_mask.numpy(), [[False, True]])
    assert layers.Lambda(lambda x: x[:, :2]).compute_output_shape((None, 3)) == (None, 2)
    assert layers.Lambda(double, output_shape=(3,)).compute_output_shape((5, 7)) == (5, 3)
    assert layers.Lambda(double, output_shape=lambda s: s[:1]).compute_output_shape((5, 7)) \
        == (5,)


def test_lambda_config_of_a_python_lambda_and_safe_loading():
    layer = layers.Lambda(lambda x: x * 2, name="lam")
    config = layer.get_config()
    fn = config["function"]
    assert fn["class_name"] == "__lambda__" and set(fn["config"]) == {"code", "defaults",
                                                                      "closure"}
    assert normal_config({k: v for k, v in config.items() if k != "function"}) == {
        "name": "lam", "trainable": True, "arguments": {},
        "dtype": {"module": "keras", "class_name": "DTypePolicy",
                  "config": {"name": "float32"}, "registered_name": None}}
    msg = ("Requested the deserialization of a `Lambda` layer whose `function` is a Python "
           "lambda.")
    with pytest.raises(ValueError, match=msg):
        layers.Lambda.from_config(config)
    with pytest.raises(ValueError, match=msg):
        layers.deserialize(layers.serialize(layer))
    loaded = layers.Lambda.from_config(config, safe_mode=False)
    np.testing.assert_allclose(loaded(np.ones((1, 2), np.float32)).numpy(), 2.0)
    # a closure and defaults travel with the code
    k = 5.0
    closure = layers.Lambda(lambda x, y=1.0: x * k + y).get_config()
    again = layers.Lambda.from_config(closure, safe_mode=False)
    np.testing.assert_allclose(again(np.ones((1, 1), np.float32)).numpy(), 6.0)


def test_lambda_safe_mode_never_runs_code_from_the_config():
    import ndflow.keras.layers.lambda_layer as lambda_layer
    ran = []

    def evil(x):
        ran.append(True)
        return x

    code, _, _ = lambda_layer.func_dump(lambda x: ran.append(True) or x)
    config = layers.Lambda(evil).get_config()
    config["function"] = {"class_name": "__lambda__",
                          "config": {"code": code, "defaults": None, "closure": [ran]}}
    config["output_shape"] = {"class_name": "__lambda__",
                              "config": {"code": code, "defaults": None, "closure": [ran]}}
    with pytest.raises(ValueError, match="carries a potential risk of arbitrary code"):
        layers.Lambda.from_config(config)
    with pytest.raises(ValueError, match="carries a potential risk of arbitrary code"):
        layers.Lambda.from_config(config, safe_mode=True)
    assert ran == []


def test_lambda_named_functions_by_name():
    config = layers.Lambda(double, output_shape=(3,), arguments={"factor": 2}).get_config()
    assert config["function"] == {"module": "builtins", "class_name": "function",
                                  "config": "double", "registered_name": "function"}
    assert config["output_shape"] == (3,) and config["arguments"] == {"factor": 2}
    with pytest.raises(TypeError, match="Could not locate function 'double'. Make sure custom "
                       "classes and functions are decorated with "
                       r"`@keras.saving.register_keras_serializable\(\)`."):
        layers.Lambda.from_config(config)
    loaded = layers.Lambda.from_config(config, custom_objects={"double": double})
    assert loaded.function is double and loaded._output_shape == (3,)
    relu = layers.Lambda.from_config(layers.Lambda(tf.keras.activations.relu).get_config())
    assert relu.function is tf.keras.activations.relu
    clone = layers.deserialize(layers.serialize(layers.Lambda(double)),
                               custom_objects={"double": double})
    assert clone.function is double


def test_identity_passes_structures_and_masks():
    x = tf.constant(np.ones((2, 3), np.float32))
    x._keras_mask = tf.constant([[True, False, True]] * 2)
    out = layers.Identity()(x)
    assert out is x or np.array_equal(out.numpy(), x.numpy())
    np.testing.assert_array_equal(out._keras_mask.numpy(), x._keras_mask.numpy())
    a, b = layers.Identity()([np.ones(2, np.float32), np.zeros(2, np.float32)])
    assert a.numpy().tolist() == [1, 1] and b.numpy().tolist() == [0, 0]

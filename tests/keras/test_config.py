"""tf.keras.config: the settings shared with tf.keras.backend really drive layers, Inputs
and fit (floatx, image_data_format, the fit caps), and the switches behave as Keras 3.15's."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras import global_config
from ndflow.keras.mixed_precision import policy as policy_module


@pytest.fixture(autouse=True)
def _restore_settings():
    """Each test starts with the global dtype policy unset, as in a fresh process: a policy
    set explicitly, even "float32" (what mixed-precision tests elsewhere end by setting),
    no longer follows floatx, in Keras 3 as here."""
    saved = dict(global_config.SETTINGS)
    saved_policy = policy_module._global_policy
    policy_module.set_global_policy("float32")   # (clears the mixed-policy rewrite block)
    policy_module._global_policy = None
    yield
    policy_module.set_global_policy(saved_policy or "float32")
    policy_module._global_policy = saved_policy
    global_config.SETTINGS.clear()
    global_config.SETTINGS.update(saved)


def test_floatx_is_shared_and_sets_weight_and_input_dtypes():
    tf.keras.config.set_floatx("float64")
    assert tf.keras.backend.floatx() == "float64" == tf.keras.config.floatx()
    inputs = tf.keras.Input((3,))
    assert inputs.dtype == tf.float64
    layer = tf.keras.layers.Dense(2)
    out = layer(np.ones((1, 3)))
    assert layer.kernel.dtype == tf.float64 and out.dtype == tf.float64
    with pytest.raises(ValueError, match="Unknown `floatx` value"):
        tf.keras.config.set_floatx("int32")


def test_epsilon_and_image_data_format_shared():
    tf.keras.config.set_epsilon(1e-4)
    assert tf.keras.backend.epsilon() == 1e-4
    tf.keras.config.set_image_data_format("channels_first")
    assert tf.keras.backend.image_data_format() == "channels_first"
    conv = tf.keras.layers.Conv2D(4, 3)
    assert conv.data_format == "channels_first"
    assert conv(np.ones((1, 2, 5, 5), np.float32)).shape == (1, 4, 3, 3)
    assert tf.keras.layers.Conv2D(4, 3, data_format="channels_last").data_format == \
        "channels_last"
    assert tf.keras.layers.MaxPooling2D().data_format == "channels_first"
    assert tf.keras.layers.Flatten().data_format == "channels_first"
    with pytest.raises(ValueError, match="data_format"):
        tf.keras.config.set_image_data_format("nchw")


def test_max_epochs_and_steps_cap_fit():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.ones((40, 2), np.float32), np.ones((40, 1), np.float32)
    tf.keras.config.set_max_epochs(2)
    tf.keras.config.set_max_steps_per_epoch(3)
    assert tf.keras.config.max_epochs() == 2 and tf.keras.config.max_steps_per_epoch() == 3
    with pytest.warns(UserWarning, match="Limiting epochs to 2"), \
            pytest.warns(UserWarning, match="Limiting steps_per_epoch to 3"):
        history = model.fit(x, y, batch_size=4, epochs=5, verbose=0)
    assert len(history.history["loss"]) == 2
    assert model.optimizer.iterations.numpy() == 6     # 2 epochs x 3 steps, not 10
    tf.keras.config.set_max_epochs(None)
    tf.keras.config.set_max_steps_per_epoch(None)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert model.optimizer.iterations.numpy() == 16


def test_switches_as_keras():
    cfg = tf.keras.config
    assert cfg.backend() == "tensorflow" and cfg.is_nnx_enabled() is False
    assert cfg.is_flash_attention_enabled() is None
    cfg.disable_flash_attention()
    assert cfg.is_flash_attention_enabled() is False
    cfg.enable_flash_attention()
    assert cfg.is_flash_attention_enabled() is None     # Keras: enabled means "auto"
    assert cfg.is_traceback_filtering_enabled() is True
    cfg.disable_traceback_filtering()
    assert cfg.is_traceback_filtering_enabled() is False
    cfg.enable_traceback_filtering()
    assert cfg.is_traceback_filtering_enabled() is True
    cfg.set_backend("tensorflow")
    with pytest.raises(ValueError, match="Available backends"):
        cfg.set_backend("theano")
    with pytest.raises(ValueError, match="'tensorflow' backend only"):
        cfg.set_backend("jax")


def test_dtype_policy_follows_floatx_until_set():
    cfg = tf.keras.config
    tf.keras.config.set_floatx("float16")
    assert cfg.dtype_policy().name == "float16"
    tf.keras.config.set_floatx("float32")
    cfg.set_dtype_policy("mixed_float16")
    assert cfg.dtype_policy().name == "mixed_float16"
    assert tf.keras.layers.Dense(1).compute_dtype == "float16"

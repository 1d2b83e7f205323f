"""`tf.keras.optimizers.legacy`: TF 2.21 (Keras 3) keeps the six names, and constructing any
of them raises this ImportError (its text as TF 2.21 printed it)."""

import pytest

import ndflow as tf

MESSAGE = ("`keras.optimizers.legacy` is not supported in Keras 3. When using `tf.keras`, to "
           "continue using a `tf.keras.optimizers.legacy` optimizer, you can install the "
           "`tf_keras` package (Keras 2) and set the environment variable "
           "`TF_USE_LEGACY_KERAS=True` to configure TensorFlow to use `tf_keras` when "
           "accessing `tf.keras`.")


@pytest.mark.parametrize("name", ["Adagrad", "Adam", "Ftrl", "RMSprop", "SGD", "Optimizer"])
def test_constructing_a_legacy_optimizer_is_keras_3s_import_error(name):
    cls = getattr(tf.keras.optimizers.legacy, name)
    assert getattr(tf.compat.v1.keras.optimizers.legacy, name) is cls
    with pytest.raises(ImportError) as info:
        cls(learning_rate=0.1)
    assert str(info.value) == MESSAGE

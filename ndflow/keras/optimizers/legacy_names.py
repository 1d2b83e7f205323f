"""`tf.keras.optimizers.legacy`: Keras 2's optimizers are not in Keras 3. TF 2.21 keeps the
names, and constructing any of them is an ImportError that says so; so does ndflow."""

from __future__ import annotations

from ndflow.core.api_export import keras_export


@keras_export("keras.optimizers.legacy.Adagrad", "keras.optimizers.legacy.Adam",
              "keras.optimizers.legacy.Ftrl", "keras.optimizers.legacy.RMSprop",
              "keras.optimizers.legacy.SGD", "keras.optimizers.legacy.Optimizer")
class LegacyOptimizerWarning:
    """Each `tf.keras.optimizers.legacy` name: refuses construction, as Keras 3 does."""

    def __init__(self, *args, **kwargs):
        raise ImportError(
            "`keras.optimizers.legacy` is not supported in Keras 3. When using `tf.keras`, "
            "to continue using a `tf.keras.optimizers.legacy` optimizer, you can install the "
            "`tf_keras` package (Keras 2) and set the environment variable "
            "`TF_USE_LEGACY_KERAS=True` to configure TensorFlow to use `tf_keras` when "
            "accessing `tf.keras`.")

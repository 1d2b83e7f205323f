# Source: keras-team/keras-io, examples/keras_recipes/antirectifier.py ("Simple custom layer
#   example: Antirectifier", fchollet, last modified 2020/04/20),
#   https://keras.io/examples/keras_recipes/antirectifier/  License: Apache-2.0.
# Changed: synthetic_data.mnist_load_data() stands in for keras.datasets.mnist.load_data()
#   (1,024 / 256 digits); epochs 20 -> 3; the code runs in main(), which returns the last
#   epoch's metrics, evaluate()'s results and the Antirectifier's serialized config size.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F841, I001, UP008
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

from synthetic_data import mnist_load_data


def main():
    class Antirectifier(layers.Layer):
        def __init__(self, initializer="he_normal", **kwargs):
            super(Antirectifier, self).__init__(**kwargs)
            self.initializer = keras.initializers.get(initializer)

        def build(self, input_shape):
            output_dim = input_shape[-1]
            self.kernel = self.add_weight(
                shape=(output_dim * 2, output_dim),
                initializer=self.initializer,
                name="kernel",
                trainable=True,
            )

        def call(self, inputs):
            inputs -= tf.reduce_mean(inputs, axis=-1, keepdims=True)
            pos = tf.nn.relu(inputs)
            neg = tf.nn.relu(-inputs)
            concatenated = tf.concat([pos, neg], axis=-1)
            mixed = tf.matmul(concatenated, self.kernel)
            return mixed

        def get_config(self):
            # Implement get_config to enable serialization. This is optional.
            base_config = super(Antirectifier, self).get_config()
            config = {"initializer": keras.initializers.serialize(self.initializer)}
            return dict(list(base_config.items()) + list(config.items()))

    # Training parameters
    batch_size = 128
    num_classes = 10
    epochs = 3

    # The data, split between train and test sets
    (x_train, y_train), (x_test, y_test) = mnist_load_data()

    x_train = x_train.reshape(-1, 784)
    x_test = x_test.reshape(-1, 784)
    x_train = x_train.astype("float32")
    x_test = x_test.astype("float32")
    x_train /= 255
    x_test /= 255
    print(x_train.shape[0], "train samples")
    print(x_test.shape[0], "test samples")

    # Build the model
    model = keras.Sequential(
        [
            keras.Input(shape=(784,)),
            layers.Dense(256),
            Antirectifier(),
            layers.Dense(256),
            Antirectifier(),
            layers.Dropout(0.5),
            layers.Dense(10),
        ]
    )

    # Compile the model
    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        optimizer=keras.optimizers.RMSprop(),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
    )

    # Train the model
    history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs,
                        validation_split=0.15)

    # Test the model
    test = model.evaluate(x_test, y_test)
    config = model.layers[1].get_config()
    return {"test_loss": test[0], "test_sparse_categorical_accuracy": test[1],
            "antirectifier_config_keys_count": len(config),
            "antirectifier_initializer_keys_count": len(config["initializer"]),
            **{k: v[-1] for k, v in history.history.items()}}

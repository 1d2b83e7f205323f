# Source: fchollet/deep-learning-with-python-notebooks, chapter07_deep-dive-keras.ipynb
#   (Deep Learning with Python, 3rd edition, F. Chollet & M. Watson), sections "Using
#   built-in training and evaluation loops", "Writing your own metrics", "The EarlyStopping
#   and ModelCheckpoint callbacks", "A TensorFlow training step function", "Low-level usage
#   of metrics", "Customizing fit() with TensorFlow" and "train_step() metrics handling with
#   TensorFlow", https://github.com/fchollet/deep-learning-with-python-notebooks
#   License: MIT.
# Changed: KERAS_BACKEND "jax" -> "tensorflow" (the cells used are the notebook's
#   `%%backend tensorflow` ones); synthetic_data.mnist_load_data() (1,024 train / 256 test
#   learnable digits) stands in for mnist.load_data(), so the reshapes' 60000/10000 become
#   the arrays' lengths and the validation split 10000 -> 256; epochs 3 -> 2 and 10 -> 4;
#   the LossHistory callback (it only draws matplotlib plots) and the TensorBoard cells are
#   left out; the code runs in main(), which returns each stage's final metrics.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F811, I001
import os

os.environ["KERAS_BACKEND"] = "tensorflow"

import keras
from keras import layers

from synthetic_data import mnist_load_data


def main():
    results = {}

    def get_mnist_model():
        inputs = keras.Input(shape=(28 * 28,))
        features = layers.Dense(512, activation="relu")(inputs)
        features = layers.Dropout(0.5)(features)
        outputs = layers.Dense(10, activation="softmax")(features)
        model = keras.Model(inputs, outputs)
        return model

    (images, labels), (test_images, test_labels) = mnist_load_data()
    images = images.reshape((len(images), 28 * 28)).astype("float32") / 255
    test_images = test_images.reshape((len(test_images), 28 * 28)).astype("float32") / 255
    train_images, val_images = images[256:], images[:256]
    train_labels, val_labels = labels[256:], labels[:256]

    model = get_mnist_model()
    model.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(
        train_images,
        train_labels,
        epochs=2,
        validation_data=(val_images, val_labels),
    )
    test_metrics = model.evaluate(test_images, test_labels)
    predictions = model.predict(test_images)
    results["builtin_test_loss"], results["builtin_test_accuracy"] = test_metrics
    results["builtin_prediction_max"] = float(predictions.max(axis=1).mean())

    from keras import ops

    class RootMeanSquaredError(keras.metrics.Metric):
        def __init__(self, name="rmse", **kwargs):
            super().__init__(name=name, **kwargs)
            self.mse_sum = self.add_weight(name="mse_sum", initializer="zeros")
            self.total_samples = self.add_weight(
                name="total_samples", initializer="zeros"
            )

        def update_state(self, y_true, y_pred, sample_weight=None):
            y_true = ops.one_hot(y_true, num_classes=ops.shape(y_pred)[1])
            mse = ops.sum(ops.square(y_true - y_pred))
            self.mse_sum.assign_add(mse)
            num_samples = ops.shape(y_pred)[0]
            self.total_samples.assign_add(num_samples)

        def result(self):
            return ops.sqrt(self.mse_sum / self.total_samples)

        def reset_state(self):
            self.mse_sum.assign(0.)
            self.total_samples.assign(0.)

    model = get_mnist_model()
    model.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy", RootMeanSquaredError()],
    )
    model.fit(
        train_images,
        train_labels,
        epochs=2,
        validation_data=(val_images, val_labels),
    )
    test_metrics = model.evaluate(test_images, test_labels)
    results.update(zip(["rmse_test_loss", "rmse_test_accuracy", "rmse_test_rmse"],
                       test_metrics))

    callbacks_list = [
        keras.callbacks.EarlyStopping(
            monitor="accuracy",
            patience=1,
        ),
        keras.callbacks.ModelCheckpoint(
            filepath="checkpoint_path.keras",
            monitor="val_loss",
            save_best_only=True,
        ),
    ]
    model = get_mnist_model()
    model.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    history = model.fit(
        train_images,
        train_labels,
        epochs=4,
        callbacks=callbacks_list,
        validation_data=(val_images, val_labels),
    )
    model = keras.models.load_model("checkpoint_path.keras")
    results["callbacks_epochs"] = len(history.history["loss"])
    results["callbacks_best_val_loss"] = min(history.history["val_loss"])
    results["reloaded_val_loss"] = model.evaluate(val_images, val_labels)[0]

    import tensorflow as tf

    model = get_mnist_model()
    loss_fn = keras.losses.SparseCategoricalCrossentropy()
    optimizer = keras.optimizers.Adam()

    def train_step(inputs, targets):
        with tf.GradientTape() as tape:
            predictions = model(inputs, training=True)
            loss = loss_fn(targets, predictions)
        gradients = tape.gradient(loss, model.trainable_weights)
        optimizer.apply(gradients, model.trainable_weights)
        return loss

    batch_size = 32
    inputs = train_images[:batch_size]
    targets = train_labels[:batch_size]
    loss = train_step(inputs, targets)
    results["train_step_loss"] = float(loss)

    from keras import ops

    metric = keras.metrics.SparseCategoricalAccuracy()
    targets = ops.array([0, 1, 2])
    predictions = ops.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    metric.update_state(targets, predictions)
    current_result = metric.result()
    print(f"result: {current_result:.2f}")
    results["low_level_accuracy"] = float(current_result)

    values = ops.array([0, 1, 2, 3, 4])
    mean_tracker = keras.metrics.Mean()
    for value in values:
        mean_tracker.update_state(value)
    print(f"Mean of values: {mean_tracker.result():.2f}")
    results["low_level_mean"] = float(mean_tracker.result())

    metric = keras.metrics.SparseCategoricalAccuracy()
    targets = ops.array([0, 1, 2])
    predictions = ops.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]])

    metric_variables = metric.variables
    metric_variables = metric.stateless_update_state(
        metric_variables, targets, predictions
    )
    current_result = metric.stateless_result(metric_variables)
    print(f"result: {current_result:.2f}")
    results["stateless_accuracy"] = float(current_result)

    metric_variables = metric.stateless_reset_state()

    loss_fn = keras.losses.SparseCategoricalCrossentropy()
    loss_tracker = keras.metrics.Mean(name="loss")

    class CustomModel(keras.Model):
        def train_step(self, data):
            inputs, targets = data
            with tf.GradientTape() as tape:
                predictions = self(inputs, training=True)
                loss = loss_fn(targets, predictions)
            gradients = tape.gradient(loss, self.trainable_weights)
            self.optimizer.apply(gradients, self.trainable_weights)

            loss_tracker.update_state(loss)
            return {"loss": loss_tracker.result()}

        @property
        def metrics(self):
            return [loss_tracker]

    def get_custom_model():
        inputs = keras.Input(shape=(28 * 28,))
        features = layers.Dense(512, activation="relu")(inputs)
        features = layers.Dropout(0.5)(features)
        outputs = layers.Dense(10, activation="softmax")(features)
        model = CustomModel(inputs, outputs)
        model.compile(optimizer=keras.optimizers.Adam())
        return model

    model = get_custom_model()
    history = model.fit(train_images, train_labels, epochs=2)
    results["custom_fit_loss"] = history.history["loss"][-1]

    class CustomModel(keras.Model):
        def train_step(self, data):
            inputs, targets = data
            with tf.GradientTape() as tape:
                predictions = self(inputs, training=True)
                loss = self.compute_loss(y=targets, y_pred=predictions)

            gradients = tape.gradient(loss, self.trainable_weights)
            self.optimizer.apply(gradients, self.trainable_weights)

            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(targets, predictions)

            return {m.name: m.result() for m in self.metrics}

    def get_custom_model():
        inputs = keras.Input(shape=(28 * 28,))
        features = layers.Dense(512, activation="relu")(inputs)
        features = layers.Dropout(0.5)(features)
        outputs = layers.Dense(10, activation="softmax")(features)
        model = CustomModel(inputs, outputs)
        model.compile(
            optimizer=keras.optimizers.Adam(),
            loss=keras.losses.SparseCategoricalCrossentropy(),
            metrics=[keras.metrics.SparseCategoricalAccuracy()],
        )
        return model

    model = get_custom_model()
    history = model.fit(train_images, train_labels, epochs=2)
    results.update({"compute_loss_fit_" + k: v[-1] for k, v in history.history.items()})
    return results

# Source: fchollet/deep-learning-with-python-notebooks,
#   second_edition/chapter07_working-with-keras.ipynb (Deep Learning with Python, 2nd
#   edition, F. Chollet), sections "Low-level usage of metrics", "A complete training and
#   evaluation loop" and "Make it fast with tf.function",
#   https://github.com/fchollet/deep-learning-with-python-notebooks  License: MIT.
# Changed: synthetic_data.mnist_load_data() (1,024 train / 256 test learnable digits) stands
#   in for mnist.load_data(), so the reshapes' 60000/10000 become the arrays' lengths and
#   the validation split 10000 -> 256; the code runs in main(), which returns the metrics
#   each loop printed last.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: I001
from tensorflow import keras
from tensorflow.keras import layers

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

    import tensorflow as tf

    metric = keras.metrics.SparseCategoricalAccuracy()
    targets = [0, 1, 2]
    predictions = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    metric.update_state(targets, predictions)
    current_result = metric.result()
    print(f"result: {current_result:.2f}")
    results["low_level_accuracy"] = float(current_result)

    values = [0, 1, 2, 3, 4]
    mean_tracker = keras.metrics.Mean()
    for value in values:
        mean_tracker.update_state(value)
    print(f"Mean of values: {mean_tracker.result():.2f}")
    results["low_level_mean"] = float(mean_tracker.result())

    model = get_mnist_model()

    loss_fn = keras.losses.SparseCategoricalCrossentropy()
    optimizer = keras.optimizers.RMSprop()
    metrics = [keras.metrics.SparseCategoricalAccuracy()]
    loss_tracking_metric = keras.metrics.Mean()

    def train_step(inputs, targets):
        with tf.GradientTape() as tape:
            predictions = model(inputs, training=True)
            loss = loss_fn(targets, predictions)
        gradients = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(gradients, model.trainable_weights))

        logs = {}
        for metric in metrics:
            metric.update_state(targets, predictions)
            logs[metric.name] = metric.result()

        loss_tracking_metric.update_state(loss)
        logs["loss"] = loss_tracking_metric.result()
        return logs

    def reset_metrics():
        for metric in metrics:
            metric.reset_state()
        loss_tracking_metric.reset_state()

    training_dataset = tf.data.Dataset.from_tensor_slices((train_images, train_labels))
    training_dataset = training_dataset.batch(32)
    epochs = 3
    for epoch in range(epochs):
        reset_metrics()
        for inputs_batch, targets_batch in training_dataset:
            logs = train_step(inputs_batch, targets_batch)
        print(f"Results at the end of epoch {epoch}")
        for key, value in logs.items():
            print(f"...{key}: {value:.4f}")
    results.update({"train_" + key: float(value) for key, value in logs.items()})

    def test_step(inputs, targets):
        predictions = model(inputs, training=False)
        loss = loss_fn(targets, predictions)

        logs = {}
        for metric in metrics:
            metric.update_state(targets, predictions)
            logs["val_" + metric.name] = metric.result()

        loss_tracking_metric.update_state(loss)
        logs["val_loss"] = loss_tracking_metric.result()
        return logs

    val_dataset = tf.data.Dataset.from_tensor_slices((val_images, val_labels))
    val_dataset = val_dataset.batch(32)
    reset_metrics()
    for inputs_batch, targets_batch in val_dataset:
        logs = test_step(inputs_batch, targets_batch)
    print("Evaluation results:")
    for key, value in logs.items():
        print(f"...{key}: {value:.4f}")
    results.update({"eager_" + key: float(value) for key, value in logs.items()})

    @tf.function
    def test_step(inputs, targets):
        predictions = model(inputs, training=False)
        loss = loss_fn(targets, predictions)

        logs = {}
        for metric in metrics:
            metric.update_state(targets, predictions)
            logs["val_" + metric.name] = metric.result()

        loss_tracking_metric.update_state(loss)
        logs["val_loss"] = loss_tracking_metric.result()
        return logs

    val_dataset = tf.data.Dataset.from_tensor_slices((val_images, val_labels))
    val_dataset = val_dataset.batch(32)
    reset_metrics()
    for inputs_batch, targets_batch in val_dataset:
        logs = test_step(inputs_batch, targets_batch)
    print("Evaluation results:")
    for key, value in logs.items():
        print(f"...{key}: {value:.4f}")
    results.update({"tf_function_" + key: float(value) for key, value in logs.items()})
    return results

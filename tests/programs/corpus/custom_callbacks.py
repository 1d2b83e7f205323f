# Source: keras-team/keras-io, guides/writing_your_own_callbacks.py, Keras 3 version
#   (guides/keras_core/writing_your_own_callbacks.py; "Writing your own callbacks", Rick Chao
#   and fchollet, last modified 2023/06/25),
#   https://keras.io/guides/writing_your_own_callbacks/  License: Apache-2.0.
# Changed: synthetic_data.mnist_load_data() stands in for keras.datasets.mnist.load_data()
#   (1,024 / 256 digits; the guide keeps the first 1,000 of each anyway); np.Inf -> np.inf
#   (NumPy 2 removed the alias); the code runs in main(), which keeps each fit's History,
#   counts the callback events and log keys the CustomCallback printed, and returns them
#   with the last losses, how many epochs EarlyStoppingAtMinLoss let run and the final
#   learning rate.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F841, I001, UP030, UP032
import contextlib
import io

import numpy as np
import keras

from synthetic_data import mnist_load_data


def main():
    # Define the Keras model to add callbacks to
    def get_model():
        model = keras.Sequential()
        model.add(keras.layers.Dense(1))
        model.compile(
            optimizer=keras.optimizers.RMSprop(learning_rate=0.1),
            loss="mean_squared_error",
            metrics=["mean_absolute_error"],
        )
        return model

    # Load example MNIST data and pre-process it
    (x_train, y_train), (x_test, y_test) = mnist_load_data()
    x_train = x_train.reshape(-1, 784).astype("float32") / 255.0
    x_test = x_test.reshape(-1, 784).astype("float32") / 255.0

    # Limit the data to 1000 samples
    x_train = x_train[:1000]
    y_train = y_train[:1000]
    x_test = x_test[:1000]
    y_test = y_test[:1000]

    class CustomCallback(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            keys = list(logs.keys())
            print("Starting training; got log keys: {}".format(keys))

        def on_train_end(self, logs=None):
            keys = list(logs.keys())
            print("Stop training; got log keys: {}".format(keys))

        def on_epoch_begin(self, epoch, logs=None):
            keys = list(logs.keys())
            print("Start epoch {} of training; got log keys: {}".format(epoch, keys))

        def on_epoch_end(self, epoch, logs=None):
            keys = list(logs.keys())
            print("End epoch {} of training; got log keys: {}".format(epoch, keys))

        def on_test_begin(self, logs=None):
            keys = list(logs.keys())
            print("Start testing; got log keys: {}".format(keys))

        def on_test_end(self, logs=None):
            keys = list(logs.keys())
            print("Stop testing; got log keys: {}".format(keys))

        def on_predict_begin(self, logs=None):
            keys = list(logs.keys())
            print("Start predicting; got log keys: {}".format(keys))

        def on_predict_end(self, logs=None):
            keys = list(logs.keys())
            print("Stop predicting; got log keys: {}".format(keys))

        def on_train_batch_begin(self, batch, logs=None):
            keys = list(logs.keys())
            print("...Training: start of batch {}; got log keys: {}".format(batch, keys))

        def on_train_batch_end(self, batch, logs=None):
            keys = list(logs.keys())
            print("...Training: end of batch {}; got log keys: {}".format(batch, keys))

        def on_test_batch_begin(self, batch, logs=None):
            keys = list(logs.keys())
            print("...Evaluating: start of batch {}; got log keys: {}".format(batch, keys))

        def on_test_batch_end(self, batch, logs=None):
            keys = list(logs.keys())
            print("...Evaluating: end of batch {}; got log keys: {}".format(batch, keys))

        def on_predict_batch_begin(self, batch, logs=None):
            keys = list(logs.keys())
            print("...Predicting: start of batch {}; got log keys: {}".format(batch, keys))

        def on_predict_batch_end(self, batch, logs=None):
            keys = list(logs.keys())
            print("...Predicting: end of batch {}; got log keys: {}".format(batch, keys))

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        model = get_model()
        model.fit(
            x_train,
            y_train,
            batch_size=128,
            epochs=1,
            verbose=0,
            validation_split=0.5,
            callbacks=[CustomCallback()],
        )

        res = model.evaluate(
            x_test, y_test, batch_size=128, verbose=0, callbacks=[CustomCallback()]
        )

        res = model.predict(x_test, batch_size=128, callbacks=[CustomCallback()])
    print(printed.getvalue())
    events = [line for line in printed.getvalue().splitlines() if "got log keys" in line]
    keys = [eval(line.split("got log keys: ")[1]) for line in events]
    predict_begin = [k for line, k in zip(events, keys) if line.startswith("Start predicting")]

    class LossAndErrorPrintingCallback(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            print(
                "Up to batch {}, the average loss is {:7.2f}.".format(batch, logs["loss"])
            )

        def on_test_batch_end(self, batch, logs=None):
            print(
                "Up to batch {}, the average loss is {:7.2f}.".format(batch, logs["loss"])
            )

        def on_epoch_end(self, epoch, logs=None):
            print(
                "The average loss for epoch {} is {:7.2f} "
                "and mean absolute error is {:7.2f}.".format(
                    epoch, logs["loss"], logs["mean_absolute_error"]
                )
            )

    model = get_model()
    printing_history = model.fit(
        x_train,
        y_train,
        batch_size=128,
        epochs=2,
        verbose=0,
        callbacks=[LossAndErrorPrintingCallback()],
    )

    printing_res = model.evaluate(
        x_test,
        y_test,
        batch_size=128,
        verbose=0,
        callbacks=[LossAndErrorPrintingCallback()],
    )

    class EarlyStoppingAtMinLoss(keras.callbacks.Callback):
        """Stop training when the loss is at its min, i.e. the loss stops decreasing.

        Arguments:
            patience: Number of epochs to wait after min has been hit. After this
            number of no improvement, training stops.
        """

        def __init__(self, patience=0):
            super().__init__()
            self.patience = patience
            # best_weights to store the weights at which the minimum loss occurs.
            self.best_weights = None

        def on_train_begin(self, logs=None):
            # The number of epoch it has waited when loss is no longer minimum.
            self.wait = 0
            # The epoch the training stops at.
            self.stopped_epoch = 0
            # Initialize the best as infinity.
            self.best = np.inf

        def on_epoch_end(self, epoch, logs=None):
            current = logs.get("loss")
            if np.less(current, self.best):
                self.best = current
                self.wait = 0
                # Record the best weights if current results is better (less).
                self.best_weights = self.model.get_weights()
            else:
                self.wait += 1
                if self.wait >= self.patience:
                    self.stopped_epoch = epoch
                    self.model.stop_training = True
                    print("Restoring model weights from the end of the best epoch.")
                    self.model.set_weights(self.best_weights)

        def on_train_end(self, logs=None):
            if self.stopped_epoch > 0:
                print(f"Epoch {self.stopped_epoch + 1}: early stopping")

    model = get_model()
    early_history = model.fit(
        x_train,
        y_train,
        batch_size=64,
        epochs=30,
        verbose=0,
        callbacks=[LossAndErrorPrintingCallback(), EarlyStoppingAtMinLoss()],
    )
    early_res = model.evaluate(x_test, y_test, verbose=0)

    class CustomLearningRateScheduler(keras.callbacks.Callback):
        """Learning rate scheduler which sets the learning rate according to schedule.

        Arguments:
            schedule: a function that takes an epoch index
                (integer, indexed from 0) and current learning rate
                as inputs and returns a new learning rate as output (float).
        """

        def __init__(self, schedule):
            super().__init__()
            self.schedule = schedule

        def on_epoch_begin(self, epoch, logs=None):
            if not hasattr(self.model.optimizer, "learning_rate"):
                raise ValueError('Optimizer must have a "learning_rate" attribute.')
            # Get the current learning rate from model's optimizer.
            lr = self.model.optimizer.learning_rate
            # Call schedule function to get the scheduled learning rate.
            scheduled_lr = self.schedule(epoch, lr)
            # Set the value back to the optimizer before this epoch starts
            self.model.optimizer.learning_rate = scheduled_lr
            print(f"\nEpoch {epoch}: Learning rate is {float(np.array(scheduled_lr))}.")

    LR_SCHEDULE = [
        # (epoch to start, learning rate) tuples
        (3, 0.05),
        (6, 0.01),
        (9, 0.005),
        (12, 0.001),
    ]

    def lr_schedule(epoch, lr):
        """Helper function to retrieve the scheduled learning rate based on epoch."""
        if epoch < LR_SCHEDULE[0][0] or epoch > LR_SCHEDULE[-1][0]:
            return lr
        for i in range(len(LR_SCHEDULE)):
            if epoch == LR_SCHEDULE[i][0]:
                return LR_SCHEDULE[i][1]
        return lr

    model = get_model()
    scheduled_history = model.fit(
        x_train,
        y_train,
        batch_size=64,
        epochs=15,
        verbose=0,
        callbacks=[
            LossAndErrorPrintingCallback(),
            CustomLearningRateScheduler(lr_schedule),
        ],
    )
    return {
        "callback_events_count": len(events),
        "callback_log_keys_count": sum(len(k) for k in keys),
        "callback_log_key_chars_count": sum(len(name) for k in keys for name in k),
        "predict_begin_log_keys_count": sum(len(k) for k in predict_begin),
        "custom_callback_predict_mean": float(np.mean(res)),
        "printing_loss": printing_history.history["loss"][-1],
        "printing_test_loss": printing_res[0],
        "printing_test_mae": printing_res[1],
        "early_stopping_epochs": len(early_history.history["loss"]),
        "early_stopping_best_loss": min(early_history.history["loss"]),
        "early_stopping_test_loss": early_res[0],
        "scheduled_loss": scheduled_history.history["loss"][-1],
        "scheduled_mae": scheduled_history.history["mean_absolute_error"][-1],
        "scheduled_final_lr": float(np.array(model.optimizer.learning_rate)),
    }
